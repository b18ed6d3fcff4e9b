// Package settings holds the engine-scoped settings of a data dir. Every
// host of a data dir shares one engine, so what changes the engine's
// behaviour (storage backend, expiry) must not depend on which host happened
// to start it: it lives in D/engine.toml, which the first host records from
// its config.toml and the engine reads at start. A host whose config
// disagrees is told which keys, and the data dir's values stay in force.
package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// File is the settings file's name in the data dir.
const File = "engine.toml"

// Backends the engine can run on.
var Backends = []string{"bbolt"}

// Settings are the engine-scoped sections of config.toml and engine.toml.
// Pointer fields tell "not set" from a zero value.
type Settings struct {
	Storage  Storage  `toml:"storage,omitempty"`
	TTL      TTL      `toml:"ttl,omitempty"`
	Webhooks Webhooks `toml:"webhooks,omitempty"`
}

// Webhooks configures the engine's webhook dispatcher.
type Webhooks struct {
	// Targets on loopback, or on private, link-local or shared (CGNAT)
	// addresses, are refused unless allowed here (default false).
	AllowLoopback *bool `toml:"allow_loopback,omitempty"`
	AllowPrivate  *bool `toml:"allow_private,omitempty"`
	// Attempts before a delivery is dead-lettered (1-20, default 8).
	MaxAttempts *int64 `toml:"max_attempts,omitempty"`
	// First retry delay; each later one doubles, up to 10 minutes, with
	// jitter (1-3600000 ms, default 1000).
	RetryBaseMs *int64 `toml:"retry_base_ms,omitempty"`
	// Per-attempt timeout (100-60000 ms, default 5000).
	TimeoutMs *int64 `toml:"timeout_ms,omitempty"`
}

// Storage chooses the backend.
type Storage struct {
	Backend *string `toml:"backend,omitempty"`
}

// TTL overrides the tiers' expiry (data-model §4); seconds, ≤ 0 = none.
type TTL struct {
	ShortTTLSecs    *int64 `toml:"short_ttl_secs,omitempty"`
	MidTTLSecs      *int64 `toml:"mid_ttl_secs,omitempty"`
	LongTTLSecs     *int64 `toml:"long_ttl_secs,omitempty"`
	ShortExtendSecs *int64 `toml:"short_extend_secs,omitempty"`
	MidExtendSecs   *int64 `toml:"mid_extend_secs,omitempty"`
}

// maxTTL caps a configured expiry (data-model §4: 10 years).
const maxTTL = 10 * 365 * 24 * time.Hour

// Validate checks every set value.
func (s Settings) Validate() error {
	if b := s.Storage.Backend; b != nil && !slices.Contains(Backends, *b) {
		return fmt.Errorf("[storage] backend: must be one of %s (got %.64q)", strings.Join(Backends, ", "), *b)
	}
	for _, e := range []struct {
		name   string
		v      *int64
		lo, hi int64
	}{{"max_attempts", s.Webhooks.MaxAttempts, 1, 20}, {"retry_base_ms", s.Webhooks.RetryBaseMs, 1, 3_600_000}, {"timeout_ms", s.Webhooks.TimeoutMs, 100, 60_000}} {
		if e.v != nil && (*e.v < e.lo || *e.v > e.hi) {
			return fmt.Errorf("[webhooks] %s: must be %d to %d (got %d)", e.name, e.lo, e.hi, *e.v)
		}
	}
	for _, e := range []struct {
		name string
		v    *int64
	}{{"short_extend_secs", s.TTL.ShortExtendSecs}, {"mid_extend_secs", s.TTL.MidExtendSecs}} {
		if e.v != nil && *e.v < 0 {
			return fmt.Errorf("[ttl] %s: must be 0 or more (got %d)", e.name, *e.v)
		}
	}
	return nil
}

// Tiers is the resolved expiry of each tier over defaults.
type Tiers struct {
	Short, Mid, Long       time.Duration // 0 = no expiry
	ShortExtend, MidExtend time.Duration
}

