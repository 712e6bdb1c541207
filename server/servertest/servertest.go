// Package servertest runs the real echo app on a real database behind httptest for HTTP tests, and
// checks every response a test receives against the OpenAPI document (an undocumented status, a
// wrong content type or a body that does not match its schema fails the test). It also records which
// operations tests exercised, so a suite can fail when an operation is never tested.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/researchd/researchd/app"
	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/server"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// Env is one running app with its database.
type Env struct {
	Store *store.Store
	Dev   *auth.DevIssuer
	// Services are the app's services as app.Build wired them; their workers run only after Start.
	Services *app.Services
	Server   *httptest.Server
	URL      string
	Doc      *openapi3.T
	router   routers.Router
}

// Config is an Env's configuration: the HTTP layer's (whose services the harness fills in from
// App) and the services'. The services log and read the time as the HTTP layer does unless App
// says otherwise.
type Config struct {
	server.Config
	App app.Config
}

// Option adjusts the configuration of an Env.
type Option func(*Config)

// New starts the app on a fresh migrated database of the dialect; everything stops when t ends.
func New(t testing.TB, d store.Dialect, opts ...Option) *Env {
	t.Helper()
	return NewOn(t, storetest.Open(t, d), opts...)
}

// NewOn starts the app on an existing migrated store: several apps on one database stand for
// several processes.
func NewOn(t testing.TB, st *store.Store, opts ...Option) *Env {
	t.Helper()
	dev, err := auth.LoadDevIssuer(t.TempDir())
	if err != nil {
		t.Fatalf("dev issuer: %v", err)
	}
	cfg := Config{
		Config: server.Config{Database: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OAuth: dev, DevIssuer: dev,
			RateLimits: GenerousLimits(),
			// POST /v1/grep/research answers at once unless a test gives it a budget: nothing runs jobs here.
			V1Budgets: server.V1Budgets{}},
		App: app.Defaults(),
	}
	cfg.App.Jobs.DataDir = t.TempDir()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.App.Store = st
	if cfg.App.Logger == nil {
		cfg.App.Logger = cfg.Logger
	}
	if cfg.App.Now == nil {
		cfg.App.Now = cfg.Now
	}
	if cfg.App.AuthoringModel == nil {
		cfg.App.AuthoringModel = cfg.AuthoringModel
	}
	svcs, err := app.Build(cfg.App)
	if err != nil {
		t.Fatalf("app.Build: %v", err)
	}
	sc := cfg.Config
	sc.Accounts, sc.Limiter, sc.A2ATasks = svcs.Accounts, svcs.Limiter, svcs.A2ATasks
	sc.Billing, sc.Attachments, sc.Research, sc.Experts, sc.Skills = svcs.Billing, svcs.Attachments, svcs.Research, svcs.Experts, svcs.Skills
	sc.Tools, sc.Batches, sc.Builds, sc.Campaigns, sc.Loops = svcs.Tools, svcs.Batches, svcs.Builds, svcs.Campaigns, svcs.Loops
	handler, err := server.New(sc)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	doc, router := document(t)
	return &Env{Store: st, Dev: dev, Services: svcs, Server: srv, URL: srv.URL, Doc: doc, router: router}
}

// Start starts the services' workers; they stop (gracefully, for up to 10 s) when t ends.
func (e *Env) Start(t testing.TB) {
	t.Helper()
	if err := e.Services.Start(context.Background()); err != nil {
		t.Fatalf("start services: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Services.Stop(ctx)
	})
}

// GenerousLimits rate-limit every request (so every response carries the headers) at rates no test
// reaches; a test of the limits sets its own.
func GenerousLimits() *ratelimit.Limits {
	l := ratelimit.DefaultLimits()
	for tier := range l.Tiers {
		l.Tiers[tier] = ratelimit.Rate{N: 1_000_000, Per: time.Minute}
	}
	l.Anonymous = ratelimit.Rate{N: 1_000_000, Per: time.Minute}
	return &l
}

var (
	docOnce   sync.Once
	docShared *openapi3.T
	docRouter routers.Router
	docErr    error
)

func document(t testing.TB) (*openapi3.T, routers.Router) {
	docOnce.Do(func() {
		docShared, docErr = openapi.Load()
		if docErr != nil {
			return
		}
		docShared.Servers = nil
		docRouter, docErr = gorillamux.NewRouter(docShared)
	})
	if docErr != nil {
		t.Fatalf("load document: %v", docErr)
	}
	return docShared, docRouter
}

// Account is a test account with an all-scopes API key.
type Account struct {
	ID    string
	Email string
	Key   string
}

