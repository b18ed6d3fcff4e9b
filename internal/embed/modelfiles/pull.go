package modelfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// HuggingFace is where models are pulled from unless a mirror is given.
const HuggingFace = "https://huggingface.co"

// attempts is how often one file's download is tried, each resuming
// where the last stopped.
const attempts = 3

// PullOptions tune a pull; the zero value pulls from Hugging Face.
type PullOptions struct {
	// From is a mirror's base URL laid out like Hugging Face's
	// (FROM/<repo>/resolve/<revision>/<file>).
	From string
	// Progress is told the bytes done of all files, as they arrive.
	Progress func(done, total int64)
	Client   *http.Client
}

// Pull downloads s's files into the cache, each checked against its
// built-in SHA-256: a file that does not match is removed and the pull
// fails. An interrupted download resumes (HTTP Range) from the bytes kept
// in <file>.part, on the next attempt or the next pull.
func Pull(ctx context.Context, s Spec, o PullOptions) (Found, error) {
	root, err := CacheDir()
	if err != nil {
		return Found{}, err
	}
	base := strings.TrimRight(o.From, "/")
	if base == "" {
		base = HuggingFace
	}
	client := o.Client
	if client == nil {
		client = &http.Client{}
	}
	dest := filepath.Join(root, s.Name)
	var before int64 // the bytes of the files done
	for _, f := range s.Files {
		// progress is told how far into this file the download is.
		progress := func(n int64) {
			if o.Progress != nil {
				o.Progress(before+n, s.Size())
			}
		}
		dst := filepath.Join(dest, filepath.FromSlash(f.Path))
		before += f.Size
		if fi, err := os.Stat(dst); err == nil && fi.Size() == f.Size {
			progress(0) // verified when it got its name
			continue
		}
		before -= f.Size
		url := base + "/" + s.Repo + "/resolve/" + s.Revision + "/" + f.Path
		if err := fetch(ctx, client, url, dst, f, progress); err != nil {
			var nerr net.Error
			if errors.As(err, &nerr) || errors.Is(err, io.ErrUnexpectedEOF) {
				return Found{}, fmt.Errorf("%w\noffline? bring the files in by hand: %s", err, s.ByHand())
			}
			return Found{}, err
		}
		before += f.Size
	}
	return Found{Name: s.Name, Dir: dest, Source: "cache", Bytes: s.Size()}, nil
}

// fetch gets one file into dst via dst.part, resuming what is there.
func fetch(ctx context.Context, client *http.Client, url, dst string, f File, progress func(int64)) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	part := dst + ".part"
	var err error
	for range attempts {
		if err = fetchOnce(ctx, client, url, part, f, progress); err == nil || ctx.Err() != nil || errors.Is(err, errRefused) {
			break
		}
	}
	if err != nil {
		return err
	}
	return os.Rename(part, dst)
}

var errRefused = errors.New("refused")

// fetchOnce continues part from its current size and checks the whole.
func fetchOnce(ctx context.Context, client *http.Client, url, part string, f File, progress func(int64)) error {
	out, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	h := sha256.New()
	have, err := io.Copy(h, out) // the bytes kept from before count towards the sum
	if err != nil {
		return err
	}
	if have > f.Size {
		have, h = 0, sha256.New()
		if err := out.Truncate(0); err != nil {
			return err
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	if have < f.Size {
		n, err := download(ctx, client, url, out, h, have, f.Size, progress)
		if err != nil {
			return err
		}
		have = n
	} else {
		progress(have)
	}
	if have != f.Size {
		return fmt.Errorf("%s: %d bytes, want %d", url, have, f.Size)
	}
	if err := checkSum(f, hex.EncodeToString(h.Sum(nil))); err != nil {
		out.Close()
		os.Remove(part)
		return fmt.Errorf("%s: %w", url, errors.Join(err, errRefused))
	}
	return nil
}

// download appends the bytes from have on to out (from zero when the
// server does not honour the range) and returns the size reached.
func download(ctx context.Context, client *http.Client, url string, out *os.File, h hash.Hash, have, size int64, progress func(int64)) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return have, err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := client.Do(req)
	if err != nil {
		return have, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", have)):
		progress(have)
	case resp.StatusCode == http.StatusOK:
		have = 0 // the whole file again
		h.Reset()
		if err := out.Truncate(0); err != nil {
			return 0, err
		}
	default:
		return have, fmt.Errorf("%s: HTTP %s", url, resp.Status)
	}
	if _, err := out.Seek(have, io.SeekStart); err != nil {
		return have, err
	}
	w := io.MultiWriter(out, h, &progressWriter{at: have, report: progress})
	n, err := io.Copy(w, io.LimitReader(resp.Body, size-have+1))
	have += n
	if err != nil {
		return have, fmt.Errorf("%s: download cut off after %d of %d bytes: %w", url, have, size, err)
	}
	if have > size {
		return have, fmt.Errorf("%s: more than the expected %d bytes: %w", url, size, errRefused)
	}
	return have, nil
}

// progressWriter reports the position in the file as bytes arrive.
type progressWriter struct {
	at     int64
	report func(int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.at += int64(len(b))
	p.report(p.at)
	return len(b), nil
}
