// Package settings holds the engine-scoped settings of a data dir. Every
// host of a data dir shares one engine, so what changes the engine's
// behaviour (storage backend, expiry) must not depend on which host happened
// to start it: it lives in D/engine.toml, which the first host records from
// its config.toml and the engine reads at start. A host whose config
// disagrees is told which keys, and the data dir's values stay in force.
package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ai-memory/ai-memory/internal/engine/governance"
	recordrules "github.com/ai-memory/ai-memory/sdk/record"
)

// File is the settings file's name in the data dir.
const File = "engine.toml"

// Backends the engine can run on.
var Backends = []string{"bbolt", "postgres"}

// Settings are the engine-scoped sections of config.toml and engine.toml.
// Pointer fields tell "not set" from a zero value.
type Settings struct {
	// ArchiveMaxDays > 0: the engine purges archive rows older than this
	// many days on its own schedule (the reference's key); 0 or unset: never.
	ArchiveMaxDays *int64     `toml:"archive_max_days,omitempty"`
	Storage        Storage    `toml:"storage,omitempty"`
	TTL            TTL        `toml:"ttl,omitempty"`
	Governance     Governance `toml:"governance,omitempty"`
	Models         Models     `toml:"models,omitempty"`
	Webhooks       Webhooks   `toml:"webhooks,omitempty"`
}

// Governance is who governs namespaces and how long approvals wait. The
// engine enforces it, so it is the data dir's, like every engine setting.
type Governance struct {
	// Operators may always set, clear and reassign namespace standards.
	Operators []string `toml:"operators,omitempty"`
	// Owners pins namespaces ("*" = global) to owners; other namespaces
	// are owned by whoever first sets their standard.
	Owners map[string]string `toml:"owners,omitempty"`
	// DefaultPolicy (a policy document, JSON) governs namespaces no
	// standard's policy governs; unset = every write allowed.
	DefaultPolicy *string `toml:"default_policy,omitempty"`
	// PendingTTLSecs: how long a queued write waits for a decision (default 7 days).
	PendingTTLSecs *int64 `toml:"pending_ttl_secs,omitempty"`
}

// Config is the governance settings as the engine applies them.
func (g Governance) Config() (*governance.Config, error) {
	c := &governance.Config{Operators: g.Operators, Owners: g.Owners}
	for i, op := range g.Operators {
		if err := recordrules.ValidateAgentID(fmt.Sprintf("[governance] operators[%d]", i), op); err != nil {
			return nil, err
		}
	}
	for ns, owner := range g.Owners {
		if ns != governance.Global {
			if err := recordrules.ValidateNamespace(fmt.Sprintf("[governance.owners] %.64q", ns), ns); err != nil {
				return nil, err
			}
		}
		if err := recordrules.ValidateAgentID(fmt.Sprintf("[governance.owners] %.64q", ns), owner); err != nil {
			return nil, err
		}
	}
	if g.DefaultPolicy != nil {
		p, err := governance.Parse([]byte(*g.DefaultPolicy))
		if err != nil {
			return nil, fmt.Errorf("[governance] default_policy: %w", err)
		}
		c.Default = &p
	}
	if g.PendingTTLSecs != nil {
		if *g.PendingTTLSecs <= 0 || *g.PendingTTLSecs > int64(maxTTL/time.Second) {
			return nil, fmt.Errorf("[governance] pending_ttl_secs: must be from 1 to %d (got %d)", int64(maxTTL/time.Second), *g.PendingTTLSecs)
		}
		c.PendingTTL = time.Duration(*g.PendingTTLSecs) * time.Second
	}
	return c, nil
}

// Models are the optional model endpoints, both spoken to over the
// OpenAI-compatible protocol (Ollama, llama.cpp, vLLM, LM Studio, hosted):
// /v1/embeddings and /v1/chat/completions under base_url.
type Models struct {
	Embeddings *Endpoint `toml:"embeddings,omitempty"`
	Chat       *Endpoint `toml:"chat,omitempty"`
}

