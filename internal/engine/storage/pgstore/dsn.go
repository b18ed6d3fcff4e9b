package pgstore

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Redact is dsn as logs, errors and doctor show it: user@host:port/database,
// never the password or any other parameter (a value that does not parse
// is not echoed at all: it may be mostly password).
func Redact(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "(a DSN that does not parse)"
	}
	return target(cfg)
}

func target(cfg *pgconn.Config) string {
	return cfg.User + "@" + cfg.Host + ":" + strconv.Itoa(int(cfg.Port)) + "/" + cfg.Database
}

// ResolveDSN is the DSN an engine opens, from the data dir's engine.toml
// ([storage] dsn) and the engine's environment (EnvDSN). The data dir's
// setting names the database, so which host started the engine never
// changes it; the environment may carry the same DSN with the password
// (keeping it out of the file), and is then used. With only one set, that
// one is used. Both set but naming different databases is refused.
func ResolveDSN(fromSettings, fromEnv string) (dsn, source string, err error) {
	switch {
	case fromSettings == "" && fromEnv == "":
		return "", "", errors.New(`[storage] backend = "postgres" needs a DSN: set [storage] dsn in the data dir's engine.toml or ` + EnvDSN)
	case fromEnv == "":
		return fromSettings, "engine.toml", nil
	}
	env, err := pgconn.ParseConfig(fromEnv)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", EnvDSN, redactedErr(err))
	}
	if fromSettings == "" {
		return fromEnv, EnvDSN, nil
	}
	file, err := pgconn.ParseConfig(fromSettings)
	if err != nil {
		return "", "", fmt.Errorf("[storage] dsn: %w", redactedErr(err))
	}
	if target(env) != target(file) {
		return "", "", fmt.Errorf("%s names %s but the data dir's [storage] dsn names %s: the data dir's database wins; unset one or make them agree",
			EnvDSN, target(env), target(file))
	}
	return fromEnv, EnvDSN + " (agrees with engine.toml)", nil
}

// redactedErr is a DSN parse error without the DSN (pgconn's message
// quotes it, password masked; shorter and surer to quote nothing).
func redactedErr(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		if pe.Unwrap() != nil {
			return fmt.Errorf("does not parse: %s", truncate(pe.Unwrap().Error(), 64))
		}
		return errors.New("does not parse")
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// WithoutPassword is dsn with any password taken out (a URL's user info or
// password parameter, a key/value string's password keyword), and whether
// it had one: what may be written to a file the engine reads, while the
// password travels in its environment (EnvDSN). A dsn that does not parse
// is returned unchanged.
func WithoutPassword(dsn string) (string, bool) {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		had := false
		if _, ok := u.User.Password(); ok {
			u.User, had = url.User(u.User.Username()), true
		}
		if q := u.Query(); q.Has("password") {
			q.Del("password")
			u.RawQuery, had = q.Encode(), true
		}
		return u.String(), had
	}
	var kept []string
	had := false
	for rest := strings.TrimSpace(dsn); rest != ""; rest = strings.TrimLeft(rest, " \t\n\r") {
		key, value, tail, ok := nextSetting(rest)
		if !ok {
			return dsn, false
		}
		if key == "password" {
			had = true
		} else {
			kept = append(kept, key+"="+value)
		}
		rest = tail
	}
	return strings.Join(kept, " "), had
}

// nextSetting reads one `key = value` of a libpq key/value string, the
// value as written (quoted or not).
func nextSetting(s string) (key, value, rest string, ok bool) {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return "", "", "", false
	}
	key = strings.TrimSpace(s[:eq])
	s = strings.TrimLeft(s[eq+1:], " \t\n\r")
	end := 0
	if strings.HasPrefix(s, "'") {
		for end = 1; end < len(s) && s[end] != '\''; end++ {
			if s[end] == '\\' {
				end++
			}
		}
		if end >= len(s) {
			return "", "", "", false // unterminated quote
		}
		end++
	} else {
		for end < len(s) && !strings.ContainsRune(" \t\n\r", rune(s[end])) {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end, len(s))
	}
	return key, s[:end], s[end:], key != ""
}