// NewAccount creates an account of the tier with credits and an API key carrying every scope.
func (e *Env) NewAccount(t testing.TB, tier string, admin bool, credits int64) Account {
	t.Helper()
	ctx := context.Background()
	email := storetest.Name("user") + "@example.com"
	a, _, err := e.Store.EnsureAccount(ctx, email, tier, admin)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	if credits > 0 {
		if err := e.Store.AppendLedger(ctx, &store.LedgerEntry{AccountID: a.ID, Type: store.TxDeposit, AmountCents: credits * 10}); err != nil {
			t.Fatalf("deposit: %v", err)
		}
	}
	return Account{ID: a.ID, Email: email, Key: e.Key(t, a.ID, auth.AllScopes...)}
}

// Key mints another API key for an account.
func (e *Env) Key(t testing.TB, accountID string, scopes ...string) string {
	t.Helper()
	_, secret, err := e.Services.Accounts.CreateKey(context.Background(), accountID, nil, scopes)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return secret
}

// Token mints an OAuth access token from the development issuer.
func (e *Env) Token(t testing.TB, email string, scopes ...string) string {
	t.Helper()
	tok, err := e.Dev.Mint(email, scopes, time.Hour)
	if err != nil {
		t.Fatalf("mint token: %v", err)
	}
	return tok
}

// Req is one request. Body is marshalled as JSON unless RawBody is set.
type Req struct {
	Method      string
	Path        string // path and query
	Token       string // bearer credential, if any
	Body        any
	RawBody     []byte
	ContentType string
	Header      http.Header
}

// Resp is a received, already contract-checked response.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
	OpID   string
}

// Do sends r and fails t when the response does not conform to the document.
func (e *Env) Do(t testing.TB, r Req) *Resp {
	t.Helper()
	resp, err := e.Send(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	if err := e.Check(r, resp); err != nil {
		t.Fatalf("%s %s answered %d, which breaks the contract: %v\nbody: %s", r.Method, r.Path, resp.Status, err, truncate(resp.Body))
	}
	return resp
}

// Send performs the request without checking the response.
func (e *Env) Send(r Req) (*Resp, error) {
	var body io.Reader
	ct := r.ContentType
	switch {
	case r.RawBody != nil:
		body = bytes.NewReader(r.RawBody)
	case r.Body != nil:
		b, err := json.Marshal(r.Body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
		if ct == "" {
			ct = "application/json"
		}
	}
	req, err := http.NewRequest(r.Method, e.URL+r.Path, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Resp{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

var filesPath = regexp.MustCompile(`^/api/v2/research/([^/]+)/files/(.+)$`)

// Check validates a response against the operation of its request and records the operation as
// exercised. Responses of unknown routes must still be problem+json.
func (e *Env) Check(r Req, resp *Resp) error {
	u, err := url.Parse(e.URL + r.Path)
	if err != nil {
		return err
	}
	// HEAD is answered as the document's GET, without the body (RFC 9110 section 9.3.2).
	method, head := r.Method, r.Method == http.MethodHead
	if head {
		method = http.MethodGet
	}
	hreq, _ := http.NewRequest(method, u.String(), nil)
	route, params, err := e.router.FindRoute(hreq)
	if err != nil {
		if m := filesPath.FindStringSubmatch(u.Path); m != nil {
			hreq2, _ := http.NewRequest(method, e.URL+"/api/v2/research/"+m[1]+"/files/x", nil)
			route, params, err = e.router.FindRoute(hreq2)
			params["file_path"] = m[2]
		}
	}
	if err != nil {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			return &contractError{"a request outside the document must answer problem+json, got " + resp.Header.Get("Content-Type")}
		}
		return nil
	}
	resp.OpID = route.Operation.OperationID
	Coverage.record(resp.OpID, resp.Status)
	ct := resp.Header.Get("Content-Type")
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hreq, PathParams: params, Route: route},
		Status:                 resp.Status,
		Header:                 resp.Header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   head || !strings.Contains(ct, "json"),
		},
	}
	input.SetBodyBytes(resp.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return err
	}
	if resp.Status >= 400 && !strings.HasPrefix(ct, "application/problem+json") {
		return &contractError{"error status with content type " + ct}
	}
	return nil
}

type contractError struct{ msg string }

func (c *contractError) Error() string { return c.msg }

// JSON decodes the body into v.
func (r *Resp) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", truncate(r.Body), err)
	}
}

// Problem decodes a problem+json body.
func (r *Resp) Problem(t testing.TB) gen.Problem {
	t.Helper()
	var p gen.Problem
	r.JSON(t, &p)
	return p
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
