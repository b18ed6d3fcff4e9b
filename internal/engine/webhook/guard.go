// Package webhook delivers the engine's durable events to webhook
// subscriptions: a dispatcher that fans logged events out to a durable
// queue and posts them, signed, with retries on an injectable clock and a
// dead-letter list; the SSRF guard that decides which targets it may
// reach; and the sealing of subscription secrets at rest.
package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// MaxURLBytes bounds a subscription URL.
const MaxURLBytes = 2048

// Resolver looks host names up (net.DefaultResolver; tests inject one).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc opens a connection (net.Dialer.DialContext; tests inject one).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Guard decides which webhook targets may be reached: public addresses
// always; loopback only with AllowLoopback; private, link-local and
// shared (CGNAT) ranges only with AllowPrivate; unspecified, multicast and
// broadcast never. An IPv6 transition address (IPv4-mapped, -compatible
// or -translated, NAT64, 6to4, Teredo) is classed by the IPv4 address it
// carries; a local-use NAT64 one (64:ff9b:1::/48) as private. It is applied to the URL when a subscription is made
// and to every address a delivery connects to, after resolution, so a
// name that resolves (or re-resolves) inward is refused too.
type Guard struct {
	AllowLoopback, AllowPrivate bool
	Resolver                    Resolver // nil: net.DefaultResolver
}

type class int

const (
	public class = iota
	loopback
	private
	never
)

func classify(ip netip.Addr) class {
	ip = ip.Unmap() // ::ffff:0:0/96, IPv4-mapped
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}), thisNetwork.Contains(ip):
		return never
	case ip.IsLoopback():
		return loopback
	}
	if v4, ok := embedded(ip); ok {
		return classify(v4) // a transition address goes where the IPv4 address it carries is
	}
	switch {
	case ip.IsPrivate(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), cgnat.Contains(ip), siteLocal.Contains(ip),
		nat64Local.Contains(ip): // its IPv4 address sits where the operator's prefix length says: not knowable, not public
		return private
	}
	return public
}

var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	siteLocal   = netip.MustParsePrefix("fec0::/10")      // deprecated site-local
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64 (RFC 8215)

	// IPv6 prefixes whose addresses carry an IPv4 address in their last
	// 32 bits: NAT64's well-known prefix (RFC 6052), IPv4-compatible
	// (::/96, deprecated) and IPv4-translated (::ffff:0:0:0/96, SIIT).
	lastFour  = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("::/96"), netip.MustParsePrefix("::ffff:0:0:0/96")}
	sixToFour = netip.MustParsePrefix("2002::/16") // 6to4 (RFC 3056): 2002:AABB:CCDD::
	teredo    = netip.MustParsePrefix("2001::/32") // Teredo (RFC 4380): the client's address, inverted, last
)

// embedded is the IPv4 address an IPv6 transition address carries, where
// traffic to it ends up; ok is false for an address that carries none.
func embedded(ip netip.Addr) (v4 netip.Addr, ok bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	for _, p := range lastFour {
		if p.Contains(ip) {
			return netip.AddrFrom4([4]byte(b[12:16])), true
		}
	}
	switch {
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case teredo.Contains(ip):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// checkAddr refuses an address the guard does not allow.
func (g Guard) checkAddr(ip netip.Addr) error {
	switch classify(ip) {
	case never:
		return fmt.Errorf("target %s is an unspecified, multicast or broadcast address", ip)
	case loopback:
		if !g.AllowLoopback {
			return fmt.Errorf("target %s is a loopback address (allowed only with [webhooks] allow_loopback)", ip)
		}
	case private:
		if !g.AllowPrivate {
			return fmt.Errorf("target %s is a private or link-local address (allowed only with [webhooks] allow_private)", ip)
		}
	}
	return nil
}

func urlErr(format string, args ...any) error {
	return &record.FieldError{Field: "url", Rule: fmt.Sprintf(format, args...)}
}

// CheckURL validates a subscription URL: http or https, a host, no user
// info; an address literal (or localhost) the guard allows; plain http
// only to a local target (loopback or private, as allowed), https for
// everything else. Names are resolved at delivery, not here.
func (g Guard) CheckURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, urlErr("is required")
	}
	if len(raw) > MaxURLBytes {
		return nil, urlErr("must be at most %d bytes (got %d)", MaxURLBytes, len(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, urlErr("must be an absolute http(s) URL (got %s)", record.Quote(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, urlErr("scheme must be http or https (got %s)", record.Quote(raw))
	}
	if u.User != nil {
		return nil, urlErr("must not carry user info (put credentials in the secret)")
	}
	host := u.Hostname()
	if host == "" {
		return nil, urlErr("must name a host (got %s)", record.Quote(raw))
	}
	local := false
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if err := g.checkAddr(ip); err != nil {
			return nil, urlErr("%v", err)
		}
		local = classify(ip) != public
	} else if h := strings.ToLower(host); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		if !g.AllowLoopback {
			return nil, urlErr("target %s is loopback (allowed only with [webhooks] allow_loopback)", record.Quote(host))
		}
		local = true
	}
	if u.Scheme == "http" && !local {
		return nil, urlErr("must use https for a non-local host (got %s)", record.Quote(raw))
	}
	return u, nil
}

// Dialer wraps dial so that it connects only to addresses the guard
// allows: the host is resolved here, every address checked, and the
// first allowed one dialled by number (no second lookup to rebind).
func (g Guard) Dialer(dial DialFunc) DialFunc {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	res := g.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else {
			found, err := res.LookupIPAddr(ctx, host)
			if err != nil {
				return nil, fmt.Errorf("resolve %s: %w", host, err)
			}
			for _, a := range found {
				if ip, ok := netip.AddrFromSlice(a.IP); ok {
					ips = append(ips, ip.Unmap())
				}
			}
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
		// Every address must pass: a name that resolves both outward and
		// inward is refused rather than tried in turn.
		for _, ip := range ips {
			if err := g.checkAddr(ip); err != nil {
				return nil, &RefusedError{Host: host, Reason: err.Error()}
			}
		}
		return dial(ctx, network, net.JoinHostPort(ips[0].String(), port))
	}
}

// RefusedError: a delivery's target resolved to an address the guard refuses.
type RefusedError struct{ Host, Reason string }

func (e *RefusedError) Error() string {
	return "webhook target " + record.Quote(e.Host) + " refused: " + e.Reason
}
