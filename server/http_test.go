package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestHTTPErrors checks that every error path answers problem+json with the right status and code,
// and that input errors name the offending field.
func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d, func(c *servertest.Config) { c.MaxBodyBytes = 1024 })
			acct := env.NewAccount(t, store.TierFree, false, 0)
			tok := env.Token(t, acct.Email, "keys")

			tests := []struct {
				name      string
				req       servertest.Req
				status    int
				code      string
				field     string // an errors[].field the problem must name
				noHeaders bool
			}{
				{name: "unknown route", req: servertest.Req{Method: "GET", Path: "/api/v2/nope"}, status: 404, code: "not_found"},
				{name: "unknown route outside the API", req: servertest.Req{Method: "GET", Path: "/favicon.ico"}, status: 404, code: "not_found"},
				{name: "wrong method", req: servertest.Req{Method: "PUT", Path: "/api/v2/keys", Token: acct.Key, Body: map[string]any{}}, status: 405, code: "method_not_allowed"},
				{name: "unknown JSON field", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": "x", "bogus": 1}}, status: 422, code: "validation_error", field: "bogus"},
				{name: "bad enum in body", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"scopes": []string{"wizardry"}}}, status: 422, code: "validation_error", field: "scopes/0"},
				{name: "string too long", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": strings.Repeat("x", 101)}}, status: 422, code: "validation_error", field: "label"},
				{name: "wrong type", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": 7}}, status: 422, code: "validation_error", field: "label"},
				{name: "NUL in a string", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": "a\x00b"}}, status: 422, code: "validation_error", field: "label"},
				{name: "body not an object", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: []int{1}}, status: 422, code: "validation_error"},
				{name: "malformed JSON", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, RawBody: []byte(`{"label": `), ContentType: "application/json"}, status: 422, code: "validation_error"},
				{name: "unsupported content type", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, RawBody: []byte(`label=x`), ContentType: "application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
				{name: "unknown query parameter", req: servertest.Req{Method: "GET", Path: "/api/v2/keys?bogus=1", Token: acct.Key}, status: 422, code: "validation_error", field: "query.bogus"},
				{name: "query parameter out of range", req: servertest.Req{Method: "GET", Path: "/api/v2/keys?limit=101", Token: acct.Key}, status: 422, code: "validation_error", field: "query.limit"},
				{name: "query parameter of the wrong type", req: servertest.Req{Method: "GET", Path: "/api/v2/keys?limit=many", Token: acct.Key}, status: 422, code: "validation_error", field: "query.limit"},
				{name: "cursor this server never issued", req: servertest.Req{Method: "GET", Path: "/api/v2/keys?cursor=garbage", Token: acct.Key}, status: 422, code: "invalid_cursor", field: "query.cursor"},
				{name: "path parameter not a UUID", req: servertest.Req{Method: "DELETE", Path: "/api/v2/keys/not-a-uuid", Token: acct.Key}, status: 422, code: "validation_error", field: "path.key_id"},
				{name: "unknown query parameter on an operations route", req: servertest.Req{Method: "GET", Path: "/healthz?verbose=1"}, status: 422, code: "validation_error", field: "query.verbose"},
				{name: "body over the limit", req: servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: tok, Body: map[string]any{"label": strings.Repeat("x", 2000)}}, status: 413, code: "payload_too_large"},
				{name: "not implemented yet", req: servertest.Req{Method: "GET", Path: "/api/v2/agents"}, status: 0, code: ""},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					r := env.Do(t, tc.req)
					if tc.status == 0 {
						return // only the contract check
					}
					require.Equal(t, tc.status, r.Status, "%s", r.Body)
					require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
					p := r.Problem(t)
					require.Equal(t, tc.status, p.Status)
					require.Equal(t, tc.code, p.Code)
					require.Equal(t, "https://researchd.dev/problems/"+strings.ReplaceAll(tc.code, "_", "-"), p.Type)
					require.NotEmpty(t, p.Title)
					require.NotNil(t, p.RequestId)
					require.Equal(t, r.Header.Get("X-Request-ID"), *p.RequestId)
					if tc.field != "" {
						require.NotNil(t, p.Errors, "%s", r.Body)
						var fields []string
						for _, fe := range *p.Errors {
							fields = append(fields, fe.Field)
							require.NotEmpty(t, fe.Message)
						}
						require.Contains(t, fields, tc.field, "%s", r.Body)
					}
				})
			}
		})
	}
}

// TestRequestIDs checks that every response carries X-Request-ID, that a caller's own ID is kept
// when it is 1-128 visible ASCII characters and replaced otherwise, and that problems repeat it.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	tests := []struct {
		name, path string
		given      []string
		kept       bool
		status     int
	}{
		{name: "generated on success", path: "/healthz", status: 200},
		{name: "generated on error", path: "/api/v2/keys", status: 401},
		{name: "caller's own on success", path: "/healthz", given: []string{"trace-abc-123"}, kept: true, status: 200},
		{name: "caller's own on error", path: "/api/v2/keys", given: []string{"trace-def-456"}, kept: true, status: 401},
		{name: "every visible ASCII character", path: "/healthz", given: []string{"!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"}, kept: true, status: 200},
		{name: "128 characters", path: "/healthz", given: []string{strings.Repeat("a", 128)}, kept: true, status: 200},
		{name: "129 characters", path: "/healthz", given: []string{strings.Repeat("a", 129)}, status: 200},
		{name: "a space", path: "/healthz", given: []string{"trace 1"}, status: 200},
		{name: "a tab", path: "/api/v2/keys", given: []string{"trace\t1"}, status: 401},
		{name: "non-ASCII", path: "/healthz", given: []string{"tracé"}, status: 200},
		{name: "invalid UTF-8", path: "/healthz", given: []string{"trace\xff"}, status: 200},
		{name: "two ids", path: "/healthz", given: []string{"one", "two"}, status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := servertest.Req{Method: "GET", Path: tc.path}
			if tc.given != nil {
				req.Header = http.Header{"X-Request-Id": tc.given}
			}
			r := env.Do(t, req)
			require.Equal(t, tc.status, r.Status)
			id := r.Header.Get("X-Request-ID")
			require.NotEmpty(t, id)
			if tc.kept {
				require.Equal(t, tc.given[0], id)
			} else {
				require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id, "a fresh id replaces %q", tc.given)
			}
			if r.Status >= 400 {
				require.Equal(t, id, *r.Problem(t).RequestId)
			}
		})
	}
}

// TestStrictJSONBodies: a JSON body must be exactly one value in valid UTF-8; trailing whitespace is
// fine. What the decoders would silently drop or rewrite is a 422 naming the body, and changes nothing.
func TestStrictJSONBodies(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	acct := env.NewAccount(t, store.TierPro, false, 0)
	token := env.Token(t, acct.Email, "keys")
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"one value", `{"label":"ok"}`, 201},
		{"trailing whitespace", "{\"label\":\"ok\"} \r\n\t\n", 201},
		{"garbage after the value", `{"label":"x"}garbage`, 422},
		{"a second object", `{"label":"x"}{}`, 422},
		{"a second value after a space", `{"label":"x"} 1`, 422},
		{"a stray closing brace", `{"label":"x"}}`, 422},
		{"invalid UTF-8 in a string", "{\"label\":\"bad\xff\"}", 422},
		{"overlong UTF-8 encoding", "{\"label\":\"\xc0\xaf\"}", 422},
		{"truncated UTF-8 sequence", "{\"label\":\"\xe6\x9d\"}", 422},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/keys", Token: token, RawBody: []byte(tc.body), ContentType: "application/json"})
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			if tc.status == 422 {
				p := r.Problem(t)
				require.Equal(t, "validation_error", p.Code)
				require.NotNil(t, p.Errors)
				require.Equal(t, "body", (*p.Errors)[0].Field)
			}
		})
	}
	// Only the two accepted bodies made keys.
	r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys?limit=100", Token: acct.Key})
	require.Equal(t, http.StatusOK, r.Status)
	var page gen.ApiKeyPage
	r.JSON(t, &page)
	require.Len(t, page.Items, 3, "the account's own key and the two accepted ones")
}

