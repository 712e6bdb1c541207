package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// headKey marks a HEAD request served by its GET handler.
type headKey struct{}

// registerHead answers HEAD on every GET route (RFC 9110 section 9.3.2) with the GET's handler, so
// the status and headers are the GET's; net/http discards the body written for a HEAD (and sets
// Content-Length from it when the whole body fits its buffer). Call it after every GET route is
// registered. Middleware sees a HEAD on the GET's path; the document's GET operation applies to it
// (routeIndex.lookup).
func registerHead(e *echo.Echo) {
	head := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == http.MethodHead {
			head[r.Path] = true
		}
	}
	for _, r := range e.Routes() {
		if r.Method != http.MethodGet || head[r.Path] {
			continue
		}
		head[r.Path] = true
		e.HEAD(r.Path, func(c echo.Context) error {
			req := c.Request()
			// The handler sees a GET (wrapped net/http handlers, such as a2a-go's card, serve GET
			// only) marked as a HEAD; middleware around it, the access log and metrics, still see
			// the HEAD.
			get := req.WithContext(context.WithValue(req.Context(), headKey{}, true))
			get.Method = http.MethodGet
			c.SetRequest(get)
			defer c.SetRequest(req)
			e.Router().Find(http.MethodGet, echo.GetPath(req), c)
			return c.Handler()(c)
		})
	}
}

// isHead reports whether a GET handler is serving a HEAD request: handlers that would stream until
// an event (the event stream) send their headers and stop.
func isHead(ctx context.Context) bool {
	v, _ := ctx.Value(headKey{}).(bool)
	return v
}

// normalizeContentType lowercases the media type of Content-Type (RFC 9110 section 8.3.1: type and
// subtype are case-insensitive), so `application/JSON` is JSON to the validator, echo's binder and
// the multipart reader alike. Parameters are kept as sent: a multipart boundary is case-sensitive.
func normalizeContentType(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		ct := h.Get(echo.HeaderContentType)
		if ct == "" {
			return next(c)
		}
		mt, params, found := strings.Cut(ct, ";")
		norm := strings.ToLower(strings.TrimSpace(mt))
		if found {
			norm += ";" + params
		}
		if norm != ct {
			h.Set(echo.HeaderContentType, norm)
		}
		return next(c)
	}
}
