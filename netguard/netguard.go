// Package netguard builds HTTP clients that refuse to reach internal networks (SSRF protection), for
// every fetch the service makes on a caller's behalf: attachment imports, completion webhooks and the
// engine's fetch tool.
//
// The address rules are those of code.dny.dev/ssrf (kept in sync with the IANA special-purpose
// registries): private, loopback, link-local, carrier-grade NAT, reserved, documentation,
// benchmarking, multicast and unspecified IPv4 ranges, and everything outside IPv6 global unicast
// (so ::1, ::, fc00::/7, fe80::/10, ff00::/8 and IPv4-mapped ::ffff:0:0/96) plus the special ranges
// inside it (6to4, Teredo, documentation). They are applied to the address actually dialled, after
// name resolution, on every connection — so a name that resolves to an internal address, DNS
// rebinding between a check and a fetch, and redirects to internal targets are all refused.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"code.dny.dev/ssrf"
)

// Errors a guarded client returns (wrapped in *url.Error by http.Client); test them with errors.Is.
var (
	// ErrBlocked: the URL or the address it leads to is not allowed by the policy.
	ErrBlocked = errors.New("destination not allowed")
	// ErrTooManyRedirects: more than MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrBodyTooLarge: the response body is over the client's body limit.
	ErrBodyTooLarge = errors.New("response body too large")
)

// MaxRedirects is how many redirects a guarded client follows; each hop is re-validated.
const MaxRedirects = 5

// DefaultMaxBodyBytes caps response bodies unless WithMaxBodyBytes says otherwise.
const DefaultMaxBodyBytes = 64 << 20

// Policy says what a client may reach. The zero value is the production policy: https only, public
// addresses only.
type Policy struct {
	AllowHTTP    bool // plain http:// as well as https://
	AllowPrivate bool // any address, internal ones included (local development only)
}

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens connections; *net.Dialer implements it. A guarded client hands it only addresses that
// already passed the policy, as "ip:port".
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Option adjusts a client.
type Option func(*options)

type options struct {
	resolver Resolver
	dialer   Dialer
	maxBody  int64
}

// WithResolver replaces name resolution (tests map names to chosen addresses without DNS).
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// WithDialer replaces the connection dialer. The policy is still applied to every address before
// the dialer sees it, so tests can route an allowed public address to a loopback server without
// opening the block.
func WithDialer(d Dialer) Option { return func(o *options) { o.dialer = d } }

// WithMaxBodyBytes caps response bodies (reading past it fails with ErrBodyTooLarge, and a declared
// Content-Length over it fails the request); n <= 0 removes the cap.
func WithMaxBodyBytes(n int64) Option { return func(o *options) { o.maxBody = n } }

// NewClient returns an http.Client that applies p to the first request and to every redirect hop
// (at most MaxRedirects), resolves names itself and checks every resolved address at dial time,
// never uses a proxy from the environment, and gives up after timeout (the whole exchange, body
// included).
func NewClient(p Policy, timeout time.Duration, opts ...Option) *http.Client {
	o := options{resolver: net.DefaultResolver, maxBody: DefaultMaxBodyBytes}
	for _, opt := range opts {
		opt(&o)
	}
	g := &guard{policy: p, resolver: o.resolver, dialer: o.dialer}
	if g.dialer == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		if !p.AllowPrivate {
			// Second line of defence: the socket-level check of the address really connected to.
			d.Control = guardian.Safe
		}
		g.dialer = d
	}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf and bypass the address checks
		DialContext:            g.dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           20,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return &http.Client{
		Transport: &checkedTransport{policy: p, next: transport, maxBody: o.maxBody},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, MaxRedirects)
			}
			return CheckURL(p, req.URL)
		},
	}
}

// guardian holds the address rules; any port, TCP only.
var guardian = ssrf.New(ssrf.WithAnyPort())

// CheckAddr reports whether p allows connecting to ip.
func CheckAddr(p Policy, ip netip.Addr) error {
	if p.AllowPrivate {
		return nil
	}
	// An IPv4-mapped address reaches its IPv4 address (and resolvers may answer A records in that
	// form), so it is judged as that address.
	if err := guardian.SafeAddr(ip.WithZone("").Unmap()); err != nil {
		return fmt.Errorf("%w: %v", ErrBlocked, err)
	}
	return nil
}

// CheckURL applies the URL rules of p without any network access: http(s) only (https only unless
// AllowHTTP), no credentials, a host, and — unless AllowPrivate — no literal address that is
// blocked, no non-canonical numeric host (127.1, 2130706433, 0x7f000001, 017700000001, ...) and no
// localhost name.
func CheckURL(p Policy, u *url.URL) error {
	if u == nil {
		return fmt.Errorf("%w: no URL", ErrBlocked)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return fmt.Errorf("%w: only https URLs are allowed", ErrBlocked)
		}
	default:
		return fmt.Errorf("%w: scheme %q is not http(s)", ErrBlocked, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL are not allowed", ErrBlocked)
	}
	host := u.Hostname()
	if host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: the URL has no host", ErrBlocked)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: bad port %q", ErrBlocked, port)
		}
	}
	if p.AllowPrivate {
		return nil
	}
	return checkHost(host)
}

// legacyNumeric matches the inet_aton spellings of an IPv4 address (one to four decimal, octal or hex
// parts) that some resolvers accept and netip does not: they are refused rather than guessed at.
var legacyNumeric = regexp.MustCompile(`^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}\.?$`)

func checkHost(host string) error {
	h := strings.ToLower(host)
	if ip, err := netip.ParseAddr(h); err == nil {
		return CheckAddr(Policy{}, ip)
	}
	if legacyNumeric.MatchString(h) {
		return fmt.Errorf("%w: %q is a non-canonical numeric address", ErrBlocked, host)
	}
	name := strings.TrimSuffix(h, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return fmt.Errorf("%w: %q is a loopback name", ErrBlocked, host)
	}
	return nil
}

type guard struct {
	policy   Policy
	resolver Resolver
	dialer   Dialer
}

// dial resolves addr's host, refuses the connection when any of its addresses is blocked (a name
// that mixes public and internal addresses is not trusted), then dials the addresses in order.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	if !g.policy.AllowPrivate {
		if err := checkHost(host); err != nil {
			return nil, err
		}
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	for _, ip := range ips {
		if err := CheckAddr(g.policy, ip); err != nil {
			return nil, fmt.Errorf("%s resolves to %s: %w", host, ip, err)
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) {
			err = fmt.Errorf("%w: %v", ErrBlocked, err)
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// checkedTransport validates each request's URL before it goes out (the first request does not pass
// through CheckRedirect) and caps response bodies.
type checkedTransport struct {
	policy  Policy
	next    http.RoundTripper
	maxBody int64
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckURL(t.policy, req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || t.maxBody <= 0 {
		return resp, err
	}
	if resp.ContentLength > t.maxBody {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: Content-Length %d is over %d bytes", ErrBodyTooLarge, resp.ContentLength, t.maxBody)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.maxBody}
	return resp, nil
}

// cappedBody fails a read that goes past the limit instead of silently truncating.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One more byte tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := c.rc.Read(one[:])
		if n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }
