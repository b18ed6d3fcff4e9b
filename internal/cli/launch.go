package cli

import (
	"github.com/ai-memory/ai-memory/internal/supervisor/sandbox"
	"github.com/ai-memory/ai-memory/sdk"
)

// launchCmd is the plugin launcher the supervisor starts in place of
// each plugin (package sandbox): it checks the plugin's checksum, confines
// itself and execs the plugin. Its failures are logged in the form the
// host relays from a plugin's stderr.
type launchCmd struct {
	Policy string `arg:"" help:"The sandbox policy (JSON), as the supervisor writes it."`
}

func (c *launchCmd) Run() error {
	p, err := sandbox.ParsePolicy(c.Policy)
	if err == nil {
		err = sandbox.Exec(p) // returns only on failure
	}
	sdk.Logger().Error("plugin not started", "err", err.Error())
	return &exitError{code: 3, msg: "ai-memory plugin-exec: " + err.Error()}
}
