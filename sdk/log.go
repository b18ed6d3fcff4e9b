package sdk

import (
	"io"
	"log/slog"
	"os"
	"strings"
)

// Logger is a plugin's log on stderr, in the JSON form go-plugin's host
// side reads (hclog's @level and @message keys). A plain text line is
// relayed only at debug level, which hosts do not show, so a plugin's
// warnings would vanish.
func Logger() *slog.Logger { return newLogger(os.Stderr) }

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: hclogKeys}))
}

func hclogKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Attr{} // the host stamps its own time
	case slog.LevelKey:
		return slog.String("@level", strings.ToLower(a.Value.String()))
	case slog.MessageKey:
		a.Key = "@message"
	}
	return a
}
