package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

func ptr[T any](v T) *T { return &v }

func TestFirstHostRecordsLaterHostsAreCompared(t *testing.T) {
	dir := t.TempDir()
	first := Settings{TTL: TTL{ShortTTLSecs: ptr[int64](60)}}
	inForce, differ, err := Reconcile(dir, first)
	if err != nil || len(differ) != 0 || *inForce.TTL.ShortTTLSecs != 60 {
		t.Fatalf("first: %+v %v %v", inForce, differ, err)
	}
	second := Settings{Storage: Storage{Backend: ptr("bbolt")}, TTL: TTL{ShortTTLSecs: ptr[int64](120), MidTTLSecs: nil}}
	inForce, differ, err = Reconcile(dir, second)
	if err != nil {
		t.Fatal(err)
	}
	if *inForce.TTL.ShortTTLSecs != 60 || inForce.Storage.Backend != nil {
		t.Fatalf("the data dir's settings must stay in force: %+v", inForce)
	}
	if !slices.Equal(differ, []string{"storage.backend", "ttl.short_ttl_secs"}) {
		t.Fatalf("differ = %v", differ)
	}
	// A host that sets nothing disagrees with nothing.
	if _, differ, _ := Reconcile(dir, Settings{}); len(differ) != 0 {
		t.Fatalf("empty host: %v", differ)
	}
}

func TestConcurrentFirstHostsAgree(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([]int64, 6)
	for i := range got {
		wg.Go(func() {
			s, _, err := Reconcile(dir, Settings{TTL: TTL{ShortTTLSecs: ptr(int64(100 + i))}})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = *s.TTL.ShortTTLSecs
		})
	}
	testwait.Wait(t, &wg, "the concurrent Reconciles")
	for _, v := range got {
		if v != got[0] {
			t.Fatalf("hosts saw different settings in force: %v", got)
		}
	}
}

func TestEngineFileIsStrict(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, File), []byte("[ttl]\nshort = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "unknown key ttl.short") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := Reconcile(dir, Settings{}); err == nil {
		t.Fatal("a host must not start on a broken engine.toml")
	}
}

func TestApply(t *testing.T) {
	def := Tiers{Short: 6 * time.Hour, Mid: 7 * 24 * time.Hour, ShortExtend: time.Hour, MidExtend: 24 * time.Hour}
	s := Settings{TTL: TTL{ShortTTLSecs: ptr[int64](0), LongTTLSecs: ptr[int64](1 << 40), MidExtendSecs: ptr[int64](30)}}
	got := s.Apply(def)
	want := Tiers{Short: 0, Mid: def.Mid, Long: maxTTL, ShortExtend: time.Hour, MidExtend: 30 * time.Second}
	if got != want {
		t.Fatalf("Apply = %+v, want %+v", got, want)
	}
	if (Settings{}).Apply(def) != def {
		t.Fatal("empty settings must keep the defaults")
	}
}

// The PostgreSQL backend is chosen with its DSN; a DSN without it is refused.
func TestPostgresBackend(t *testing.T) {
	if err := (Settings{Storage: Storage{Backend: ptr("postgres"), DSN: ptr("host=db dbname=mem")}}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := Settings{Storage: Storage{Backend: ptr("bbolt"), DSN: ptr("host=db")}}.Validate()
	if err == nil || !strings.Contains(err.Error(), `[storage] dsn: only for backend = "postgres"`) {
		t.Fatalf("dsn with bbolt: %v", err)
	}
	if err := (Settings{Storage: Storage{Backend: ptr("bbolt")}}).Validate(); err != nil {
		t.Fatal(err)
	}
}
