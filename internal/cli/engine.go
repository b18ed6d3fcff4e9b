package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/proctune"
)

type engineCmd struct {
	IdleTimeout time.Duration `help:"Exit after this long with no clients." default:"30s"`
}

func (c *engineCmd) Run(root *rootCmd) error {
	proctune.StartProfiling("engine")
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("proc", "engine", "pid", os.Getpid())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := engine.Run(ctx, engine.Options{DataDir: config.DataDir(root.DataDir), IdleTimeout: c.IdleTimeout, Logger: log, Model: localModel(log)})
	if errors.Is(err, engine.ErrAlreadyRunning) {
		return nil // another host's engine won the lock: it serves this data dir
	}
	return err
}
