package httpfront

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// OAuthAuth is `--auth oauth`: this server is an OAuth resource server (MCP
// authorization spec) and nothing more. A request carries a JWT access
// token from the authorization server; it is verified against the issuer's
// JWKS (cached by keyfunc), its issuer and its audience (RFC 8707: a token
// minted for another resource is refused, never passed on), and the
// required scopes. A 401 names the protected-resource metadata.
type OAuthAuth struct {
	Keyfunc        jwt.Keyfunc
	Issuer         string
	Audience       string   // this server's resource URL
	Scopes         []string // every token must carry these
	PrincipalClaim string   // "sub" by default
	MetadataURL    string   // the protected-resource metadata document
	Now            func() time.Time
	// ExpandFamilies resolves the families claim's names as token create
	// does (profiles to families; an unknown name is an error). Nil keeps
	// the names as they are.
	ExpandFamilies func([]string) ([]string, error)
	// Cache, if set, remembers verified tokens, so a client's next request
	// with the same token costs a map lookup and an expiry check instead
	// of an RSA verification.
	Cache *VerifiedCache
}

// VerifiedCache maps tokens already verified to their claims and expiry.
type VerifiedCache struct {
	mu sync.Mutex
	m  map[string]verified
}

type verified struct {
	claims jwt.MapClaims
	exp    time.Time
}

// maxVerified bounds the cache; when full it starts afresh.
const maxVerified = 4096

// Claims that narrow a principal's grant, both optional; present, each must
// be a non-empty array of strings, or the token is refused (403).
const (
	FamiliesClaim   = "ai_memory_families"
	NamespacesClaim = "ai_memory_namespaces"
)

func (a OAuthAuth) challenge(extra string) string {
	c := fmt.Sprintf(`Bearer resource_metadata=%q`, a.MetadataURL)
	if len(a.Scopes) > 0 {
		c += fmt.Sprintf(`, scope=%q`, strings.Join(a.Scopes, " "))
	}
	if extra != "" {
		c += ", " + extra
	}
	return c
}

// Authenticate implements Authenticator.
func (a OAuthAuth) Authenticate(r *http.Request) (Principal, error) {
	tok, ok := bearer(r)
	if !ok {
		return Principal{}, &AuthError{Status: http.StatusUnauthorized, Challenge: a.challenge(""),
			Msg: "authentication required: send an OAuth access token (Authorization: Bearer …) from " + a.Issuer}
	}
	claims, err := a.Verify(tok)
	if err != nil {
		return Principal{}, &AuthError{Status: http.StatusUnauthorized, Challenge: a.challenge(`error="invalid_token"`), Msg: "the access token is not valid: " + err.Error()}
	}
	if missing := missingScopes(claims, a.Scopes); len(missing) > 0 {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Challenge: a.challenge(`error="insufficient_scope"`),
			Msg: "the access token lacks scope " + strings.Join(missing, " ")}
	}
	claim := a.PrincipalClaim
	if claim == "" {
		claim = "sub"
	}
	id, _ := claims[claim].(string)
	if err := record.ValidateAgentID("token claim "+claim, id); err != nil {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Msg: err.Error()}
	}
	p := Principal{ID: id, Attestation: AttestOAuth, Namespaces: []string{ownNamespace(id)}}
	// A grant claim that is present but malformed refuses the token: read
	// loosely, it would narrow nothing.
	if p.Families, err = a.families(claims); err != nil {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Principal: id, Msg: "the access token is refused: " + err.Error()}
	}
	if ns, present, err := claimList(claims, NamespacesClaim); err != nil {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Principal: id, Msg: "the access token is refused: " + err.Error()}
	} else if present {
		if err := apitoken.ValidateNamespaces("claim "+NamespacesClaim, ns); err != nil {
			return Principal{}, &AuthError{Status: http.StatusForbidden, Principal: id, Msg: "the access token is refused: " + err.Error()}
		}
		p.Namespaces = ns
	}
	return p, nil
}

// families is the families claim: absent, nil (the allowlist decides);
// present, family and profile names as for token create --families.
func (a OAuthAuth) families(claims jwt.MapClaims) ([]string, error) {
	names, present, err := claimList(claims, FamiliesClaim)
	if err != nil || !present {
		return nil, err
	}
	for i, n := range names {
		if n == "" || strings.ContainsFunc(n, unicode.IsSpace) {
			return nil, fmt.Errorf("claim %s[%d]: must be a family or profile name (got %s)", FamiliesClaim, i, quote(n))
		}
	}
	if a.ExpandFamilies == nil {
		return names, nil
	}
	fams, err := a.ExpandFamilies(names)
	if err != nil {
		return nil, fmt.Errorf("claim %s: %v", FamiliesClaim, err)
	}
	return fams, nil
}

// claimList is a grant claim: absent, present false; present, it must be a
// non-empty array of strings.
func claimList(claims jwt.MapClaims, name string) (list []string, present bool, err error) {
	v, present := claims[name]
	if !present {
		return nil, false, nil
	}
	l, ok := stringList(v)
	if !ok || len(l) == 0 {
		return nil, true, fmt.Errorf("claim %s: must be a non-empty array of strings (got %s)", name, jsonKind(v))
	}
	return l, true, nil
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		if len(x) == 0 {
			return "an empty array"
		}
		return "an array with a value that is not a string"
	}
	return fmt.Sprintf("%T", v)
}

// Verify checks a JWT's signature (JWKS), issuer, audience and expiry.
func (a OAuthAuth) Verify(tok string) (jwt.MapClaims, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	if c := a.Cache; c != nil {
		c.mu.Lock()
		v, ok := c.m[tok]
		c.mu.Unlock()
		if ok && now().Before(v.exp) {
			return v.claims, nil
		}
	}
	claims, err := a.verify(tok)
	if err != nil || a.Cache == nil {
		return claims, err
	}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		c := a.Cache
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxVerified {
			c.m = map[string]verified{}
		}
		c.m[tok] = verified{claims: claims, exp: exp.Time}
		c.mu.Unlock()
	}
	return claims, nil
}

func (a OAuthAuth) verify(tok string) (jwt.MapClaims, error) {
	opts := []jwt.ParserOption{
		jwt.WithIssuer(a.Issuer), jwt.WithAudience(a.Audience), jwt.WithExpirationRequired(),
		jwt.WithLeeway(30 * time.Second),
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}),
	}
	if a.Now != nil {
		opts = append(opts, jwt.WithTimeFunc(a.Now))
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(tok, claims, a.Keyfunc, opts...); err != nil {
		return nil, err
	}
	return claims, nil
}

func missingScopes(claims jwt.MapClaims, need []string) []string {
	var have []string
	if s, ok := claims["scope"].(string); ok {
		have = strings.Fields(s)
	} else if l, ok := stringList(claims["scp"]); ok {
		have = l
	}
	var missing []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			missing = append(missing, n)
		}
	}
	return missing
}

func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// ProtectedResourceMetadata is the RFC 9728 document, served at the root
// and the path-qualified well-known paths.
func ProtectedResourceMetadata(resource, issuer string, scopes []string) http.Handler {
	doc := map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{issuer},
		"bearer_methods_supported": []string{"header"},
	}
	if len(scopes) > 0 {
		doc["scopes_supported"] = scopes
	}
	b, _ := json.Marshal(doc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(b)
	})
}
