package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	sum := strings.Repeat("ab", 32)
	writeFile(t, filepath.Join(dir, "ai-memory-core"), "x")
	writeFile(t, filepath.Join(dir, ManifestName), "# comment\n"+sum+"  ai-memory-core\n"+sum+"  ai-memory-gone\n")
	got, err := Discover(dir, map[string]string{"/opt/x/third": strings.ToUpper(sum)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "ai-memory-core" || got[1].Name != "third" || got[1].Checksum != sum {
		t.Fatalf("Discover = %+v", got)
	}

	for _, bad := range []string{"nothex  ai-memory-core\n", sum + "  ../escape\n", sum + "\n"} {
		writeFile(t, filepath.Join(dir, ManifestName), bad)
		if _, err := Discover(dir, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("manifest %q: error = %v", bad, err)
		}
	}
	if _, err := Discover(t.TempDir(), map[string]string{"/x": "short"}); err == nil || !strings.Contains(err.Error(), "[plugins]") {
		t.Errorf("bad pin: %v", err)
	}
	if got, err := Discover(t.TempDir(), nil); err != nil || len(got) != 0 {
		t.Errorf("no manifest: %v %v", got, err)
	}
}

func TestVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p")
	writeFile(t, path, "genuine")
	sum, _ := fileSHA256(path)
	if err := Verify(Binary{Path: path, Checksum: sum}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "changed")
	if err := Verify(Binary{Path: path, Checksum: sum}); err == nil || !strings.Contains(err.Error(), sum) {
		t.Fatalf("changed binary: %v", err)
	}
}

// BenchmarkLaunch measures starting the core plugin and its first Describe,
// with and without go-plugin's AutoMTLS (needs AI_MEMORY_TEST_BIN, as
// `make bench` sets it).
func BenchmarkLaunch(b *testing.B) {
	bin := os.Getenv("AI_MEMORY_TEST_BIN")
	if bin == "" {
		b.Skip("AI_MEMORY_TEST_BIN is not set; run `make bench`")
	}
	path := filepath.Join(bin, "ai-memory-core")
	sum, err := fileSHA256(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, mtls := range []bool{false, true} {
		name := "plain"
		if mtls {
			name = "automtls"
		}
		b.Run(name, func(b *testing.B) {
			s := newSupervisor(Options{AutoMTLS: mtls, EngineSocket: "/nonexistent"}, nil)
			for b.Loop() {
				inst, err := s.launch(Binary{Name: "ai-memory-core", Path: path, Checksum: sum})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := inst.family.Describe(context.Background(), &aimemoryv1.DescribeRequest{}); err != nil {
					b.Fatal(err)
				}
				inst.proc.Kill()
			}
		})
	}
}
