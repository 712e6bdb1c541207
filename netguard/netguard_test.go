package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/netguard"
)

// publicIP is a global unicast address the fake resolver hands out; the routing dialer sends its
// connections to a loopback test server, so nothing ever leaves the machine.
var publicIP = netip.MustParseAddr("93.184.215.14")

type fakeResolver struct {
	mu    sync.Mutex
	names map[string][]netip.Addr
	calls map[string]int
	// rebind answers a public address on the first lookup of a name and loopback afterwards.
	rebind map[string]bool
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[host]++
	if r.rebind[host] {
		if r.calls[host] == 1 {
			return []netip.Addr{publicIP}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	if ips, ok := r.names[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// routingDialer connects allowed public addresses to chosen loopback servers and counts every other
// dial (which must never happen: the guard refuses first).
type routingDialer struct {
	routes map[netip.Addr]string
	stray  atomic.Int64
}

func (d *routingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, err
	}
	if target, ok := d.routes[ap.Addr()]; ok {
		var nd net.Dialer
		return nd.DialContext(ctx, network, target)
	}
	d.stray.Add(1)
	return nil, fmt.Errorf("test dialer: unexpected dial to %s", address)
}

// countingServer is the loopback target every hostile URL points at.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "secret")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return p
}

// hostileURLs are the targets of the SSRF table; P is the counting server's port.
func hostileURLs(p string) []string {
	return []string{
		"http://127.0.0.1:" + p + "/x.txt",
		"http://127.1:" + p + "/x.txt",
		"http://2130706433:" + p + "/x.txt",
		"http://0x7f000001:" + p + "/x.txt",
		"http://017700000001:" + p + "/x.txt",
		"http://0x7f.0.0.1:" + p + "/x.txt",
		"http://127.000.000.001:" + p + "/x.txt",
		"http://0:" + p + "/x.txt",
		"http://[::1]:" + p + "/x.txt",
		"http://[::ffff:127.0.0.1]:" + p + "/x.txt",
		"http://[::ffff:7f00:1]:" + p + "/x.txt",
		"http://[0:0:0:0:0:ffff:127.0.0.1]:" + p + "/x.txt",
		"http://localhost:" + p + "/x.txt",
		"http://LOCALHOST.:" + p + "/x.txt",
		"http://api.localhost:" + p + "/x.txt",
		"http://0.0.0.0:" + p + "/x.txt",
		"http://[::]:" + p + "/x.txt",
		"http://169.254.169.254/latest/meta-data/x.txt",
		"http://[fd00:ec2::254]/latest/meta-data/x.txt",
		"http://10.0.0.1/x.txt",
		"http://172.16.0.1/x.txt",
		"http://172.31.255.254/x.txt",
		"http://192.168.1.1/x.txt",
		"http://100.64.0.1/x.txt",
		"http://[fc00::1]/x.txt",
		"http://[fe80::1]/x.txt",
		"http://[fe80::1%25eth0]/x.txt",
		"http://224.0.0.1/x.txt",
		"http://[ff02::1]/x.txt",
		"http://255.255.255.255/x.txt",
		"http://240.0.0.1/x.txt",
		"http://192.0.2.10/x.txt",
		"http://198.18.0.1/x.txt",
		"http://[::ffff:a00:1]/x.txt",
		"http://[64:ff9b::7f00:1]/x.txt",
		"http://[2002:7f00:1::]/x.txt",
		"http://private.example.test/x.txt",
		"http://mixed.example.test/x.txt",
		"http://mapped.example.test/x.txt",
		"http://rebind.example.test/x.txt",
		"http://redirect.example.test/to-loopback",
		"http://redirect.example.test/to-metadata",
		"http://redirect.example.test/to-file",
		"file:///etc/passwd",
		"gopher://127.0.0.1:" + p + "/_x",
		"ftp://files.example.test/x.txt",
		"dict://127.0.0.1:" + p + "/",
		"http://user:pass@files.example.test/x.txt",
		"http://user@files.example.test/x.txt",
	}
}

// fixture wires a fake resolver and routing dialer: files/redirect.example.test resolve to a public
// address routed to loopback servers; the hostile names resolve to internal addresses.
type fixture struct {
	client   *http.Client
	dialer   *routingDialer
	hits     *atomic.Int64
	port     string
	resolver *fakeResolver
}

func newFixture(t *testing.T, p netguard.Policy) *fixture {
	t.Helper()
	target, hits := countingServer(t)
	tp := port(t, target)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+tp+"/x.txt", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/ok.txt", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "public content")
		}
	}))
	t.Cleanup(redirector.Close)
	res := &fakeResolver{
		names: map[string][]netip.Addr{
			"files.example.test":    {publicIP},
			"redirect.example.test": {publicIP},
			"private.example.test":  {netip.MustParseAddr("10.1.2.3")},
			"mixed.example.test":    {publicIP, netip.MustParseAddr("127.0.0.1")},
			"mapped.example.test":   {netip.MustParseAddr("::ffff:169.254.169.254")},
		},
		rebind: map[string]bool{"rebind.example.test": true},
	}
	d := &routingDialer{routes: map[netip.Addr]string{publicIP: redirector.Listener.Addr().String()}}
	return &fixture{
		client: netguard.NewClient(p, 5*time.Second, netguard.WithResolver(res), netguard.WithDialer(d)),
		dialer: d, hits: hits, port: tp, resolver: res,
	}
}

