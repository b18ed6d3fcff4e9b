package wire

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Serve runs impl as a family plugin until its host goes away; it never
// returns normally. It changes no process setting beyond the two a plugin
// needs to end with its host (below).
func Serve(name string, impl aimemoryv1.FamilyServer) {
	go exitWhenOrphaned(os.Getppid())
	// A signal sent to the host's whole process group (Ctrl-C at a
	// terminal, a service manager stopping it) is the host's to act on: it
	// stops its plugins itself, and a plugin that died of the signal first
	// would be reported as a crash. The plugin still ends with its host.
	signal.Ignore(syscall.SIGTERM, os.Interrupt)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(impl),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, GRPCServerOptions()...)...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Name: name, Output: os.Stderr, Level: hclog.Warn}),
	})
}

// exitWhenOrphaned ends the plugin once its host is gone. The host also asks
// the kernel for a parent-death signal, but that follows the spawning thread;
// this check holds whatever happened to it.
func exitWhenOrphaned(parent int) {
	for range time.Tick(500 * time.Millisecond) {
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}
