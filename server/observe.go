package server

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchd_http_requests_total", Help: "HTTP requests by operation, method and status.",
		}, []string{"operation", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchd_http_request_duration_seconds", Help: "HTTP request latency by operation and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation", "method"}),
	}
	m.registry.MustRegister(m.requests, m.latency, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// AccessLogMessage is the message of the access log's lines (a terminal shows them at debug only).
const AccessLogMessage = "request"

// accessLog logs one structured line per request and records its metrics. It sits outside the
// recovery and error handling so it sees the final status.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		elapsed := time.Since(start)
		opID := "unmatched"
		if op := s.routes.lookup(c); op != nil {
			opID = op.route.Operation.OperationID
		} else if c.Path() != "" && c.Path() != "/*" {
			opID = c.Path()
		}
		status := c.Response().Status
		s.metrics.requests.WithLabelValues(opID, c.Request().Method, strconv.Itoa(status)).Inc()
		s.metrics.latency.WithLabelValues(opID, c.Request().Method).Observe(elapsed.Seconds())
		attrs := []any{
			"method", c.Request().Method, "path", c.Request().URL.Path, "operation", opID, "status", status,
			"duration_ms", float64(elapsed.Microseconds()) / 1000, "bytes_out", c.Response().Size,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID), "remote", c.RealIP(),
		}
		if p, ok := principalOf(c); ok {
			attrs = append(attrs, "account_id", p.AccountID)
		}
		s.log.InfoContext(c.Request().Context(), AccessLogMessage, attrs...)
		return nil
	}
}

// acceptRequestID keeps a client's X-Request-Id only when it is one header of 1-128 visible ASCII
// characters; otherwise it is dropped and the RequestID middleware generates one. The id is
// repeated in logs, problems and webhook payloads, so it must not smuggle line breaks, escapes or
// kilobytes into them.
func acceptRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if ids := h.Values(echo.HeaderXRequestID); len(ids) > 1 || (len(ids) == 1 && !validRequestID(ids[0])) {
			h.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestIDKey carries the request id into handlers (a job keeps its originating request id for
// webhooks).
type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