// TestOperationsEndpoints covers health, readiness, the document, the docs UI and metrics.
func TestOperationsEndpoints(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)

			tests := []struct {
				path        string
				contentType string
				check       func(t *testing.T, body []byte)
			}{
				{"/healthz", "application/json", func(t *testing.T, b []byte) { require.JSONEq(t, `{"status":"ok"}`, string(b)) }},
				{"/readyz", "application/json", func(t *testing.T, b []byte) {
					require.JSONEq(t, `{"status":"ok","checks":{"database":"ok"}}`, string(b))
				}},
				{"/openapi/v2.json", "application/json", func(t *testing.T, b []byte) { require.Equal(t, openapi.JSON, b) }},
				{"/api/v2/openapi.json", "application/json", func(t *testing.T, b []byte) { require.Equal(t, openapi.JSON, b) }},
				{"/docs", "text/html", func(t *testing.T, b []byte) {
					require.Contains(t, string(b), "swagger-ui")
					require.Contains(t, string(b), "/openapi/v2.json")
					require.NotContains(t, string(b), "cdn", "the docs must work offline")
				}},
				// An embedded asset (outside the document, so sent without the contract check).
				{"/docs/swagger-ui-bundle.js", "javascript", func(t *testing.T, b []byte) { require.Greater(t, len(b), 100_000) }},
				{"/.well-known/jwks.json", "application/json", func(t *testing.T, b []byte) {
					var set struct {
						Keys []map[string]any `json:"keys"`
					}
					require.NoError(t, json.Unmarshal(b, &set))
					require.Len(t, set.Keys, 1)
					require.Equal(t, "OKP", set.Keys[0]["kty"])
				}},
			}
			for _, tc := range tests {
				t.Run(tc.path, func(t *testing.T) {
					t.Parallel()
					req := servertest.Req{Method: "GET", Path: tc.path}
					var r *servertest.Resp
					if strings.HasPrefix(tc.path, "/docs/") {
						var err error
						r, err = env.Send(req)
						require.NoError(t, err)
					} else {
						r = env.Do(t, req)
					}
					require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
					require.Contains(t, r.Header.Get("Content-Type"), tc.contentType)
					tc.check(t, r.Body)
				})
			}
		})
	}
}

func TestMetricsCountRequestsByOperation(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, store.SQLite)
	acct := env.NewAccount(t, store.TierFree, false, 0)
	require.Equal(t, http.StatusOK, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: acct.Key}).Status)
	require.Equal(t, http.StatusUnauthorized, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys"}).Status)

	r := env.Do(t, servertest.Req{Method: "GET", Path: "/metrics"})
	require.Equal(t, http.StatusOK, r.Status)
	body := string(r.Body)
	require.Contains(t, body, `researchd_http_requests_total{method="GET",operation="listApiKeys",status="200"} 1`)
	require.Contains(t, body, `researchd_http_requests_total{method="GET",operation="listApiKeys",status="401"} 1`)
	require.Contains(t, body, `researchd_http_request_duration_seconds_count{method="GET",operation="listApiKeys"} 2`)
}

// TestPanicRecovery makes a handler's dependency panic: the client gets a 500 problem with its
// request ID, the log gets the panic with its stack, and the server keeps serving.
func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	var explode atomic.Bool
	logs := &lockedBuffer{}
	env := servertest.New(t, store.SQLite, func(c *servertest.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		// The clock is read when an API key is used; it panics on demand.
		c.Now = func() time.Time {
			if explode.Load() {
				panic("clock exploded")
			}
			return time.Now().UTC()
		}
	})
	acct := env.NewAccount(t, store.TierFree, false, 0)

	explode.Store(true)
	r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: acct.Key})
	explode.Store(false)
	require.Equal(t, http.StatusInternalServerError, r.Status)
	p := r.Problem(t)
	require.Equal(t, "internal_error", p.Code)
	require.NotContains(t, string(r.Body), "clock exploded", "internals must not leak to clients")
	require.Contains(t, logs.String(), `"msg":"panic"`)
	require.Contains(t, logs.String(), "clock exploded")
	require.Contains(t, logs.String(), *p.RequestId)
	require.Contains(t, logs.String(), `"stack":`)

	require.Equal(t, http.StatusOK, env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/keys", Token: acct.Key}).Status)
	// The access log has one structured line per request, with its operation and status.
	require.Contains(t, logs.String(), `"operation":"listApiKeys","status":500`)
	require.Contains(t, logs.String(), `"operation":"listApiKeys","status":200`)
}

// TestEveryOperationDocuments422 sanity-checks the response catalogue the
// property test relies on: unknown query parameters are refused everywhere, so every operation
// documents 422.
func TestEveryOperationDocuments422(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	require.NoError(t, err)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotNil(t, op.Responses.Value("422"), "%s %s (%s) must document 422", method, path, op.OperationID)
		}
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