// Endpoint is one model endpoint. The API key is never stored: api_key_env
// names the environment variable the engine reads it from.
type Endpoint struct {
	BaseURL   string `toml:"base_url"`
	Model     string `toml:"model"`
	APIKeyEnv string `toml:"api_key_env,omitempty"`
	// A request's deadline, as a Go duration ("10s"); default 10s.
	Timeout string `toml:"timeout,omitempty"`
	// Requests in flight at most; default 2.
	Concurrency int `toml:"concurrency,omitempty"`
	// Embeddings: requests per second a reindex sends at most; default 10.
	RatePerSec float64 `toml:"rate_per_sec,omitempty"`
	// Embeddings: the duplicate threshold for this model's cosine; default 0.9.
	DuplicateThreshold float64 `toml:"duplicate_threshold,omitempty"`
	// Embeddings: the cosine a hybrid recall's vector candidate needs; default 0.5.
	MinSimilarity float64 `toml:"min_similarity,omitempty"`
}

// TimeoutOrDefault is the endpoint's request deadline.
func (e *Endpoint) TimeoutOrDefault() time.Duration {
	if d, err := time.ParseDuration(e.Timeout); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}

func (e *Endpoint) validate(name string) error {
	if e == nil {
		return nil
	}
	u, err := url.Parse(e.BaseURL)
	switch {
	case e.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("[models.%s] base_url: must be an http or https URL (got %.64q)", name, e.BaseURL)
	case e.Model == "":
		return fmt.Errorf("[models.%s] model: must be set", name)
	case e.Concurrency < 0 || e.Concurrency > 64:
		return fmt.Errorf("[models.%s] concurrency: must be from 1 to 64 (got %d)", name, e.Concurrency)
	case e.RatePerSec < 0 || e.DuplicateThreshold < 0 || e.DuplicateThreshold > 1 || e.MinSimilarity < 0 || e.MinSimilarity > 1:
		return fmt.Errorf("[models.%s] rate_per_sec must be 0 or more, duplicate_threshold and min_similarity from 0 to 1", name)
	}
	if e.Timeout != "" {
		if d, err := time.ParseDuration(e.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("[models.%s] timeout: must be a positive duration such as \"10s\" (got %.64q)", name, e.Timeout)
		}
	}
	return nil

}

// Webhooks configures the engine's webhook dispatcher.
type Webhooks struct {
	// Targets on loopback, or on private, link-local or shared (CGNAT)
	// addresses, are refused unless allowed here (default false).
	AllowLoopback *bool `toml:"allow_loopback,omitempty"`
	AllowPrivate  *bool `toml:"allow_private,omitempty"`
	// Attempts before a delivery is dead-lettered (1-20, default 8).
	MaxAttempts *int64 `toml:"max_attempts,omitempty"`
	// First retry delay; each later one doubles, up to 10 minutes, with
	// jitter (1-3600000 ms, default 1000).
	RetryBaseMs *int64 `toml:"retry_base_ms,omitempty"`
	// Per-attempt timeout (100-60000 ms, default 5000).
	TimeoutMs *int64 `toml:"timeout_ms,omitempty"`
}

// Storage chooses the backend.
type Storage struct {
	Backend *string `toml:"backend,omitempty"`
	// DSN is the PostgreSQL database of backend "postgres" (the engine may
	// take it, password included, from AI_MEMORY_POSTGRES_DSN instead).
	DSN *string `toml:"dsn,omitempty"`
}

// Postgres: the data dir's engine runs on PostgreSQL.
func (s Storage) Postgres() bool { return s.Backend != nil && *s.Backend == "postgres" }

// TTL overrides the tiers' expiry (data-model §4); seconds, ≤ 0 = none.
type TTL struct {
	ShortTTLSecs    *int64 `toml:"short_ttl_secs,omitempty"`
	MidTTLSecs      *int64 `toml:"mid_ttl_secs,omitempty"`
	LongTTLSecs     *int64 `toml:"long_ttl_secs,omitempty"`
	ShortExtendSecs *int64 `toml:"short_extend_secs,omitempty"`
	MidExtendSecs   *int64 `toml:"mid_extend_secs,omitempty"`
}

// maxArchiveDays bounds archive_max_days (100 years).
const maxArchiveDays = 100 * 365

