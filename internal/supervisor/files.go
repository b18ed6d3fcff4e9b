package supervisor

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const describeTimeout = 10 * time.Second

func hexDecode(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("want 64 hex digits, got %q", s)
	}
	return b, nil
}

// writeFileAtomic writes via a temp file and rename, so two hosts caching
// the same description never leave a torn file.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// otherMajor recognises go-plugin's handshake refusal of a plugin built for
// another protocol major and returns the plugin's version.
func otherMajor(err error) (string, bool) {
	const marker = "Plugin version: "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if !strings.Contains(msg, "incompatible API version") || i < 0 {
		return "", false
	}
	v, _, _ := strings.Cut(msg[i+len(marker):], ",")
	return v, true
}
