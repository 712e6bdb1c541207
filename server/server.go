// Package server is the HTTP API: the echo app, its middleware (request IDs, recovery, access log,
// metrics, body limit, authentication, validation against the OpenAPI document) and the handlers
// that implement the generated strict server interface.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/researchd/researchd/a2aserver"
	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/console"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/skill"
)

// Config is the HTTP layer's settings and the services its handlers call. The services are built
// by package app (the same wiring for serve and for tests) and are all required.
type Config struct {
	Logger       *slog.Logger
	OAuth        auth.Verifier
	DevIssuer    *auth.DevIssuer // nil when an external issuer is configured
	MaxBodyBytes int64           // request body limit; 0 means 10 MiB
	Now          func() time.Time
	// PublicURL is the external base URL for absolute links (upload_url); empty: the request's own
	// scheme and host.
	PublicURL string
	// RateLimits are the request rates per tier (each API key and each account) and per anonymous
	// client IP (RESEARCH_RATE_LIMITS); nil: ratelimit.DefaultLimits().
	RateLimits *ratelimit.Limits
	// AuthoringModel drafts for the authoring endpoints (the openai engine when configured); nil:
	// they work from the text alone.
	AuthoringModel authoring.Model
	// AuthoringRate bounds plan-preview and generate-workflow per caller; zero: 30 a minute.
	AuthoringRate ratelimit.Rate
	// WorkflowAuthoringOff makes generate-workflow answer 404 (RESEARCH_WORKFLOW_AUTHORING=off).
	WorkflowAuthoringOff bool
	// LoopRunBatch renders a run's batch for run-now; nil: the batch service's detail.
	LoopRunBatch LoopRunBatch
	// V1Budgets bound how long POST /v1/grep/research waits per depth; nil: DefaultV1Budgets().
	V1Budgets V1Budgets
	// A2ALimits bound the A2A tasks this process follows at once (RESEARCH_A2A_MAX_TASKS,
	// RESEARCH_A2A_MAX_TASKS_PER_ACCOUNT); zero fields: a2aserver's defaults.
	A2ALimits a2aserver.Limits
	// MaxStreamsPerAccount caps the event streams and A2A streams one account (or anonymous client
	// IP) holds open in this process (RESEARCH_MAX_STREAMS_PER_ACCOUNT); 0: DefaultMaxStreamsPerAccount.
	MaxStreamsPerAccount int

	// Database is what /readyz asks whether the database answers (the store).
	Database Pinger
	// Accounts authenticates every request; Limiter is the rate limiter RateLimits and
	// AuthoringRate are taken from; A2ATasks keep the A2A side of tasks for the A2A endpoint.

	Accounts    *accounts.Service
	Limiter     *ratelimit.Limiter
	Billing     *billing.Service
	Attachments *attachments.Service
	Research    *jobs.Service
	A2ATasks    *a2aserver.TaskStore
	Experts     *expert.Service
	Skills      *skill.Service
	Tools       *mcptool.Registry
	Batches     *batch.Service
	Builds      *expertbuild.Service
	Campaigns   *campaign.Service
	Loops       *loop.Service
}

// Pinger is all /readyz needs of the database, so the HTTP layer holds no store of its own.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Server implements gen.StrictServerInterface.
type Server struct {
	database    Pinger
	accounts    *accounts.Service
	log         *slog.Logger
	oauth       auth.Verifier
	devIssuer   *auth.DevIssuer
	now         func() time.Time
	billing     *billing.Service
	attachments *attachments.Service
	publicURL   string
	research    *jobs.Service
	a2aTasks    *a2aserver.TaskStore
	experts     *expert.Service
	skills      *skill.Service
	tools       *mcptool.Registry
	builds      *expertbuild.Service
	author      authoring.Author
	limiter     *ratelimit.Limiter
	limits      ratelimit.Limits
	// authoringRate and workflowAuthoringOff: see Config.
	authoringRate        ratelimit.Rate
	workflowAuthoringOff bool
	batches              *batch.Service
	loops                *loop.Service
	campaigns            *campaign.Service
	loopRunBatch         LoopRunBatch
	doc                  *openapi3.T
	routes               routeIndex
	metrics              *metrics
	v1Budgets            V1Budgets
	a2aLimits            a2aserver.Limits
	streams              *streamSlots
}

var _ gen.StrictServerInterface = (*Server)(nil)