// ArchiveMaxAge is how old an archive row may grow before the engine
// purges it; 0 = never.
func (s Settings) ArchiveMaxAge() time.Duration {
	if s.ArchiveMaxDays == nil || *s.ArchiveMaxDays <= 0 {
		return 0
	}
	return time.Duration(*s.ArchiveMaxDays) * 24 * time.Hour
}

// maxTTL caps a configured expiry (data-model §4: 10 years).
const maxTTL = 10 * 365 * 24 * time.Hour

// Validate checks every set value.
func (s Settings) Validate() error {
	if s.Storage.DSN != nil && !s.Storage.Postgres() {
		return errors.New(`[storage] dsn: only for backend = "postgres"`)
	}
	if b := s.Storage.Backend; b != nil && !slices.Contains(Backends, *b) {
		return fmt.Errorf("[storage] backend: must be one of %s (got %.64q)", strings.Join(Backends, ", "), *b)
	}
	if err := s.Models.Embeddings.validate("embeddings"); err != nil {
		return err
	}
	if err := s.Models.Chat.validate("chat"); err != nil {
		return err
	}
	if d := s.ArchiveMaxDays; d != nil && (*d < 0 || *d > maxArchiveDays) {
		return fmt.Errorf("archive_max_days: must be from 0 (never purge) to %d (got %d)", maxArchiveDays, *d)
	}
	for _, e := range []struct {
		name   string
		v      *int64
		lo, hi int64
	}{{"max_attempts", s.Webhooks.MaxAttempts, 1, 20}, {"retry_base_ms", s.Webhooks.RetryBaseMs, 1, 3_600_000}, {"timeout_ms", s.Webhooks.TimeoutMs, 100, 60_000}} {
		if e.v != nil && (*e.v < e.lo || *e.v > e.hi) {
			return fmt.Errorf("[webhooks] %s: must be %d to %d (got %d)", e.name, e.lo, e.hi, *e.v)
		}
	}
	for _, e := range []struct {
		name string
		v    *int64
	}{{"short_extend_secs", s.TTL.ShortExtendSecs}, {"mid_extend_secs", s.TTL.MidExtendSecs}} {
		if e.v != nil && *e.v < 0 {
			return fmt.Errorf("[ttl] %s: must be 0 or more (got %d)", e.name, *e.v)
		}
	}
	if _, err := s.Governance.Config(); err != nil {
		return err
	}
	return nil
}

// Tiers is the resolved expiry of each tier over defaults.
type Tiers struct {
	Short, Mid, Long       time.Duration // 0 = no expiry
	ShortExtend, MidExtend time.Duration
}

// Apply returns defaults with the set TTL values in place.
func (s Settings) Apply(defaults Tiers) Tiers {
	t := defaults
	set := func(dst *time.Duration, secs *int64) {
		if secs == nil {
			return
		}
		d := time.Duration(*secs) * time.Second
		switch {
		case *secs <= 0:
			d = 0
		case *secs > int64(maxTTL/time.Second):
			d = maxTTL
		}
		*dst = d
	}
	set(&t.Short, s.TTL.ShortTTLSecs)
	set(&t.Mid, s.TTL.MidTTLSecs)
	set(&t.Long, s.TTL.LongTTLSecs)
	set(&t.ShortExtend, s.TTL.ShortExtendSecs)
	set(&t.MidExtend, s.TTL.MidExtendSecs)
	return t
}

// Parse reads settings TOML strictly: an unknown section or key is an
// error naming it.
func Parse(data []byte) (Settings, error) {
	var s Settings
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&s)
	if err != nil {
		return Settings{}, err
	}
	if err := Undecoded(md); err != nil {
		return Settings{}, err
	}
	return s, s.Validate()
}

// Undecoded turns keys a decode did not use into an error naming them.
func Undecoded(md toml.MetaData) error {
	keys := md.Undecoded()
	if len(keys) == 0 {
		return nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return fmt.Errorf("unknown key %s", strings.Join(names, ", "))
}

// Load reads D/engine.toml; found is false (and the settings empty) when
// the data dir has none yet.
func Load(dataDir string) (s Settings, found bool, err error) {
	path := filepath.Join(dataDir, File)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, false, nil
	}
	if err != nil {
		return Settings{}, false, err
	}
	s, err = Parse(data)
	if err != nil {
		return Settings{}, true, fmt.Errorf("%s: %w", path, err)
	}
	return s, true, nil
}

