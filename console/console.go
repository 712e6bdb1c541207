// Package console serves the research console: a browser UI at /console built only on the public
// API. It is static HTML, CSS and JavaScript modules embedded in the binary (no build step, no CDN):
// the browser calls /api/v2/... with the API key a person signs in with, like any other client.
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// Path is where the console is served; the server's root redirects here.
const Path = "/console"

// CSP is the Content-Security-Policy of every console response: scripts, styles, images and
// connections from this origin only and no inline script or style, so even a report that smuggled
// markup past the Markdown renderer could neither run nor load anything.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'"

//go:embed assets
var embedded embed.FS

// contentTypes are set by extension here rather than by mime.TypeByExtension, whose answer depends
// on the host's mime tables (a JavaScript module served as text/plain is refused by browsers).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".png":  "image/png",
	".txt":  "text/plain; charset=utf-8",
}

// asset is one embedded file, ready to send.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the console's page and assets.
type Handler struct {
	files map[string]asset // by path under /console/, "index.html" included
}

// New reads the embedded assets once; an asset of an unknown type is a programming error.
func New() (*Handler, error) {
	root, err := fs.Sub(embedded, "assets")
	if err != nil {
		return nil, err
	}
	h := &Handler{files: map[string]asset{}}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("console asset %s: no content type for %q", p, path.Ext(p))
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h.files[p] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	if _, ok := h.files["index.html"]; !ok {
		return nil, fmt.Errorf("console assets: index.html is missing")
	}
	return h, nil
}

// Paths lists the URL path of every asset (the page at /console included), for tests and checks.
func (h *Handler) Paths() []string {
	out := []string{Path}
	for p := range h.files {
		out = append(out, Path+"/"+p)
	}
	return out
}

// Register reads the assets and serves them on e (see Handler.Register).
func Register(e *echo.Echo) error {
	h, err := New()
	if err != nil {
		return err
	}
	h.Register(e)
	return nil
}

// Register serves the console at /console, /console/ and /console/<asset>. The routes are outside
// the API document, so the API's authentication, validation and rate limits do not apply to them;
// every API call the page makes goes through all of those.
func (h *Handler) Register(e *echo.Echo) {
	e.GET(Path, h.serve)
	e.GET(Path+"/", h.serve)
	e.GET(Path+"/*", h.serve)
}

func (h *Handler) serve(c echo.Context) error {
	name := strings.TrimPrefix(c.Param("*"), "/")
	if name == "" {
		name = "index.html"
	}
	a, ok := h.files[name]
	hdr := c.Response().Header()
	setSecurityHeaders(hdr)
	if !ok {
		return c.String(http.StatusNotFound, "not found\n")
	}
	// The assets change only with the binary: revalidate each time (cheap, by ETag), so an upgrade
	// never leaves a browser on a stale mix of modules.
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", a.etag)
	if c.Request().Header.Get("If-None-Match") == a.etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, a.contentType, a.body)
}

func setSecurityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", CSP)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	// The page holds an API key in memory: no referrer carries its URLs (or anything else) away.
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
}
