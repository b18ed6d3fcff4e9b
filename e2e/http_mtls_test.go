package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	t    *testing.T
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
	dir  string
}

func newTestCA(t *testing.T) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ca := &testCA{t: t, cert: cert, key: key, pool: pool, dir: t.TempDir()}
	ca.write("ca.pem", "CERTIFICATE", der)
	return ca
}

func (ca *testCA) write(name, typ string, der []byte) string {
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return path
}

// issue signs a leaf; it returns the key pair and the PEM file paths.
func (ca *testCA) issue(name string, tmpl *x509.Certificate) (tls.Certificate, string, string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certPath, keyPath := ca.write(name+".pem", "CERTIFICATE", der), ca.write(name+"-key.pem", "EC PRIVATE KEY", kder)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		ca.t.Fatal(err)
	}
	return pair, certPath, keyPath
}

// With mTLS the certificate is the identity: a claimed agent_id changes
// nothing, a token of another principal is refused, and a family that
// requires attestation is refused over a token-only connection.
func TestHTTPMutualTLSBindsThePrincipal(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp]\nexpansion_interval = \"0\"\n[mcp.attestation]\ngraph = \"mtls\"\n")
	ca := newTestCA(t)
	_, srvCert, srvKey := ca.issue("server", &x509.Certificate{Subject: pkix.Name{CommonName: "server"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	spiffe, _ := url.Parse("spiffe://example.org/alice")
	client, _, _ := ca.issue("alice", &x509.Certificate{Subject: pkix.Name{CommonName: "ignored-cn"}, URIs: []*url.URL{spiffe},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	tokenKey := e.token("carol", "--namespace", "carol")
	s := e.serve("--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", filepath.Join(ca.dir, "ca.pem"))
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("url %s", s.url)
	}
	withCert := tlsClient(&tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{client}})
	tokenOnly := tlsClient(&tls.Config{RootCAs: ca.pool})

	// Token only: core works, graph needs an attested identity.
	carol := s.connect(tokenKey, tokenOnly)
	carol.ok("memory_store", map[string]any{"format": "json", "title": "c", "content": "carol's", "namespace": "carol"})
	carol.fails("memory_capabilities", map[string]any{"family": "graph", "include_schema": true}, "requires an attested identity (mtls), and this one is token")

	// The certificate: its SPIFFE id is the principal, whatever is claimed.
	alice := s.connect("", withCert)
	alice.ok("memory_store", map[string]any{"format": "json", "title": "a", "content": "alice's", "namespace": "example.org/alice", "agent_id": "mallory"})
	alice.fails("memory_store", map[string]any{"title": "m", "content": "x", "namespace": "mallory", "agent_id": "mallory"},
		"outside the namespaces spiffe://example.org/alice may use")
	alice.ok("memory_capabilities", map[string]any{"family": "graph", "include_schema": true})

	// A token of another principal on a certified connection is refused.
	if r := s.post(withCert, initBody, bearerHeader(tokenKey)); r.status != 403 || !strings.Contains(r.body, "client certificate for") {
		t.Errorf("cert + foreign token: %d %s", r.status, r.body)
	}

	var out string
	var rows []map[string]any
	eventually(t, 20*time.Second, "alice's three audit records", func() bool { // refusals are audited off the request path
		out, _ = e.cli("audit", "list", "--json", "--agent-id", "spiffe://example.org/alice")
		return json.Unmarshal([]byte(out), &rows) == nil && len(rows) == 3
	})
	// Newest first: the refused foreign token, with the principal the
	// certificate proved, then the grant, then the engine's refusal of the
	// store outside alice's namespace.
	if rows[0]["event_type"] != "http_refused" || rows[1]["event_type"] != "capability_expansion" || rows[1]["attestation"] != "mtls" || rows[1]["granted"] != true ||
		rows[2]["event_type"] != "access_denied" {
		t.Errorf("alice's audit records: %s", out)
	}
	out, _ = e.cli("audit", "list", "--json", "--agent-id", "carol")
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) == 0 || rows[0]["attestation"] != "token" || rows[0]["granted"] != false {
		t.Errorf("carol's denial in the audit log: %v %s", err, out)
	}
}

// A SPIFFE ID without a path is refused; a certificate's namespace is its
// own exactly, unless the operator allows the subtree.
func TestHTTPMutualTLSScope(t *testing.T) {
	e := newEnv(t)
	ca := newTestCA(t)
	_, srvCert, srvKey := ca.issue("server", &x509.Certificate{Subject: pkix.Name{CommonName: "server"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	client := func(name, id string) *http.Client {
		u, _ := url.Parse(id)
		cert, _, _ := ca.issue(name, &x509.Certificate{Subject: pkix.Name{CommonName: name}, URIs: []*url.URL{u},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return tlsClient(&tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{cert}})
	}
	domainOnly, web := client("domain", "spiffe://example.org"), client("web", "spiffe://example.org/web")
	serve := func(args ...string) *served {
		return e.serve(append([]string{"--tls-cert", srvCert, "--tls-key", srvKey, "--client-ca", filepath.Join(ca.dir, "ca.pem")}, args...)...)
	}

	s := serve()
	if r := s.post(domainOnly, initBody, nil); r.status != 403 || !strings.Contains(r.body, "is refused: it must be spiffe://") {
		t.Errorf("a SPIFFE ID without a path: %d %s", r.status, r.body)
	}
	c := s.connect("", web)
	c.ok("memory_store", map[string]any{"title": "w", "content": "web's own", "namespace": "example.org/web"})
	c.fails("memory_store", map[string]any{"title": "w", "content": "x", "namespace": "example.org/web/canary"}, "outside the namespaces spiffe://example.org/web may use")
	eventually(t, 20*time.Second, "the refusal in the audit log", func() bool {
		out, _ := e.cli("audit", "list", "--json")
		return strings.Contains(out, "403 auth from 127.0.0.1: client certificate SPIFFE ID")
	})
	// A second server on the same data dir, where the operator allows the subtree.
	serve("--client-cert-scope", "subtree").connect("", web).ok("memory_store", map[string]any{"title": "w", "content": "below web's own", "namespace": "example.org/web/canary"})
}
