package cli

import (
	"log/slog"
	"os"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
)

// engineSettings are cfg's engine settings as the data dir may record
// them: a password in [storage] dsn stays out of engine.toml (a file in
// the data dir, copied wherever the data dir goes) and reaches the engines
// this process starts in their environment (AI_MEMORY_POSTGRES_DSN, which
// plugins never get), unless that is set already. It warns when it does.
func engineSettings(cfg config.Config, cfgPath string, log *slog.Logger) settings.Settings {
	s := cfg.Settings
	if s.Storage.DSN == nil {
		return s
	}
	stripped, had := pgstore.WithoutPassword(*s.Storage.DSN)
	if !had {
		return s
	}
	if os.Getenv(pgstore.EnvDSN) == "" {
		os.Setenv(pgstore.EnvDSN, *s.Storage.DSN)
	}
	if log != nil {
		log.Warn("config.toml's [storage] dsn holds a password: it is kept out of the data dir's engine.toml and given to the engine in its environment; "+
			"better keep it out of config.toml too: ~/.pgpass, or the whole DSN in "+pgstore.EnvDSN, "config", cfgPath)
	}
	s.Storage.DSN = &stripped
	return s
}