// New builds the echo app: embedded document → route index → middleware → generated handlers.
func New(cfg Config) (*echo.Echo, error) {
	doc, err := openapi.Load()
	if err != nil {
		return nil, err
	}
	// Routing is echo's; the document's servers entry must not prefix what kin-openapi matches.
	doc.Servers = nil
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) } // the databases keep microseconds
	}
	if cfg.Database == nil || cfg.Accounts == nil || cfg.Limiter == nil || cfg.Billing == nil || cfg.Attachments == nil ||
		cfg.Research == nil || cfg.A2ATasks == nil || cfg.Experts == nil || cfg.Skills == nil || cfg.Tools == nil ||
		cfg.Batches == nil || cfg.Builds == nil || cfg.Campaigns == nil || cfg.Loops == nil {
		return nil, errors.New("server: every service is required (app.Build builds them)")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	limits := ratelimit.DefaultLimits()
	if cfg.RateLimits != nil {
		limits = *cfg.RateLimits
	}
	if cfg.V1Budgets == nil {
		cfg.V1Budgets = DefaultV1Budgets()
	}
	if cfg.AuthoringRate.N == 0 {
		cfg.AuthoringRate = defaultAuthoringRate
	}
	s := &Server{
		database: cfg.Database, accounts: cfg.Accounts, log: cfg.Logger, oauth: cfg.OAuth, devIssuer: cfg.DevIssuer, now: cfg.Now,
		billing: cfg.Billing, attachments: cfg.Attachments, publicURL: cfg.PublicURL, research: cfg.Research, a2aTasks: cfg.A2ATasks, experts: cfg.Experts, skills: cfg.Skills, tools: cfg.Tools, batches: cfg.Batches, builds: cfg.Builds,
		author: authoring.Author{Model: cfg.AuthoringModel, Log: cfg.Logger}, limiter: cfg.Limiter, limits: limits, authoringRate: cfg.AuthoringRate, workflowAuthoringOff: cfg.WorkflowAuthoringOff,
		loops: cfg.Loops, campaigns: cfg.Campaigns, loopRunBatch: cfg.LoopRunBatch, doc: doc, routes: newRouteIndex(doc), metrics: newMetrics(),
		v1Budgets: cfg.V1Budgets, a2aLimits: cfg.A2ALimits, streams: newStreamSlots(cfg.MaxStreamsPerAccount),
	}
	if s.loopRunBatch == nil {
		s.loopRunBatch = s.runBatchDetail
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(cfg.Logger)
	// X-Forwarded-For is believed only from loopback and private-network proxies: a client on the
	// internet cannot pick the IP its anonymous rate limit is counted against.
	e.IPExtractor = echo.ExtractIPFromXFFHeader()
	e.Pre(normalizeContentType)
	e.Use(
		acceptRequestID,
		middleware.RequestIDWithConfig(middleware.RequestIDConfig{Generator: uuid.NewString,
			// Handlers see the id too (a job keeps its originating request id for webhooks).
			RequestIDHandler: func(c echo.Context, id string) {
				c.SetRequest(c.Request().WithContext(withRequestID(c.Request().Context(), id)))
			}}),
		s.accessLog,
		middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, LogErrorFunc: s.logPanic}),
		s.limitUnidentified,
		// Uploads have their own, larger limits (limitAttachmentBodies).
		middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: fmt.Sprintf("%dB", cfg.MaxBodyBytes), Skipper: s.isUploadRoute}),
		s.authenticate,
		s.rememberOrigin,
		s.limitRequests,
		s.limitAttachmentBodies,
		s.validateRequests,
		s.unlimitedWrites,
		s.capStreams,
	)
	strict := gen.NewStrictHandler(s, nil)
	gen.RegisterHandlers(e, strict)
	wrapper := gen.ServerInterfaceWrapper{Handler: strict}
	e.GET(filesWildcardPath, func(c echo.Context) error {
		c.SetParamNames("job_id_or_slug", "file_path")
		c.SetParamValues(c.Param("job_id_or_slug"), c.Param("*"))
		return wrapper.GetResearchFile(c)
	})
	s.registerA2A(e) // replaces the generated routes: JSON-RPC errors are never problem+json
	s.registerOps(e)
	if err := console.Register(e); err != nil {
		return nil, err
	}
	registerHead(e)
	return e, nil
}

func (s *Server) logPanic(c echo.Context, err error, stack []byte) error {
	s.log.ErrorContext(c.Request().Context(), "panic", "request_id", c.Response().Header().Get(echo.HeaderXRequestID),
		"error", err, "stack", string(stack))
	return err
}
