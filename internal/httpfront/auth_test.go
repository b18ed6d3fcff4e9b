package httpfront

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// testIssuer signs tokens that an OAuthAuth verifies against its JWKS.
type testIssuer struct {
	key  *rsa.PrivateKey
	auth OAuthAuth
}

func newTestIssuer(t testing.TB) *testIssuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":%q,"e":%q}]}`,
		base64.RawURLEncoding.EncodeToString(key.N.Bytes()), base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()))
	kf, err := keyfunc.NewJWKSetJSON([]byte(jwks))
	if err != nil {
		t.Fatal(err)
	}
	return &testIssuer{key: key, auth: OAuthAuth{Keyfunc: kf.Keyfunc, Issuer: "https://as.test", Audience: "https://memory.test/mcp"}}
}

// request is a request bearing a token with the standard claims plus extra.
func (is *testIssuer) request(t testing.TB, extra jwt.MapClaims) *http.Request {
	claims := jwt.MapClaims{"iss": "https://as.test", "aud": "https://memory.test/mcp", "sub": "dana", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		claims[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(is.key)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+s)
	return r
}

// A grant claim present but malformed refuses the token with 403 naming
// the claim; absent, the principal gets its own namespace; well formed,
// exactly what it says.
func TestOAuthGrantClaims(t *testing.T) {
	is := newTestIssuer(t)
	is.auth.ExpandFamilies = func(names []string) ([]string, error) {
		for _, n := range names {
			if n != "core" && n != "graph" {
				return nil, fmt.Errorf("unknown family %q", n)
			}
		}
		return names, nil
	}
	for _, tc := range []struct {
		claim string
		value any
	}{
		{FamiliesClaim, "core"},
		{FamiliesClaim, []any{"core", 7}},
		{FamiliesClaim, map[string]any{"core": true}},
		{FamiliesClaim, []any{}},
		{FamiliesClaim, []any{""}},
		{FamiliesClaim, []any{"core graph"}},
		{FamiliesClaim, []any{"nope"}},
		{FamiliesClaim, nil},
		{NamespacesClaim, "team-a"},
		{NamespacesClaim, []any{"team-a", 7}},
		{NamespacesClaim, map[string]any{"team-a": true}},
		{NamespacesClaim, []any{}},
		{NamespacesClaim, []any{""}},
		{NamespacesClaim, []any{"x y"}},
		{NamespacesClaim, []any{"*", "team-a"}},
		{NamespacesClaim, []any{"team-a/"}},
		{NamespacesClaim, nil},
	} {
		_, err := is.auth.Authenticate(is.request(t, jwt.MapClaims{tc.claim: tc.value}))
		var ae *AuthError
		if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || !strings.Contains(ae.Msg, "claim "+tc.claim) {
			t.Errorf("%s = %#v: %v, want 403 naming the claim", tc.claim, tc.value, err)
		}
	}
	for _, tc := range []struct {
		claims         jwt.MapClaims
		fams, wantNSes []string
	}{
		{jwt.MapClaims{}, nil, []string{"dana"}},
		{jwt.MapClaims{FamiliesClaim: []any{"core"}, NamespacesClaim: []any{"team-a", "=shared"}}, []string{"core"}, []string{"team-a", "=shared"}},
		{jwt.MapClaims{NamespacesClaim: []any{"*"}}, nil, []string{"*"}},
	} {
		p, err := is.auth.Authenticate(is.request(t, tc.claims))
		if err != nil || p.ID != "dana" || !slices.Equal(p.Families, tc.fams) || !slices.Equal(p.Namespaces, tc.wantNSes) {
			t.Errorf("%v: %+v %v", tc.claims, p, err)
		}
	}
}

// A certificate's principal is its SPIFFE ID, which must have a path; its
// default namespace is exactly its own unless the operator allows the
// subtree.
func TestMTLSIdentityAndScope(t *testing.T) {
	certified := func(cn string, uri string) *http.Request {
		c := &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
		if uri != "" {
			u, err := url.Parse(uri)
			if err != nil {
				t.Fatal(err)
			}
			c.URIs = []*url.URL{u}
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c}}}
		return r
	}
	for _, tc := range []struct {
		cn, uri string
		subtree bool
		id      string
		ns      []string
	}{
		{"ignored", "spiffe://example.org/ns/prod/web", false, "spiffe://example.org/ns/prod/web", []string{"=example.org/ns/prod/web"}},
		{"ignored", "spiffe://example.org/ns/prod/web", true, "spiffe://example.org/ns/prod/web", []string{"example.org/ns/prod/web"}},
		{"alice", "", false, "alice", []string{"=alice"}},
	} {
		p, err := MTLSAuth{Subtree: tc.subtree}.Authenticate(certified(tc.cn, tc.uri))
		if err != nil || p.ID != tc.id || !slices.Equal(p.Namespaces, tc.ns) || p.Attestation != AttestMTLS {
			t.Errorf("%s %s subtree=%v: %+v %v", tc.cn, tc.uri, tc.subtree, p, err)
		}
	}
	for _, uri := range []string{"spiffe://example.org", "spiffe://example.org/", "spiffe://example.org//x", "spiffe://example.org/a/../b", "spiffe://example.org:8443/x", "spiffe:///x"} {
		_, err := MTLSAuth{}.Authenticate(certified("cn", uri))
		var ae *AuthError
		if !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
			t.Errorf("%s: %v, want 403", uri, err)
		}
	}
}
