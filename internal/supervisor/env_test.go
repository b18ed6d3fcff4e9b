package supervisor

import (
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
)

// A plugin gets what the sdk and a runtime need, and what the operator
// names; the host's secrets and everything else stay behind.
func TestPluginEnvIsAllowListed(t *testing.T) {
	host := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_TIME=de_DE", "TZ=UTC",
		"OPENAI_API_KEY=sk-x", "AI_MEMORY_POSTGRES_DSN=postgres://u:pw@db/m", "AWS_SECRET_ACCESS_KEY=x",
		"HTTPS_PROXY=http://proxy", "TMPDIR=/tmp/host", sdk.EngineSocketEnv + "=/elsewhere", sdk.ProfileDirEnv + "=/tmp/prof"}
	got := pluginEnv(host, "/d/engine.sock", "/tmp/plugin-1", []string{"HTTPS_PROXY"})
	want := []string{sdk.EngineSocketEnv + "=/d/engine.sock", "TMPDIR=/tmp/plugin-1", "PATH=/usr/bin", "HOME=/home/u",
		"LANG=C.UTF-8", "LC_TIME=de_DE", "TZ=UTC", "HTTPS_PROXY=http://proxy", sdk.ProfileDirEnv + "=/tmp/prof"}
	if !slices.Equal(got, want) {
		t.Fatalf("pluginEnv =\n%v\nwant\n%v", got, want)
	}
}
