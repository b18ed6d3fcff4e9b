package boltstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// pausedWriter blocks its first Write until resume is closed, as a backup
// client that stops reading does.
type pausedWriter struct {
	paused, resume chan struct{}
	buf            bytes.Buffer
}

func (p *pausedWriter) Write(b []byte) (int, error) {
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
		<-p.resume
	}
	return p.buf.Write(b)
}

// TestBackupPausedLetsWritersGrowTheFile: a backup whose reader has stopped
// holds no read transaction, so writes that grow the file past its mapping
// (bbolt must remap, which waits for every open read) still commit; the
// copy is the state at its start and opens as a database.
func TestBackupPausedLetsWritersGrowTheFile(t *testing.T) {
	s, _ := openTest(t, Options{})
	seedMemories(t, s, 200)
	w := &pausedWriter{paused: make(chan struct{}), resume: make(chan struct{})}
	paused := w.paused
	var resume sync.Once
	release := func() { resume.Do(func() { close(w.resume) }) }
	t.Cleanup(release) // before the store closes (cleanups run last first): a failure must not hang on the held read
	done := make(chan error, 1)
	go func() {
		_, err := s.Backup(context.Background(), w)
		done <- err
	}()
	testwait.Recv(t, paused, "the backup to pause")

	wrote := growPastItsMapping(t, s)
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-done:
		t.Fatal("the backup ended while its reader was stopped")
	case <-time.After(testwait.Deadline):
		t.Fatalf("writes growing the file did not commit within %s while the backup was paused", testwait.Deadline)
	}
	release()
	if err := testwait.Recv(t, done, "the resumed backup to end"); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, w.buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := CheckCopy(copyPath); err != nil || n != 200 {
		t.Fatalf("the copy holds %d memories (%v), want the 200 at its start", n, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path()), ".backup-*")); len(left) != 0 {
		t.Fatalf("scratch files left beside the database: %v", left)
	}
}
