package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

func newServer(t *testing.T) (*Handler, string) {
	t.Helper()
	h, err := New()
	require.NoError(t, err)
	e := echo.New()
	h.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func fetch(t *testing.T, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

// TestAssetsServedSafely: every asset has its exact content type, the strict CSP and nosniff, and
// none names anything outside the origin.
func TestAssetsServedSafely(t *testing.T) {
	t.Parallel()
	h, base := newServer(t)
	want := map[string]string{
		".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
		".js": "text/javascript; charset=utf-8", ".png": "image/png",
	}
	// An absolute or protocol-relative URL to any host, in markup, CSS or script.
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9-]+(\.[a-z0-9-]+)+|@import|url\(\s*['"]?(https?:|//)`)
	paths := h.Paths()
	require.Greater(t, len(paths), 15, "the page, the stylesheet, the icon and the modules")
	for _, p := range append(paths, Path+"/") {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			res, body := fetch(t, base+p, nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			ext := path.Ext(p)
			if p == Path || p == Path+"/" {
				ext = ".html"
			}
			require.Equal(t, want[ext], res.Header.Get("Content-Type"))
			requireStrictCSP(t, res.Header)
			require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
			require.NotEmpty(t, res.Header.Get("ETag"))
			if ext != ".png" {
				require.Empty(t, external.FindAllString(string(body), -1), "a reference outside the origin")
			}
		})
	}
}

func requireStrictCSP(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			directives[f[0]] = strings.Join(f[1:], " ")
		}
	}
	require.Equal(t, "'self'", directives["default-src"], csp)
	require.Equal(t, "'self'", directives["script-src"], "scripts from the origin only, none inline: %s", csp)
	require.Equal(t, "'self'", directives["style-src"], csp)
	require.Equal(t, "'self'", directives["connect-src"], csp)
	require.Equal(t, "'none'", directives["object-src"], csp)
	require.Equal(t, "'none'", directives["frame-ancestors"], csp)
	require.NotContains(t, csp, "unsafe", csp)
	require.NotContains(t, csp, "*", csp)
}

// TestPageHasNoInlineCode: the page loads its script and style from files (the CSP would block
// anything inline), and the scripts never parse HTML strings: text from the API only ever becomes
// text nodes.
func TestPageHasNoInlineCode(t *testing.T) {
	t.Parallel()
	h, base := newServer(t)
	_, page := fetch(t, base+Path, nil)
	html := string(page)
	for _, tag := range regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script>`).FindAllStringSubmatch(html, -1) {
		require.Contains(t, tag[0], ` src="/console/`, "a script from a file of the console")
		require.Empty(t, strings.TrimSpace(tag[1]), "no inline script")
	}
	require.NotRegexp(t, `(?i)<style|\sstyle=|\son[a-z]+=|javascript:`, html)

	// Every file the page and the modules refer to is served (a missing module is a blank page).
	refs := regexp.MustCompile(`(?:src|href)="(/console/[^"]+)"`).FindAllStringSubmatch(html, -1)
	imports := regexp.MustCompile(`(?m)^\s*import\b[^'"]*['"](\.{1,2}/[^'"]+)['"]`)
	for _, p := range h.Paths() {
		if !strings.HasSuffix(p, ".js") {
			continue
		}
		_, body := fetch(t, base+p, nil)
		js := string(body)
		require.NotRegexp(t, `innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|DOMParser|createContextualFragment`, js, p)
		for _, m := range imports.FindAllStringSubmatch(js, -1) {
			refs = append(refs, []string{"", path.Join(path.Dir(p), m[1])})
		}
	}
	require.NotEmpty(t, refs)
	for _, r := range refs {
		res, _ := fetch(t, base+r[1], nil)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s is referred to but not served", r[1])
	}
}

func TestRevalidationAndMissingAssets(t *testing.T) {
	t.Parallel()
	_, base := newServer(t)
	res, _ := fetch(t, base+Path+"/js/app.js", nil)
	require.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
	again, body := fetch(t, base+Path+"/js/app.js", http.Header{"If-None-Match": {res.Header.Get("ETag")}})
	require.Equal(t, http.StatusNotModified, again.StatusCode)
	require.Empty(t, body)

	missing, _ := fetch(t, base+Path+"/js/nothing.js", nil)
	require.Equal(t, http.StatusNotFound, missing.StatusCode)
	requireStrictCSP(t, missing.Header)
	traversal, _ := fetch(t, base+Path+"/../console.go", nil)
	require.NotEqual(t, http.StatusOK, traversal.StatusCode)
}