// Reconcile binds a host's engine settings to the data dir. If the data
// dir has none yet, the host's are recorded there (race-free: whichever of
// two hosts links its file first wins). It returns the settings in force
// and the keys where the host's config disagrees with them.
func Reconcile(dataDir string, host Settings) (inForce Settings, differ []string, err error) {
	if err := host.Validate(); err != nil {
		return Settings{}, nil, err
	}
	cur, found, err := Load(dataDir)
	if err != nil {
		return Settings{}, nil, err
	}
	if !found {
		if err := record(dataDir, host); err != nil {
			return Settings{}, nil, err
		}
		if cur, _, err = Load(dataDir); err != nil { // another host may have won
			return Settings{}, nil, err
		}
	}
	return cur, Differ(host, cur), nil
}

func record(dataDir string, s Settings) error {
	var buf bytes.Buffer
	buf.WriteString("# Engine settings of this data dir, recorded by the first host that used it.\n" +
		"# Every host's engine reads these; edit here (and restart the engine) to change them.\n")
	if err := toml.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, ".engine.toml-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(buf.Bytes())
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), filepath.Join(dataDir, File)); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Differ names the keys the host sets to a value other than the one in force.
func Differ(host, inForce Settings) []string {
	var keys []string
	str := func(name string, h, f *string) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	num := func(name string, h, f *int64) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	num("archive_max_days", host.ArchiveMaxDays, inForce.ArchiveMaxDays)
	str("storage.backend", host.Storage.Backend, inForce.Storage.Backend)
	str("storage.dsn", host.Storage.DSN, inForce.Storage.DSN)
	num("ttl.short_ttl_secs", host.TTL.ShortTTLSecs, inForce.TTL.ShortTTLSecs)
	num("ttl.mid_ttl_secs", host.TTL.MidTTLSecs, inForce.TTL.MidTTLSecs)
	num("ttl.long_ttl_secs", host.TTL.LongTTLSecs, inForce.TTL.LongTTLSecs)
	num("ttl.short_extend_secs", host.TTL.ShortExtendSecs, inForce.TTL.ShortExtendSecs)
	num("ttl.mid_extend_secs", host.TTL.MidExtendSecs, inForce.TTL.MidExtendSecs)
	hg, fg := host.Governance, inForce.Governance
	if len(hg.Operators) > 0 && !slices.Equal(hg.Operators, fg.Operators) {
		keys = append(keys, "governance.operators")
	}
	if len(hg.Owners) > 0 && !maps.Equal(hg.Owners, fg.Owners) {
		keys = append(keys, "governance.owners")
	}
	str("governance.default_policy", hg.DefaultPolicy, fg.DefaultPolicy)
	num("governance.pending_ttl_secs", hg.PendingTTLSecs, fg.PendingTTLSecs)
	flag := func(name string, h, f *bool) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	endpoint := func(name string, h, f *Endpoint) {
		if h != nil && (f == nil || *h != *f) {
			keys = append(keys, name)
		}
	}
	endpoint("models.embeddings", host.Models.Embeddings, inForce.Models.Embeddings)
	endpoint("models.chat", host.Models.Chat, inForce.Models.Chat)
	flag("webhooks.allow_loopback", host.Webhooks.AllowLoopback, inForce.Webhooks.AllowLoopback)
	flag("webhooks.allow_private", host.Webhooks.AllowPrivate, inForce.Webhooks.AllowPrivate)
	num("webhooks.max_attempts", host.Webhooks.MaxAttempts, inForce.Webhooks.MaxAttempts)
	num("webhooks.retry_base_ms", host.Webhooks.RetryBaseMs, inForce.Webhooks.RetryBaseMs)
	num("webhooks.timeout_ms", host.Webhooks.TimeoutMs, inForce.Webhooks.TimeoutMs)
	return keys
}
