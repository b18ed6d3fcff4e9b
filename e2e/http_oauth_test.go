package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// issuer is a local authorization server as far as a resource server sees
// one: a JWKS document, and tokens signed with its key.
type issuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	jwks := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":%q,"e":%q}]}`,
		base64.RawURLEncoding.EncodeToString(key.N.Bytes()), base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()))
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jwks)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) mint(t *testing.T, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(is.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const audience = "https://memory.test/mcp"

func TestHTTPOAuthResourceServer(t *testing.T) {
	e := newEnv(t)
	is := newIssuer(t)
	s := e.serve("--auth", "oauth", "--oauth-issuer", is.srv.URL, "--oauth-audience", audience,
		"--oauth-jwks", is.srv.URL+"/jwks", "--oauth-scope", "memory")
	base := strings.TrimSuffix(s.url, "/mcp")
	claims := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": is.srv.URL, "aud": audience, "sub": "dana", "scope": "memory other",
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
		if mod != nil {
			mod(c)
		}
		return c
	}

	// No token: 401 naming the protected-resource metadata, served at the
	// root and the path-qualified well-known paths.
	r := s.post(nil, initBody, nil)
	want := `Bearer resource_metadata="https://memory.test/.well-known/oauth-protected-resource/mcp", scope="memory"`
	if r.status != 401 || r.header.Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := testHTTP.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || doc["resource"] != audience || fmt.Sprint(doc["authorization_servers"]) != "["+is.srv.URL+"]" {
			t.Errorf("%s: %d %v", path, resp.StatusCode, doc)
		}
	}

	// A valid token works over a real session.
	c := s.connect(is.mint(t, claims(nil)), nil)
	c.ok("memory_store", map[string]any{"format": "json", "title": "d", "content": "dana's", "namespace": "dana"})

	// Another audience, another issuer, expired, badly signed: 401; a
	// missing scope: 403 insufficient_scope.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged := jwt.NewWithClaims(jwt.SigningMethodRS256, claims(nil))
	forged.Header["kid"] = "k1"
	forgedTok, _ := forged.SignedString(other)
	for name, tok := range map[string]string{
		"audience": is.mint(t, claims(func(c jwt.MapClaims) { c["aud"] = "https://elsewhere.test/mcp" })),
		"issuer":   is.mint(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" })),
		"expired":  is.mint(t, claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })),
		"no exp":   is.mint(t, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"forged":   forgedTok,
	} {
		r := s.post(nil, initBody, bearerHeader(tok))
		if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %q %s", name, r.status, r.header.Get("WWW-Authenticate"), r.body)
		}
	}
	r = s.post(nil, initBody, bearerHeader(is.mint(t, claims(func(c jwt.MapClaims) { c["scope"] = "other" }))))
	if r.status != 403 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) || !strings.Contains(r.header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("missing scope: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}

	// Claims narrow the grant: families and namespaces.
	narrow := s.connect(is.mint(t, claims(func(c jwt.MapClaims) {
		c["sub"] = "erin"
		c["ai_memory_families"] = []string{"core"}
		c["ai_memory_namespaces"] = []string{"team-e"}
	})), nil)
	narrow.ok("memory_store", map[string]any{"format": "json", "title": "e", "content": "erin's", "namespace": "team-e/notes"})
	narrow.fails("memory_store", map[string]any{"title": "e", "content": "x", "namespace": "dana"}, "outside the namespaces erin may use")
	narrow.fails("memory_capabilities", map[string]any{"family": "graph", "include_schema": true}, "its credential does not grant it")
}

// A grant claim that is present but malformed refuses the token (403
// naming the claim), audited; read loosely it would narrow nothing.
func TestHTTPOAuthMalformedGrantClaims(t *testing.T) {
	e := newEnv(t)
	is := newIssuer(t)
	s := e.serve("--auth", "oauth", "--oauth-issuer", is.srv.URL, "--oauth-audience", audience, "--oauth-jwks", is.srv.URL+"/jwks")
	token := func(claim string, value any) string {
		return is.mint(t, jwt.MapClaims{"iss": is.srv.URL, "aud": audience, "sub": "erin", "exp": time.Now().Add(time.Hour).Unix(), claim: value})
	}
	shapes := []struct {
		claim string
		value any
	}{
		{"ai_memory_families", "core"},
		{"ai_memory_families", []any{"core", 1}},
		{"ai_memory_families", map[string]any{"core": true}},
		{"ai_memory_families", []any{"no-such-family"}},
		{"ai_memory_namespaces", "team-e"},
		{"ai_memory_namespaces", []any{"team-e", 1}},
		{"ai_memory_namespaces", map[string]any{"team-e": true}},
		{"ai_memory_namespaces", []any{""}},
		{"ai_memory_namespaces", []any{"x y"}},
		{"ai_memory_namespaces", []any{"*", "team-e"}},
		{"ai_memory_namespaces", []any{}},
	}
	for _, sh := range shapes {
		if r := s.post(nil, initBody, bearerHeader(token(sh.claim, sh.value))); r.status != 403 || !strings.Contains(r.body, "claim "+sh.claim) {
			t.Errorf("%s = %#v: %d %s", sh.claim, sh.value, r.status, r.body)
		}
	}
	// Well formed, the same claims narrow the grant.
	c := s.connect(is.mint(t, jwt.MapClaims{"iss": is.srv.URL, "aud": audience, "sub": "erin", "exp": time.Now().Add(time.Hour).Unix(),
		"ai_memory_families": []any{"core"}, "ai_memory_namespaces": []any{"=team-e"}}), nil)
	c.ok("memory_store", map[string]any{"title": "e", "content": "erin's", "namespace": "team-e"})
	c.fails("memory_store", map[string]any{"title": "e", "content": "x", "namespace": "team-e/sub"}, "outside the namespaces erin may use")

	// Audited with the principal the token proved.
	eventually(t, 20*time.Second, "the refusals in the audit log", func() bool {
		out, _ := e.cli("audit", "list", "--json", "--limit", "100", "--agent-id", "erin")
		return strings.Count(out, "403 auth from 127.0.0.1: the access token is refused: claim ai_memory_") == len(shapes)
	})
}
