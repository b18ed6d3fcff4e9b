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
	p := Principal{ID: t.Principal, Families: t.Families, Namespaces: t.Namespaces, Attestation: AttestToken}
	if p.Namespaces == nil {
		p.Namespaces = []string{ownNamespace(t.Principal)}
	} else if err := apitoken.ValidateNamespaces("namespaces", t.Namespaces); err != nil {
		// A grant written by hand or by an older version: refused, never widened.
		return Principal{}, &AuthError{Status: http.StatusForbidden, Principal: t.Principal, Msg: fmt.Sprintf("API key %s of %s has a malformed grant (%v); create a new one with ai-memory token create", t.ID, quote(t.Principal), err)}
	}
	return p, nil
}

// ownNamespace is the namespace of a credential that names none: the
// principal's own (isolated by default).
func ownNamespace(principal string) string { return strings.TrimPrefix(principal, "spiffe://") }

// MTLSAuth binds the principal to a verified client certificate: its
// SPIFFE URI SAN if it has one, else its subject common name. A bearer
// token may come along (its families and namespaces then apply), but only
// one issued to the same principal; nothing in a request body or header can
// name another. A connection without a certificate falls back to Next (nil:
// refused).
type MTLSAuth struct {
	Next Authenticator
	// Subtree: a certificate without a token may also use the namespaces
	// below its own (serve --client-cert-scope subtree). By default it has
	// its own namespace only, so one workload's certificate never covers
	// another's whose SPIFFE path extends it.
	Subtree bool
}

// Authenticate implements Authenticator.
func (a MTLSAuth) Authenticate(r *http.Request) (Principal, error) {
	cert := clientCert(r)
	if cert == nil {
		if a.Next == nil {
			return Principal{}, &AuthError{Status: http.StatusUnauthorized, Msg: "a verified client certificate is required"}
		}
		return a.Next.Authenticate(r)
	}
	id, ns, err := certIdentity(cert)
	if err != nil {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Msg: err.Error()}
	}
	if _, ok := bearer(r); ok && a.Next != nil {
		p, err := a.Next.Authenticate(r)
		if err != nil {
			return Principal{}, err
		}
		if p.ID != id {
			return Principal{}, &AuthError{Status: http.StatusForbidden, Principal: id, Msg: fmt.Sprintf("the token is for %s, the client certificate for %s", quote(p.ID), quote(id))}
		}
		p.Attestation = AttestMTLS
		return p, nil
	}
	if !a.Subtree {
		ns = apitoken.ExactMark + ns
	}
	return Principal{ID: id, Namespaces: []string{ns}, Attestation: AttestMTLS}, nil
}

// clientCert is the request's verified client certificate; nil without one.
func clientCert(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	return r.TLS.VerifiedChains[0][0]
}

// certIdentity is a certificate's principal and namespace: the first
// spiffe:// URI SAN (namespace: trust domain and path, which it must have:
// a bare trust domain would cover every workload below it), else the
// subject common name (namespace: itself).
func certIdentity(c *x509.Certificate) (id, ns string, err error) {
	id, ns = c.Subject.CommonName, c.Subject.CommonName
	for _, u := range c.URIs {
		if u.Scheme != "spiffe" {
			continue
		}
		id = u.String()
		if u.Host == "" || strings.Trim(u.Path, "/") == "" || u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
			return "", "", fmt.Errorf("client certificate SPIFFE ID %s is refused: it must be spiffe://<trust domain>/<path>", quote(id))
		}
		ns = u.Host + u.Path
		break
	}
	if err := record.ValidateAgentID("client certificate identity", id); err != nil {
		return "", "", err
	}
	if err := record.ValidateNamespace("client certificate namespace", ns); err != nil {
		return "", "", fmt.Errorf("client certificate %s: %v", quote(id), err)
	}
	return id, ns, nil
}
