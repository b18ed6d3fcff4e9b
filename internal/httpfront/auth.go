package httpfront

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Attestation levels, weakest first: how a principal was identified.
const (
	AttestNone  = ""
	AttestToken = "token"
	AttestOAuth = "oauth"
	AttestMTLS  = "mtls"
)

// bearer is the request's bearer token; ok is false without one.
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// TokenAuth is `--auth token`: API keys from the data dir's token file.
// Its challenge names no authorization server: in this mode nothing
// advertises OAuth, because clients that see OAuth metadata drop the
// static header they were configured with.
type TokenAuth struct {
	Store *apitoken.Store
}

const tokenChallenge = `Bearer realm="ai-memory"`

// Authenticate implements Authenticator.
func (a TokenAuth) Authenticate(r *http.Request) (Principal, error) {
	key, ok := bearer(r)
	if !ok {
		return Principal{}, &AuthError{Status: http.StatusUnauthorized, Challenge: tokenChallenge,
			Msg: "authentication required: send Authorization: Bearer <API key> (ai-memory token create)"}
	}
	t, err := a.Store.Lookup(key)
	if err != nil {
		return Principal{}, &AuthError{Status: http.StatusUnauthorized, Challenge: tokenChallenge + `, error="invalid_token"`, Msg: err.Error()}
	}
	return Principal{ID: t.Principal, Families: t.Families, Namespaces: namespaces(t.Namespaces, t.Principal), Attestation: AttestToken}, nil
}

// namespaces is a grant's namespace prefixes: none stored means the
// principal's own (isolated by default); "*" means every namespace.
func namespaces(granted []string, principal string) []string {
	switch {
	case len(granted) == 0:
		return []string{strings.TrimPrefix(principal, "spiffe://")}
	case len(granted) == 1 && granted[0] == "*":
		return []string{"*"} // the explicit grant of every namespace (caller.AllNamespaces)
	}
	return granted
}

// MTLSAuth binds the principal to a verified client certificate: its
// SPIFFE URI SAN if it has one, else its subject common name. A bearer
// token may come along (its families and namespaces then apply), but only
// one issued to the same principal; nothing in a request body or header can
// name another. A connection without a certificate falls back to Next (nil:
// refused).
type MTLSAuth struct {
	Next Authenticator
	// Namespaces for a certificate without a token (nil: its own, "*": all).
	Namespaces []string
}

// Authenticate implements Authenticator.
func (a MTLSAuth) Authenticate(r *http.Request) (Principal, error) {
	id := certPrincipal(r)
	if id == "" {
		if a.Next == nil {
			return Principal{}, &AuthError{Status: http.StatusUnauthorized, Msg: "a verified client certificate is required"}
		}
		return a.Next.Authenticate(r)
	}
	if err := record.ValidateAgentID("client certificate identity", id); err != nil {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Msg: err.Error()}
	}
	if _, ok := bearer(r); ok && a.Next != nil {
		p, err := a.Next.Authenticate(r)
		if err != nil {
			return Principal{}, err
		}
		if p.ID != id {
			return Principal{}, &AuthError{Status: http.StatusForbidden, Msg: fmt.Sprintf("the token is for %s, the client certificate for %s", quote(p.ID), quote(id))}
		}
		p.Attestation = AttestMTLS
		return p, nil
	}
	return Principal{ID: id, Namespaces: namespaces(a.Namespaces, id), Attestation: AttestMTLS}, nil
}

// certPrincipal is the identity of the request's verified client
// certificate; "" without one.
func certPrincipal(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return ""
	}
	return CertIdentity(r.TLS.VerifiedChains[0][0])
}

// CertIdentity is a certificate's principal: the first spiffe:// URI SAN,
// else the subject common name.
func CertIdentity(c *x509.Certificate) string {
	for _, u := range c.URIs {
		if u.Scheme == "spiffe" {
			return u.String()
		}
	}
	return c.Subject.CommonName
}
