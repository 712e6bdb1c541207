package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// getRoute is one GET operation of the document with a concrete path to call it on.
type getRoute struct {
	opID, path string
	oauth      bool // the operation takes an OAuth token, not an API key
}

// everyGet lists the document's GET operations, filling path parameters with the given values
// (by name) or with a well-formed value of their schema, and required query parameters likewise.
func everyGet(t *testing.T, values map[string]string) []getRoute {
	t.Helper()
	doc, err := openapi.Load()
	require.NoError(t, err)
	var out []getRoute
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		op := item.Get
		if op == nil {
			continue
		}
		concrete, query := path, []string{}
		for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
			v, ok := values[p.Value.Name]
			if !ok {
				v = sampleValue(p.Value.Schema.Value)
			}
			switch {
			case p.Value.In == openapi3.ParameterInPath:
				concrete = strings.ReplaceAll(concrete, "{"+p.Value.Name+"}", v)
			case p.Value.In == openapi3.ParameterInQuery && p.Value.Required:
				query = append(query, p.Value.Name+"="+v)
			}
		}
		if len(query) > 0 {
			sort.Strings(query)
			concrete += "?" + strings.Join(query, "&")
		}
		oauth := false
		if op.Security != nil {
			for _, alt := range *op.Security {
				_, oauth = alt["oauth"]
			}
		}
		out = append(out, getRoute{opID: op.OperationID, path: concrete, oauth: oauth})
	}
	return out
}

func sampleValue(s *openapi3.Schema) string {
	switch {
	case len(s.Enum) > 0:
		return fmt.Sprint(s.Enum[0])
	case s.Type.Is("integer"):
		if s.Min != nil {
			return fmt.Sprint(int(*s.Min))
		}
		return "1"
	case s.Format == "uuid":
		return uuid.NewString()
	}
	return "sample"
}

// TestHeadOnEveryGetRoute sends HEAD and GET to every GET operation of the document (RFC 9110
// section 9.3.2): the same status and headers, and no body.
func TestHeadOnEveryGetRoute(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierEnterprise, true, 50)
			tok := e.Token(t, owner.Email, "keys", "research")
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "Why do routers answer HEAD?", "effort": "low"})
			e.await(t, owner.Key, job.Slug, isTerminal)
			values := map[string]string{"job_id_or_slug": job.Slug, "job_id": job.JobId.String(), "file_path": "report.md",
				"expert_id": "general", "skill_name": "web-research"}
			sameHeaders := []string{"Content-Type", "Content-Length", "X-Content-Type-Options", "Content-Security-Policy", "Location", "WWW-Authenticate"}
			statuses := map[string]int{}
			for _, rt := range everyGet(t, values) {
				key := owner.Key
				if rt.oauth {
					key = tok
				}
				get := servertest.Req{Method: "GET", Path: rt.path, Token: key}
				head := get
				head.Method = "HEAD"
				g, err := e.Send(get)
				require.NoError(t, err)
				h := e.Do(t, head) // contract-checked: a documented status, headers as the GET's
				require.Equal(t, g.Status, h.Status, "%s %s", rt.opID, rt.path)
				require.Empty(t, h.Body, "%s: HEAD sent a body", rt.opID)
				for _, name := range sameHeaders {
					if name == "Content-Length" && g.Header.Get(name) == "" {
						continue // a streamed or chunked GET; HEAD may state the length or not
					}
					require.Equal(t, g.Header.Get(name), h.Header.Get(name), "%s: header %s", rt.opID, name)
				}
				require.NotEmpty(t, h.Header.Get("X-Request-Id"), rt.opID)
				statuses[rt.opID] = h.Status
			}
			// The routes the issue named answer 200, not 405 or 422.
			for _, op := range []string{"getResearchJob", "getResearchFile", "getHealth", "getQuota", "getRun", "listResearchFiles", "streamResearchEvents", "getDocs", "getMetrics"} {
				require.Equal(t, http.StatusOK, statuses[op], op)
			}
		})
	}
}

// TestUnsupportedMediaType sends a text/plain body to every operation that takes a body in a listed
// media type: each answers the documented 415 unsupported_media_type (naming what it accepts), and
// nothing runs.
func TestUnsupportedMediaType(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			admin := e.NewAccount(t, store.TierEnterprise, true, 50)
			tok := e.Token(t, admin.Email, "keys")
			doc, err := openapi.Load()
			require.NoError(t, err)
			n := 0
			for _, path := range doc.Paths.InMatchingOrder() {
				for method, op := range doc.Paths.Value(path).Operations() {
					if op.RequestBody == nil || op.Responses.Value("415") == nil {
						continue
					}
					n++
					concrete := path
					for _, p := range op.Parameters {
						if p.Value.In == openapi3.ParameterInPath {
							concrete = strings.ReplaceAll(concrete, "{"+p.Value.Name+"}", sampleValue(p.Value.Schema.Value))
						}
					}
					for _, p := range doc.Paths.Value(path).Parameters {
						concrete = strings.ReplaceAll(concrete, "{"+p.Value.Name+"}", sampleValue(p.Value.Schema.Value))
					}
					key := admin.Key
					if op.Security != nil && len(*op.Security) > 0 {
						if _, ok := (*op.Security)[0]["oauth"]; ok {
							key = tok
						}
					}
					r := e.Do(t, servertest.Req{Method: method, Path: concrete, Token: key, RawBody: []byte(`{"x": 1}`), ContentType: "text/plain"})
					require.Equal(t, http.StatusUnsupportedMediaType, r.Status, "%s %s: %s", method, concrete, r.Body)
					p := r.Problem(t)
					require.Equal(t, "unsupported_media_type", p.Code)
					require.Contains(t, *p.Detail, `"text/plain"`)
				}
			}
			require.Greater(t, n, 20, "operations with a request body")
			var jobs struct{ Items []any }
			e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: admin.Key}).JSON(t, &jobs)
			require.Empty(t, jobs.Items)
		})
	}
}

// TestMediaTypesCaseInsensitive: type and subtype are case-insensitive (RFC 9110 section 8.3.1), for
// JSON bodies and multipart ones (whose case-sensitive boundary must survive).
func TestMediaTypesCaseInsensitive(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := servertest.New(t, d)
			acct := e.NewAccount(t, store.TierPro, false, 10)
			for _, ct := range []string{"application/JSON", "Application/Json; charset=UTF-8", " APPLICATION/JSON "} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: acct.Key,
					RawBody: []byte(`{"question": "Does case matter in media types?", "effort": "low"}`), ContentType: ct})
				require.Equal(t, http.StatusAccepted, r.Status, "%q: %s", ct, r.Body)
			}
			body, ct := multipartBody(t, part{filename: "notes.txt", data: []byte("Media types are case-insensitive.\n")})
			ct = strings.Replace(ct, "multipart/form-data", "Multipart/Form-Data", 1)
			require.Contains(t, ct, "boundary=")
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: acct.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			// Still refused when it is not JSON in any case.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: acct.Key, RawBody: []byte(`{}`), ContentType: "Text/Plain"})
			require.Equal(t, http.StatusUnsupportedMediaType, r.Status)
		})
	}
}

// TestRootPointsToConsole: GET / (and HEAD /) redirects to the console, which links Swagger UI.
func TestRootPointsToConsole(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, store.SQLite)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, method := range []string{"GET", "HEAD"} {
		req, err := http.NewRequest(method, e.URL+"/", bytes.NewReader(nil))
		require.NoError(t, err)
		res, err := client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusFound, res.StatusCode, method)
		require.Equal(t, "/console", res.Header.Get("Location"), method)
	}
}
