package engine

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// The listener keeps each connection's peer pid (SO_PEERCRED), for the
// caller check.
func TestPeerUIDIsOwnUser(t *testing.T) {
	sock := filepath.Join(shortDir(t)+"x", "p.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	// An own-user connection refused would leave Accept waiting for another.
	lis.(*net.UnixListener).SetDeadline(time.Now().Add(testwait.Deadline))
	go func() {
		if c, err := net.Dial("unix", sock); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := restrictToOwnUser(lis, quiet(t)).Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc, ok := c.(*peerConn)
	if !ok || pc.pid != os.Getpid() {
		t.Fatalf("accepted %T %+v; want a peerConn of pid %d", c, c, os.Getpid())
	}
}
