package pgstore

import (
	"strings"
	"testing"
)

// A DSN is shown as user@host:port/database: never its password, in
// either form, nor a DSN that does not parse.
func TestRedactNeverShowsThePassword(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://team:s3cret@db.example:5433/memory?sslmode=require", "team@db.example:5433/memory"},
		{"host=db.example port=5432 user=team password=s3cret dbname=memory", "team@db.example:5432/memory"},
		{"postgres://team:s3cret@db.example:notaport/memory", "(a DSN that does not parse)"},
	} {
		got := Redact(tc.dsn)
		if got != tc.want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// The data dir's DSN names the database; the environment's is used when
// it is the only one or names the same database (it may add the password);
// two different databases are refused, and none is a clear error.
func TestResolveDSN(t *testing.T) {
	const file = "postgres://team@db.example/memory"
	const env = "postgres://team:s3cret@db.example/memory?sslmode=require"
	for _, tc := range []struct {
		file, env, want, source, err string
	}{
		{file, "", file, "engine.toml", ""},
		{"", env, env, EnvDSN, ""},
		{file, env, env, EnvDSN + " (agrees with engine.toml)", ""},
		{file, "postgres://team:s3cret@other.example/memory", "", "", "AI_MEMORY_POSTGRES_DSN names team@other.example:5432/memory but the data dir's [storage] dsn names team@db.example:5432/memory"},
		{"", "", "", "", `[storage] backend = "postgres" needs a DSN`},
		{"", "postgres://team:s3cret@db.example:x/memory", "", "", "AI_MEMORY_POSTGRES_DSN: does not parse"},
	} {
		dsn, source, err := ResolveDSN(tc.file, tc.env)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("ResolveDSN(%q, %q) error %v, want one containing %q (and no password)", tc.file, tc.env, err, tc.err)
			}
		case err != nil || dsn != tc.want || source != tc.source:
			t.Errorf("ResolveDSN(%q, %q) = %q, %q, %v; want %q, %q", tc.file, tc.env, dsn, source, err, tc.want, tc.source)
		}
	}
}

// A DSN's password is taken out in either form, everything else kept, and
// the result still names the same database.
func TestWithoutPassword(t *testing.T) {
	for _, tc := range []struct {
		dsn, want string
		had       bool
	}{
		{"postgres://team:s3cret@db.example:5433/memory?sslmode=require", "postgres://team@db.example:5433/memory?sslmode=require", true},
		{"postgresql://team@db.example/memory?password=s3cret&sslmode=disable", "postgresql://team@db.example/memory?sslmode=disable", true},
		{"postgres://team@db.example/memory", "postgres://team@db.example/memory", false},
		{"host=db.example user=team password=s3cret dbname=memory", "host=db.example user=team dbname=memory", true},
		{"host = /tmp/pg user=team  password = 'it\\'s s3cret' dbname=memory", "host=/tmp/pg user=team dbname=memory", true},
		{"host=db.example password=s3cr\\ et dbname=memory", "host=db.example dbname=memory", true},
		{"host=db.example dbname=memory", "host=db.example dbname=memory", false},
		{"host=db.example password='unterminated", "host=db.example password='unterminated", false},
	} {
		got, had := WithoutPassword(tc.dsn)
		if got != tc.want || had != tc.had || strings.Contains(got, "s3cret") && tc.had {
			t.Errorf("WithoutPassword(%q) = %q, %v; want %q, %v", tc.dsn, got, had, tc.want, tc.had)
		}
		if tc.had && Redact(got) != Redact(tc.dsn) {
			t.Errorf("%q: names %s without its password, %s with", tc.dsn, Redact(got), Redact(tc.dsn))
		}
	}
}
