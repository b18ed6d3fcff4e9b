package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

var _ storage.ErrorTranslator = (*Store)(nil)

// TranslateError turns an error that means the server is unreachable
// (refused, shutting down, its connection cut) into storage.ErrUnavailable
// with a short cause, so a call during a database restart fails clearly
// instead of quoting socket paths. Others are returned unchanged.
func (s *Store) TranslateError(err error) error {
	if cause, ok := unreachable(err); ok {
		return fmt.Errorf("%w (%s)", storage.ErrUnavailable, truncate(cause, 64))
	}
	return err
}

func unreachable(err error) (string, bool) {
	if err == nil || errors.Is(err, storage.ErrUnavailable) {
		return "", false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01-03: shutdown, crash, starting up.
		if strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" {
			return pe.Message, true
		}
		return "", false
	}
	var ce *pgconn.ConnectError
	var oe *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT) && errors.As(err, &oe):
		return "connection refused", true
	case errors.As(err, &ce), errors.As(err, &oe):
		return "cannot connect", true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection lost", true
	case strings.Contains(err.Error(), "conn closed"), strings.Contains(err.Error(), "closed pool"):
		return "connection closed", true
	}
	return "", false
}