// Apply returns defaults with the set TTL values in place.
func (s Settings) Apply(defaults Tiers) Tiers {
	t := defaults
	set := func(dst *time.Duration, secs *int64) {
		if secs == nil {
			return
		}
		d := time.Duration(*secs) * time.Second
		switch {
		case *secs <= 0:
			d = 0
		case *secs > int64(maxTTL/time.Second):
			d = maxTTL
		}
		*dst = d
	}
	set(&t.Short, s.TTL.ShortTTLSecs)
	set(&t.Mid, s.TTL.MidTTLSecs)
	set(&t.Long, s.TTL.LongTTLSecs)
	set(&t.ShortExtend, s.TTL.ShortExtendSecs)
	set(&t.MidExtend, s.TTL.MidExtendSecs)
	return t
}

// Parse reads settings TOML strictly: an unknown section or key is an
// error naming it.
func Parse(data []byte) (Settings, error) {
	var s Settings
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&s)
	if err != nil {
		return Settings{}, err
	}
	if err := Undecoded(md); err != nil {
		return Settings{}, err
	}
	return s, s.Validate()
}

// Undecoded turns keys a decode did not use into an error naming them.
func Undecoded(md toml.MetaData) error {
	keys := md.Undecoded()
	if len(keys) == 0 {
		return nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return fmt.Errorf("unknown key %s", strings.Join(names, ", "))
}

// Load reads D/engine.toml; found is false (and the settings empty) when
// the data dir has none yet.
func Load(dataDir string) (s Settings, found bool, err error) {
	path := filepath.Join(dataDir, File)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, false, nil
	}
	if err != nil {
		return Settings{}, false, err
	}
	s, err = Parse(data)
	if err != nil {
		return Settings{}, true, fmt.Errorf("%s: %w", path, err)
	}
	return s, true, nil
}

// Reconcile binds a host's engine settings to the data dir. If the data
// dir has none yet, the host's are recorded there (race-free: whichever of
// two hosts links its file first wins). It returns the settings in force
// and the keys where the host's config disagrees with them.
func Reconcile(dataDir string, host Settings) (inForce Settings, differ []string, err error) {
	if err := host.Validate(); err != nil {
		return Settings{}, nil, err
	}
	cur, found, err := Load(dataDir)
	if err != nil {
		return Settings{}, nil, err
	}
	if !found {
		if err := record(dataDir, host); err != nil {
			return Settings{}, nil, err
		}
		if cur, _, err = Load(dataDir); err != nil { // another host may have won
			return Settings{}, nil, err
		}
	}
	return cur, Differ(host, cur), nil
}

func record(dataDir string, s Settings) error {
	var buf bytes.Buffer
	buf.WriteString("# Engine settings of this data dir, recorded by the first host that used it.\n" +
		"# Every host's engine reads these; edit here (and restart the engine) to change them.\n")
	if err := toml.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, ".engine.toml-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(buf.Bytes())
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), filepath.Join(dataDir, File)); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Differ names the keys the host sets to a value other than the one in force.
func Differ(host, inForce Settings) []string {
	var keys []string
	str := func(name string, h, f *string) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	num := func(name string, h, f *int64) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	str("storage.backend", host.Storage.Backend, inForce.Storage.Backend)
	num("ttl.short_ttl_secs", host.TTL.ShortTTLSecs, inForce.TTL.ShortTTLSecs)
	num("ttl.mid_ttl_secs", host.TTL.MidTTLSecs, inForce.TTL.MidTTLSecs)
	num("ttl.long_ttl_secs", host.TTL.LongTTLSecs, inForce.TTL.LongTTLSecs)
	num("ttl.short_extend_secs", host.TTL.ShortExtendSecs, inForce.TTL.ShortExtendSecs)
	num("ttl.mid_extend_secs", host.TTL.MidExtendSecs, inForce.TTL.MidExtendSecs)
	flag := func(name string, h, f *bool) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	flag("webhooks.allow_loopback", host.Webhooks.AllowLoopback, inForce.Webhooks.AllowLoopback)
	flag("webhooks.allow_private", host.Webhooks.AllowPrivate, inForce.Webhooks.AllowPrivate)
	num("webhooks.max_attempts", host.Webhooks.MaxAttempts, inForce.Webhooks.MaxAttempts)
	num("webhooks.retry_base_ms", host.Webhooks.RetryBaseMs, inForce.Webhooks.RetryBaseMs)
	num("webhooks.timeout_ms", host.Webhooks.TimeoutMs, inForce.Webhooks.TimeoutMs)
	return keys
}
