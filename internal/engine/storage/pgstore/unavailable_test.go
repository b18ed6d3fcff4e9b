package pgstore

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Errors meaning the server is gone become a short ErrUnavailable; the
// server's other errors pass unchanged.
func TestTranslateError(t *testing.T) {
	s := &Store{}
	for _, tc := range []struct {
		err         error
		unavailable bool
		cause       string
	}{
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true, "administrator command"},
		{fmt.Errorf("commit: %w", &pgconn.PgError{Code: "08006", Message: "connection failure"}), true, "connection failure"},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, "connection lost"},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key"}, false, ""},
		{storage.ErrNotFound, false, ""},
	} {
		got := s.TranslateError(tc.err)
		if errors.Is(got, storage.ErrUnavailable) != tc.unavailable || !strings.Contains(got.Error(), tc.cause) {
			t.Errorf("TranslateError(%v) = %v", tc.err, got)
		}
		if !tc.unavailable && got != tc.err {
			t.Errorf("TranslateError(%v) changed it to %v", tc.err, got)
		}
	}
}
