package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PinFile keeps, in an engine's data dir, the last head of the log that
// engine appended or verified. A database writer cannot move it, so a log
// cut or rewritten below it fails verification.
const PinFile = "audit.pin"

type pinJSON struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// LoadPin reads dir's pin; the zero Head when there is none (or it is
// empty, as a crash may leave it: SavePin does not sync).
func LoadPin(dir string) (Head, error) {
	raw, err := os.ReadFile(filepath.Join(dir, PinFile))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(raw) == 0) {
		return Head{}, nil
	}
	if err != nil {
		return Head{}, fmt.Errorf("%s: %w", PinFile, err)
	}
	var p pinJSON
	if err := json.Unmarshal(raw, &p); err != nil || p.Seq == 0 || p.Hash == "" {
		return Head{}, fmt.Errorf("%s: not a pinned head (%d bytes): remove it only if you accept that truncation before now goes unnoticed", PinFile, len(raw))
	}
	return Head(p), nil
}

// SavePin replaces dir's pin with h: written to a temp file and renamed
// over it, so a reader sees the old pin or the new, never half. It is not
// synced (that would double an append's cost): the database commit it
// follows is, so a crash can only leave an older pin, still a record of
// the log, or an empty file, which reads as none.
func SavePin(dir string, h Head) error {
	raw, _ := json.Marshal(pinJSON(h))
	tmp, err := os.CreateTemp(dir, "."+PinFile+"-*")
	if err != nil {
		return fmt.Errorf("%s: %w", PinFile, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(raw, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("%s: %w", PinFile, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, PinFile)); err != nil {
		return fmt.Errorf("%s: %w", PinFile, err)
	}
	return nil
}
