package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	"github.com/researchd/researchd/console"
	"github.com/researchd/researchd/openapi"
)

// registerOps serves the Operations-tagged routes of the document by hand: they are not API
// resources and need no generated types.
func (s *Server) registerOps(e *echo.Echo) {
	serveDoc := func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapi.JSON) }
	e.GET("/openapi/v2.json", serveDoc)
	e.GET("/api/v2/openapi.json", serveDoc)

	ui := echo.WrapHandler(v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "researchd: Research Service API v2",
		SwaggerJSON: "/openapi/v2.json",
		BasePath:    "/docs/",
		ShowTopBar:  false,
		SettingsUI:  map[string]string{"tryItOutEnabled": "false", "persistAuthorization": "true", "displayOperationId": "true"},
	}))
	e.GET("/docs", ui)
	e.GET("/docs/*", ui)
	// The site root is where a newcomer lands: send them to the console (which links the docs).
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, console.Path) })

	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, health{Status: "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := s.database.Ping(ctx); err != nil {
			p := newProblem(http.StatusServiceUnavailable, "not_ready", "database: "+err.Error())
			return p
		}
		return c.JSON(http.StatusOK, health{Status: "ok", Checks: map[string]string{"database": "ok"}})
	})
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})))
	e.GET("/.well-known/jwks.json", func(c echo.Context) error {
		if s.devIssuer == nil {
			return errNotFound("development issuer key set")
		}
		return c.JSON(http.StatusOK, s.devIssuer.JWKS())
	})
}

// health is the Health schema of the document (Operations-tagged schemas are not generated).
type health struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}