func get(ctx context.Context, c *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestHostileURLsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, netguard.Policy{AllowHTTP: true})
	urls := hostileURLs(f.port)
	require.GreaterOrEqual(t, len(urls), 25)
	// DNS rebinding: the name answered a public address to an earlier look-up (a check a naive
	// client would trust); the dial-time look-up gets loopback and is refused.
	ips, err := f.resolver.LookupNetIP(context.Background(), "ip", "rebind.example.test")
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{publicIP}, ips)
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			_, err := get(context.Background(), f.client, u)
			require.Error(t, err)
			require.ErrorIs(t, err, netguard.ErrBlocked, "%v", err)
		})
	}
	require.Zero(t, f.hits.Load(), "a hostile URL reached the loopback server")
	require.Zero(t, f.dialer.stray.Load(), "a hostile address reached the dialer")
}

// The shipped configuration (real resolver, real dialer) refuses loopback in every spelling; the
// counting server proves nothing was fetched.
func TestShippedClientRefusesLoopback(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t)
	p := port(t, srv)
	c := netguard.NewClient(netguard.Policy{AllowHTTP: true}, 5*time.Second)
	for _, u := range hostileURLs(p)[:17] {
		_, err := get(context.Background(), c, u)
		require.ErrorIs(t, err, netguard.ErrBlocked, u)
	}
	require.Zero(t, hits.Load())

	// Development policy opens the block: the same server is reachable.
	dev := netguard.NewClient(netguard.Policy{AllowHTTP: true, AllowPrivate: true}, 5*time.Second)
	body, err := get(context.Background(), dev, srv.URL+"/x.txt")
	require.NoError(t, err)
	require.Equal(t, "secret", body)
	require.EqualValues(t, 1, hits.Load())
}

func TestAllowedFetchThroughInjectedResolverAndDialer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, netguard.Policy{AllowHTTP: true})
	body, err := get(context.Background(), f.client, "http://files.example.test/report.txt")
	require.NoError(t, err)
	require.Equal(t, "public content", body)

	// A redirect to an allowed host is followed.
	body, err = get(context.Background(), f.client, "http://redirect.example.test/hop")
	require.NoError(t, err)
	require.Equal(t, "public content", body)

	// Redirect loops stop after MaxRedirects.
	_, err = get(context.Background(), f.client, "http://redirect.example.test/loop")
	require.ErrorIs(t, err, netguard.ErrTooManyRedirects)

	// Unknown names fail as DNS errors, not as blocks.
	_, err = get(context.Background(), f.client, "http://nowhere.example.test/x")
	require.Error(t, err)
	require.NotErrorIs(t, err, netguard.ErrBlocked)
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
	require.Zero(t, f.hits.Load())
}

func TestHTTPSOnlyPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, netguard.Policy{})
	_, err := get(context.Background(), f.client, "http://files.example.test/report.txt")
	require.ErrorIs(t, err, netguard.ErrBlocked)
	require.Zero(t, f.dialer.stray.Load())
}

func TestBodyCap(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = io.WriteString(w, big)
	}))
	t.Cleanup(srv.Close)
	res := &fakeResolver{names: map[string][]netip.Addr{"files.example.test": {publicIP}}}
	d := &routingDialer{routes: map[netip.Addr]string{publicIP: srv.Listener.Addr().String()}}
	mk := func(n int64) *http.Client {
		return netguard.NewClient(netguard.Policy{AllowHTTP: true}, 5*time.Second,
			netguard.WithResolver(res), netguard.WithDialer(d), netguard.WithMaxBodyBytes(n))
	}
	_, err := get(context.Background(), mk(1024), "http://files.example.test/sized")
	require.ErrorIs(t, err, netguard.ErrBodyTooLarge)
	_, err = get(context.Background(), mk(1024), "http://files.example.test/chunked")
	require.ErrorIs(t, err, netguard.ErrBodyTooLarge)
	body, err := get(context.Background(), mk(2048), "http://files.example.test/chunked")
	require.NoError(t, err)
	require.Len(t, body, 2048)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(func() { close(release); srv.Close() })
	res := &fakeResolver{names: map[string][]netip.Addr{"slow.example.test": {publicIP}}}
	d := &routingDialer{routes: map[netip.Addr]string{publicIP: srv.Listener.Addr().String()}}
	c := netguard.NewClient(netguard.Policy{AllowHTTP: true}, 200*time.Millisecond, netguard.WithResolver(res), netguard.WithDialer(d))
	_, err := get(context.Background(), c, "http://slow.example.test/")
	require.Error(t, err)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "%v", err)
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ip      string
		allowed bool
	}{
		{"93.184.215.14", true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"8.8.8.8", true},
		{"127.0.0.1", false},
		{"10.255.255.255", false},
		{"100.127.0.1", false},
		{"169.254.0.1", false},
		{"::1", false},
		{"::", false},
		{"::ffff:8.8.8.8", true},
		{"::ffff:10.0.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"64:ff9b::a00:1", false},
		{"fc00::1", false},
		{"fe80::1", false},
		{"ff00::1", false},
	} {
		err := netguard.CheckAddr(netguard.Policy{}, netip.MustParseAddr(tc.ip))
		if tc.allowed {
			require.NoError(t, err, tc.ip)
		} else {
			require.ErrorIs(t, err, netguard.ErrBlocked, tc.ip)
		}
	}
}
