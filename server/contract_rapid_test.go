package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestContractProperties generates requests for every operation of the document from the document's
// own schemas — valid and deliberately broken, with every kind of credential — and checks that the
// server never fails (no 5xx but a documented 501 not_implemented), that every response conforms to
// the document, that credentials are judged before input, and that broken input is never accepted.
func TestContractProperties(t *testing.T) {
	t.Parallel()
	boundRapidChecks()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			fx := newContractFixture(t, env)
			ops := contractOps(env.Doc)
			require.NotEmpty(t, ops)
			for _, op := range ops {
				t.Run(op.id, func(t *testing.T) {
					t.Parallel()
					rapid.Check(t, func(rt *rapid.T) { fx.check(rt, op) })
				})
			}
		})
	}
}

var boundRapidOnce sync.Once

// boundRapidChecks keeps the property test fast (93 operations × 2 databases) unless the run asks for
// more with -rapid.checks or RAPID_CHECKS, and keeps failure files out of the source tree (the seed
// in the failure message reproduces a failure).
func boundRapidChecks() {
	boundRapidOnce.Do(func() {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["rapid.checks"] && os.Getenv("RAPID_CHECKS") == "" {
			_ = flag.Set("rapid.checks", "15")
		}
		if !set["rapid.nofailfile"] && os.Getenv("RAPID_NOFAILFILE") == "" {
			_ = flag.Set("rapid.nofailfile", "true")
		}
	})
}

// contractOp is one operation of the document as the property test sees it.
type contractOp struct {
	id, method, path string
	route            *routers.Route
	params           []*openapi3.Parameter
	media            string // request body media type; "" when the operation takes no body
	body             *openapi3.Schema
	bodyRequired     bool
	scope            string // x-scope
	public           bool   // no security alternative names a scheme: credentials are ignored
	anonymous        bool   // may run without credentials
	apiKey, oauth    bool
	uploadToken      bool
	has501           bool
}

func contractOps(doc *openapi3.T) []*contractOp {
	var ops []*contractOp
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			o := &contractOp{
				id: op.OperationID, method: method, path: path,
				route: &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op},
			}
			o.scope, _ = op.Extensions["x-scope"].(string)
			byKey := map[string]*openapi3.Parameter{}
			var order []string
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				k := p.Value.In + ":" + p.Value.Name
				if _, seen := byKey[k]; !seen {
					order = append(order, k)
				}
				byKey[k] = p.Value
			}
			for _, k := range order {
				o.params = append(o.params, byKey[k])
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				o.bodyRequired = rb.Value.Required
				// Exact keys: Content.Get would also match "*/*", the raw upload's any-type body.
				for media, key := range map[string]string{"application/json": "application/json", "multipart/form-data": "multipart/form-data", "application/octet-stream": "*/*"} {
					if mt := rb.Value.Content[key]; mt != nil {
						o.media = media
						if mt.Schema != nil {
							o.body = mt.Schema.Value
						}
						break
					}
				}
			}
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			o.public = true
			for _, alt := range sec {
				if len(alt) == 0 {
					o.anonymous = true
				}
				for name := range alt {
					o.public = false
					switch name {
					case "apiKey":
						o.apiKey = true
					case "oauth":
						o.oauth = true
					case "uploadToken":
						o.uploadToken = true
					}
				}
			}
			if len(sec) == 0 {
				o.anonymous = true
			}
			o.has501 = op.Responses.Value("501") != nil
			ops = append(ops, o)
		}
	}
	slices.SortFunc(ops, func(a, b *contractOp) int { return strings.Compare(a.id, b.id) })
	return ops
}

// credential kinds a generated request may carry.
const (
	credNone         = "none"
	credKey          = "api key with every scope"
	credLackingScope = "api key lacking the operation's scope"
	credUnknownKey   = "unknown api key"
	credRevokedKey   = "revoked api key"
	credToken        = "oauth token"
	credExpiredToken = "expired oauth token"
	credForeignToken = "oauth token signed by another issuer"
	credMalformed    = "malformed Authorization header"
)

type contractFixture struct {
	env                     *servertest.Env
	key, revoked, unknown   string
	token, expired, foreign string
	lacking                 map[string]string // scope → a key with every scope but it (and admin)
}

func newContractFixture(t *testing.T, env *servertest.Env) *contractFixture {
	ctx := context.Background()
	acct := env.NewAccount(t, store.TierEnterprise, false, 1000)
	fx := &contractFixture{env: env, key: acct.Key, unknown: auth.MintKey().Secret, lacking: map[string]string{}}
	fx.token = env.Token(t, acct.Email, auth.AllScopes...)
	var err error
	fx.expired, err = env.Dev.Mint(acct.Email, auth.AllScopes, -time.Hour)
	require.NoError(t, err)
	other, err := auth.LoadDevIssuer(t.TempDir())
	require.NoError(t, err)
	fx.foreign, err = other.Mint(acct.Email, auth.AllScopes, time.Hour)
	require.NoError(t, err)

	revokedKey, secret, err := createKeyRow(ctx, env, acct.ID)
	require.NoError(t, err)
	require.NoError(t, env.Store.RevokeAPIKey(ctx, acct.ID, revokedKey, time.Now()))
	fx.revoked = secret

	for _, scope := range auth.AllScopes {
		var rest []string
		for _, s := range auth.AllScopes {
			if s != scope && s != "admin" {
				rest = append(rest, s)
			}
		}
		fx.lacking[scope] = env.Key(t, acct.ID, rest...)
	}
	return fx
}

func createKeyRow(ctx context.Context, env *servertest.Env, accountID string) (id, secret string, err error) {
	nk := auth.MintKey()
	row := store.APIKey{ID: uuid.NewString(), AccountID: accountID, Prefix: nk.Prefix, Last4: nk.Last4, Hash: nk.Hash, Scopes: strings.Join(auth.AllScopes, " ")}
	if err := env.Store.CreateAPIKey(ctx, &row); err != nil {
		return "", "", err
	}
	return row.ID, nk.Secret, nil
}

// authorization returns the Authorization header value for a credential kind.
func (fx *contractFixture) authorization(kind string, op *contractOp) string {
	switch kind {
	case credKey:
		return "Bearer " + fx.key
	case credLackingScope:
		if op.scope == "" {
			return "Bearer " + fx.key
		}
		return "Bearer " + fx.lacking[op.scope]
	case credUnknownKey:
		return "Bearer " + fx.unknown
	case credRevokedKey:
		return "Bearer " + fx.revoked
	case credToken:
		return "Bearer " + fx.token
	case credExpiredToken:
		return "Bearer " + fx.expired
	case credForeignToken:
		return "Bearer " + fx.foreign
	case credMalformed:
		return "Basic dXNlcjpwYXNz"
	}
	return ""
}

// authOutcome is the status the authenticate middleware must answer for the credential, or 0 when
// the request passes on to validation and the handler.
func authOutcome(kind string, op *contractOp) int {
	if op.public || op.uploadToken {
		return 0 // credentials are not looked at (upload tokens are the handler's business)
	}
	isKey := kind == credKey || kind == credLackingScope || kind == credUnknownKey || kind == credRevokedKey
	switch {
	case kind == credNone:
		if op.anonymous {
			return 0
		}
		return http.StatusUnauthorized
	case kind == credMalformed:
		return http.StatusUnauthorized
	case isKey && !op.apiKey:
		return http.StatusForbidden // oauth_required
	case kind == credUnknownKey || kind == credRevokedKey:
		return http.StatusUnauthorized
	case kind == credLackingScope && op.scope != "" && !op.anonymous:
		// (Where anyone may read, such a key reads what anyone may; the handler decides.)
		return http.StatusForbidden
	case isKey:
		return 0
	case !op.oauth:
		return http.StatusUnauthorized // a token where only API keys are accepted
	case kind == credToken:
		return 0
	default:
		return http.StatusUnauthorized // expired or foreign token
	}
}

// contractReq is a generated request and what the generator meant by it.
type contractReq struct {
	req        servertest.Req
	pathParams map[string]string // unescaped
	mutation   string            // "" for a request that conforms to the document
	field      string            // the errors[].field a 422 for the mutation must name, if any
}

func (fx *contractFixture) check(t *rapid.T, op *contractOp) {
	g := generator{t: t}
	cr := g.request(op)
	// Mostly credentials that pass, so handlers see plenty of traffic; every refusal path too.
	cred := rapid.SampledFrom([]string{
		credKey, credKey, credKey, credKey, credKey, credKey, credToken, credToken,
		credNone, credLackingScope, credUnknownKey, credRevokedKey, credExpiredToken, credForeignToken, credMalformed,
	}).Draw(t, "credential")
	if h := fx.authorization(cred, op); h != "" {
		if cr.req.Header == nil {
			cr.req.Header = http.Header{}
		}
		cr.req.Header.Set("Authorization", h)
	}

	if cr.mutation == "" {
		if err := oracle(op, cr); err != nil {
			t.Fatalf("generator bug: a request meant to conform does not: %v", err)
		}
	}

	resp, err := fx.env.Send(cr.req)
	if err != nil {
		t.Fatalf("%s %s: %v", cr.req.Method, cr.req.Path, err)
	}
	if err := fx.env.Check(cr.req, resp); err != nil {
		t.Fatalf("%s %s answered %d, which breaks the contract: %v\nbody: %s", cr.req.Method, cr.req.Path, resp.Status, err, resp.Body)
	}
	var problem gen.Problem
	if resp.Status >= 400 {
		if err := json.Unmarshal(resp.Body, &problem); err != nil {
			t.Fatalf("problem body: %v: %s", err, resp.Body)
		}
	}
	if resp.Status >= 500 && (resp.Status != http.StatusNotImplemented || !op.has501 || problem.Code != "not_implemented") {
		t.Fatalf("%s %s (credential %q, mutation %q) answered %d: %s", cr.req.Method, cr.req.Path, cred, cr.mutation, resp.Status, resp.Body)
	}
	if want := authOutcome(cred, op); want != 0 {
		if resp.Status != want {
			t.Fatalf("credential %q on %s: want %d, got %d: %s", cred, op.id, want, resp.Status, resp.Body)
		}
		if want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("401 without WWW-Authenticate")
		}
		return
	}
	if cr.mutation != "" && (resp.Status < 400 || resp.Status >= 500) {
		t.Fatalf("%s %s with %s was not refused: %d %s", cr.req.Method, cr.req.Path, cr.mutation, resp.Status, resp.Body)
	}
	if cr.field != "" && problem.Code == "validation_error" {
		var named []string
		if problem.Errors != nil {
			for _, fe := range *problem.Errors {
				named = append(named, fe.Field)
			}
		}
		if !slices.Contains(named, cr.field) {
			t.Fatalf("%s: the 422 names %q, not %q: %s", cr.mutation, named, cr.field, resp.Body)
		}
	}
	if cr.mutation == "" && resp.Status == http.StatusUnprocessableEntity && problem.Errors != nil && fromValidator(problem) {
		// Handlers may refuse valid input on its merits (with their own detail), but the document
		// validator must accept every parameter the document accepts.
		for _, fe := range *problem.Errors {
			if strings.HasPrefix(fe.Field, "path.") || strings.HasPrefix(fe.Field, "header.") {
				t.Fatalf("a conforming %s was refused: %s", fe.Field, resp.Body)
			}
		}
	}
}

// fromValidator reports whether a 422 was written by the request validator (server/validate.go),
// whose detail is its one error ("field: message") or a summary of several.
func fromValidator(p gen.Problem) bool {
	if p.Detail == nil || p.Errors == nil {
		return false
	}
	errs := *p.Errors
	if len(errs) == 1 {
		return *p.Detail == errs[0].Field+": "+errs[0].Message
	}
	return *p.Detail == "the request does not match the API document"
}

// oracle validates a generated request against the document locally, with kin-openapi, exactly as
// the document (not the server) says, so the generator cannot drift from the document unnoticed.
func oracle(op *contractOp, cr contractReq) error {
	var body []byte
	if cr.req.RawBody != nil {
		body = cr.req.RawBody
	} else if cr.req.Body != nil {
		b, err := json.Marshal(cr.req.Body)
		if err != nil {
			return err
		}
		body = b
	}
	hreq, err := http.NewRequest(cr.req.Method, "http://oracle"+cr.req.Path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range cr.req.Header {
		hreq.Header[k] = vs
	}
	if ct := cr.req.ContentType; ct != "" {
		hreq.Header.Set("Content-Type", ct)
	} else if cr.req.Body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if body == nil {
		hreq.Body = http.NoBody
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: hreq, PathParams: cr.pathParams, Route: op.route,
		Options: &openapi3filter.Options{
			ExcludeRequestBody: op.media != "application/json",
			AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		},
	})
}

// generator draws values from schemas.
type generator struct{ t *rapid.T }

const maxDepth = 5

// request draws a conforming request for op and then, sometimes, breaks exactly one thing in it.
func (g generator) request(op *contractOp) contractReq {
	pathParams := map[string]string{}
	query := url.Values{}
	header := http.Header{}
	var sites []mutationSite
	addSite := func(what, field string, fn func()) { sites = append(sites, mutationSite{what, field, fn}) }
	for _, p := range op.params {
		s := flatten(p.Schema.Value)
		label := p.In + "." + p.Name
		switch p.In {
		case openapi3.ParameterInPath:
			pathParams[p.Name] = g.paramValue(s, label, false)
			for _, bad := range badParamValues(s, true) {
				addSite(fmt.Sprintf("%s=%.40q", label, bad), label, func() { pathParams[p.Name] = bad })
			}
		case openapi3.ParameterInQuery:
			if p.Required || rapid.Bool().Draw(g.t, label+"?") {
				query.Set(p.Name, g.paramValue(s, label, false))
			}
			for _, bad := range badParamValues(s, false) {
				addSite(fmt.Sprintf("%s=%.40q", label, bad), label, func() { query.Set(p.Name, bad) })
			}
			if p.Required {
				addSite("missing required "+label, label, func() { query.Del(p.Name) })
			}
		case openapi3.ParameterInHeader:
			if p.Required || rapid.Bool().Draw(g.t, label+"?") {
				header.Set(p.Name, g.paramValue(s, label, true))
			}
			for _, bad := range badParamValues(s, true) {
				if strings.TrimSpace(bad) == bad && !strings.ContainsFunc(bad, func(r rune) bool { return r < ' ' }) {
					addSite(fmt.Sprintf("%s=%.40q", label, bad), label, func() { header.Set(p.Name, bad) })
				}
			}
		}
	}
	addSite("unknown query parameter bogus", "query.bogus", func() { query.Set("bogus", "1") })

	var (
		body        any
		raw         []byte
		contentType string
		bodySites   []mutationSite
	)
	switch op.media {
	case "application/json":
		if op.bodyRequired || rapid.Bool().Draw(g.t, "send optional body") {
			root := g.value(op.body, 0, "body")
			body = root
			g.sitesOf(op.body, root, "", func(v any) { body = v }, &bodySites)
			bodySites = append(bodySites,
				mutationSite{"malformed JSON", "", func() { body, raw, contentType = nil, []byte(`{"unterminated": `), "application/json" }},
				mutationSite{"text/plain body", "", func() { body, raw, contentType = nil, []byte("hello"), "text/plain" }},
				mutationSite{"data after the JSON value", "body", func() {
					body, raw, contentType = nil, append(marshalBody(g.t, body), "garbage"...), "application/json"
				}},
				mutationSite{"a second JSON value", "body", func() {
					b := marshalBody(g.t, body)
					body, raw, contentType = nil, append(b, b...), "application/json"
				}},
				mutationSite{"invalid UTF-8", "body", func() {
					body, raw, contentType = nil, invalidUTF8(marshalBody(g.t, body)), "application/json"
				}},
			)
			if op.bodyRequired {
				bodySites = append(bodySites, mutationSite{"missing body", "", func() { body, raw, contentType = nil, nil, "" }})
			}
		}
	case "multipart/form-data":
		raw, contentType = g.multipart(op.body)
	case "application/octet-stream":
		raw = rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(g.t, "bytes")
		contentType = "application/octet-stream"
	}

	if op.id == "a2aJsonRpc" {
		// JSON-RPC answers a bad body with a JSON-RPC error (HTTP 200), not a 422 (a2a_test.go).
		bodySites = nil
	}
	mutation, field := "", ""
	if rapid.IntRange(0, 2).Draw(g.t, "break something") == 0 {
		m := rapid.SampledFrom(append(sites, bodySites...)).Draw(g.t, "mutation")
		m.apply()
		mutation, field = m.what, m.field
	}

	path := op.path
	for name, v := range pathParams {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if q := query.Encode(); q != "" {
		path += "?" + q
	}
	req := servertest.Req{Method: op.method, Path: path, Header: header, ContentType: contentType}
	switch {
	case raw != nil:
		req.RawBody = raw
	case body != nil:
		req.Body = bodyValue{body}
	}
	return contractReq{req: req, pathParams: pathParams, mutation: mutation, field: field}
}

func marshalBody(t *rapid.T, v any) []byte {
	b, err := json.Marshal(bodyValue{v})
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	return b
}

// invalidUTF8 puts a byte that is never valid UTF-8 into the first string of a JSON text (which then
// stays well-formed JSON), or after it when it has no string.
func invalidUTF8(b []byte) []byte {
	if i := bytes.IndexByte(b, '"'); i >= 0 {
		return slices.Concat(b[:i+1], []byte{0xff}, b[i+1:])
	}
	return append(b, 0xff)
}

// bodyValue marshals a generated value as it is, JSON null included (servertest skips a nil Body).
type bodyValue struct{ v any }

func (b bodyValue) MarshalJSON() ([]byte, error) { return json.Marshal(b.v) }

// mutationSite is one way to break a request: what it does, the errors[].field a 422 must name
// ("" when none is specific), and how.
type mutationSite struct {
	what, field string
	apply       func()
}

// pointer is how the server names a body field: a JSON pointer without the leading slash.
func pointer(at, key string) string { return strings.TrimPrefix(at+"/"+key, "/") }

// flatten resolves allOf wrappers (the document uses them to add nullable, default or a description
// to a $ref) into one schema.
func flatten(s *openapi3.Schema) *openapi3.Schema {
	if s == nil || len(s.AllOf) == 0 {
		return s
	}
	out := *flatten(s.AllOf[0].Value)
	for _, ref := range s.AllOf[1:] {
		sub := flatten(ref.Value)
		props := openapi3.Schemas{}
		for k, v := range out.Properties {
			props[k] = v
		}
		for k, v := range sub.Properties {
			props[k] = v
		}
		out.Properties = props
		out.Required = append(slices.Clone(out.Required), sub.Required...)
	}
	out.Nullable = out.Nullable || s.Nullable
	if s.Default != nil {
		out.Default = s.Default
	}
	return &out
}

func is(s *openapi3.Schema, typ string) bool { return s.Type != nil && s.Type.Is(typ) }

func isObject(s *openapi3.Schema) bool {
	return is(s, "object") || (s.Type == nil && len(s.Properties) > 0)
}

// value draws a value that conforms to s.
func (g generator) value(s *openapi3.Schema, depth int, label string) any {
	s = flatten(s)
	if s.Nullable && rapid.IntRange(0, 5).Draw(g.t, label+"?null") == 0 {
		return nil
	}
	if len(s.Enum) > 0 {
		var vals []any
		for _, v := range s.Enum {
			if v != nil {
				vals = append(vals, v)
			}
		}
		return rapid.SampledFrom(vals).Draw(g.t, label)
	}
	if len(s.OneOf) > 0 {
		i := rapid.IntRange(0, len(s.OneOf)-1).Draw(g.t, label+"?oneOf")
		return g.value(s.OneOf[i].Value, depth, label)
	}
	switch {
	case is(s, "string"):
		return g.str(s, label, plainRunes)
	case is(s, "integer"):
		lo, hi := intBounds(s)
		return g.boundaryInt(lo, hi, label)
	case is(s, "number"):
		lo, hi := intBounds(s)
		if rapid.Bool().Draw(g.t, label+"?int") {
			return float64(g.boundaryInt(lo, hi, label))
		}
		return rapid.Float64Range(float64(lo), float64(hi)).Draw(g.t, label)
	case is(s, "boolean"):
		return rapid.Bool().Draw(g.t, label)
	case is(s, "array"):
		return g.array(s, depth, label)
	case isObject(s):
		return g.object(s, depth, label)
	default:
		return g.anyValue(label)
	}
}

func (g generator) anyValue(label string) any {
	switch rapid.IntRange(0, 3).Draw(g.t, label+"?any") {
	case 0:
		return rapid.StringMatching(`[a-z ]{0,12}`).Draw(g.t, label)
	case 1:
		return float64(rapid.IntRange(-1000, 1000).Draw(g.t, label))
	case 2:
		return rapid.Bool().Draw(g.t, label)
	default:
		return map[string]any{} // not null: a schema without nullable refuses null even without a type
	}
}

func (g generator) array(s *openapi3.Schema, depth int, label string) []any {
	lo := int(s.MinItems)
	hi := lo + 3
	if s.MaxItems != nil && int(*s.MaxItems) < hi {
		hi = int(*s.MaxItems)
	}
	n := rapid.IntRange(lo, hi).Draw(g.t, label+"?len")
	out := make([]any, 0, n)
	seen := map[string]bool{}
	for i := 0; len(out) < n && i < 3*n+3; i++ {
		v := g.value(s.Items.Value, depth+1, fmt.Sprintf("%s[%d]", label, len(out)))
		if s.UniqueItems {
			b, _ := json.Marshal(v)
			if seen[string(b)] {
				continue
			}
			seen[string(b)] = true
		}
		out = append(out, v)
	}
	if len(out) < lo {
		g.t.Skip("could not draw enough distinct items")
	}
	return out
}

func (g generator) object(s *openapi3.Schema, depth int, label string) map[string]any {
	out := map[string]any{}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var skipped []string
	for _, name := range names {
		p := s.Properties[name].Value
		if p.ReadOnly {
			continue
		}
		if !slices.Contains(s.Required, name) && (depth >= maxDepth || !rapid.Bool().Draw(g.t, label+"."+name+"?")) {
			skipped = append(skipped, name)
			continue
		}
		out[name] = g.value(p, depth+1, label+"."+name)
	}
	for _, name := range skipped {
		if uint64(len(out)) >= s.MinProps {
			break
		}
		out[name] = g.value(s.Properties[name].Value, depth+1, label+"."+name)
	}
	extra := s.AdditionalProperties
	if len(s.Properties) == 0 && (extra.Has == nil || *extra.Has || extra.Schema != nil) {
		n := rapid.IntRange(int(s.MinProps), int(s.MinProps)+3).Draw(g.t, label+"?props")
		for i := 0; i < n; i++ {
			k := rapid.StringMatching(`[a-z][a-z_]{0,9}`).Draw(g.t, label+"?key")
			if extra.Schema != nil {
				out[k] = g.value(extra.Schema.Value, depth+1, label+"."+k)
			} else {
				out[k] = g.anyValue(label + "." + k)
			}
		}
	}
	return out
}

var (
	// plainRunes are mostly ASCII (URL and JSON specials included) and sometimes any rune but NUL,
	// which the server refuses in text (see badStrings).
	plainRunes = rapid.OneOf(rapid.RuneFrom([]rune("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 -_.,:/?&%+#'\"\n\t")), rapid.Rune().Filter(func(r rune) bool { return r != 0 }))
	// headerRunes are '!'..'~': header values that survive transport unchanged.
	headerRunes = rapid.RuneFrom(nil, &unicode.RangeTable{R16: []unicode.Range16{{Lo: '!', Hi: '~', Stride: 1}}})
)

func (g generator) str(s *openapi3.Schema, label string, runes *rapid.Generator[rune]) string {
	switch s.Format {
	case "uuid":
		b := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(g.t, label)
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return uuid.Must(uuid.FromBytes(b)).String()
	case "date-time":
		sec := rapid.Int64Range(0, 4102444800).Draw(g.t, label)
		return time.Unix(sec, 0).UTC().Format(time.RFC3339)
	case "email":
		return rapid.StringMatching(`[a-z][a-z0-9.]{0,15}@example\.(com|org)`).Draw(g.t, label)
	case "uri":
		return "https://example.com/" + rapid.StringMatching(`[a-z0-9]{0,20}`).Draw(g.t, label)
	}
	lo := int(s.MinLength)
	hi := lo + 24
	if s.MaxLength != nil && int(*s.MaxLength) < hi {
		hi = int(*s.MaxLength)
	}
	if s.Pattern != "" {
		re := regexp.MustCompile(s.Pattern)
		return rapid.StringMatching(s.Pattern).Filter(func(v string) bool {
			n := len([]rune(v))
			return re.MatchString(v) && n >= lo && (s.MaxLength == nil || n <= int(*s.MaxLength))
		}).Draw(g.t, label)
	}
	n := rapid.IntRange(lo, hi).Draw(g.t, label+"?len")
	// Sometimes exactly the longest the document allows (when that is still a small request).
	if s.MaxLength != nil && *s.MaxLength <= 512 && rapid.IntRange(0, 4).Draw(g.t, label+"?max") == 0 {
		n = int(*s.MaxLength)
	}
	return rapid.StringOfN(runes, n, n, -1).Draw(g.t, label)
}

func intBounds(s *openapi3.Schema) (lo, hi int) {
	lo, hi = -1000, 1000
	if s.Min != nil {
		lo = int(math.Ceil(*s.Min))
		if s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool && float64(lo) == *s.Min {
			lo++
		}
		if s.Max == nil {
			hi = lo + 10000
		}
	}
	if s.Max != nil {
		hi = int(math.Floor(*s.Max))
		if s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool && float64(hi) == *s.Max {
			hi--
		}
		if s.Min == nil {
			lo = hi - 10000
		}
	}
	return lo, hi
}

func (g generator) boundaryInt(lo, hi int, label string) int {
	switch rapid.IntRange(0, 5).Draw(g.t, label+"?edge") {
	case 0:
		return lo
	case 1:
		return hi
	}
	return rapid.IntRange(lo, hi).Draw(g.t, label)
}

// paramValue draws a conforming parameter value in its serialized (simple, form) form.
func (g generator) paramValue(s *openapi3.Schema, label string, header bool) string {
	if len(s.Enum) > 0 {
		return fmt.Sprint(rapid.SampledFrom(s.Enum).Draw(g.t, label))
	}
	switch {
	case is(s, "integer"), is(s, "number"):
		lo, hi := intBounds(s)
		return strconv.Itoa(g.boundaryInt(lo, hi, label))
	case is(s, "boolean"):
		return strconv.FormatBool(rapid.Bool().Draw(g.t, label))
	}
	if header {
		return g.str(s, label, headerRunes)
	}
	return g.str(s, label, plainRunes)
}

// badParamValues lists serialized values the document refuses for a parameter schema.
func badParamValues(s *openapi3.Schema, inPath bool) []string {
	var out []string
	switch {
	case len(s.Enum) > 0:
		out = append(out, "bogus-enum-value")
	case is(s, "integer"):
		out = append(out, "abc", "1.5")
		lo, hi := intBounds(s)
		if s.Min != nil {
			out = append(out, strconv.Itoa(lo-1))
		}
		if s.Max != nil {
			out = append(out, strconv.Itoa(hi+1))
		}
	case is(s, "boolean"):
		out = append(out, "maybe")
	case is(s, "string"):
		out = append(out, badStrings(s)...)
	}
	if inPath {
		out = slices.DeleteFunc(out, func(v string) bool { return v == "" })
	}
	return out
}

func badStrings(s *openapi3.Schema) []string {
	// PostgreSQL cannot store NUL in text, so the server refuses it in every string (422).
	out := []string{"nul\x00inside"}
	switch s.Format {
	case "uuid":
		out = append(out, "not-a-uuid")
	case "date-time":
		out = append(out, "yesterday")
	case "email":
		out = append(out, "nobody")
	}
	if s.MaxLength != nil && *s.MaxLength < 5000 {
		out = append(out, strings.Repeat("x", int(*s.MaxLength)+1))
	}
	if s.MinLength > 0 {
		out = append(out, strings.Repeat("x", int(s.MinLength)-1))
	}
	if s.Pattern != "" {
		re := regexp.MustCompile(s.Pattern)
		for _, c := range []string{"!", "UPPER", "has space", "-x", "x\x01y", strings.Repeat("z", 300)} {
			if !re.MatchString(c) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// sitesOf lists the ways to break value v (which conforms to s) at every position in it; set
// replaces v in its parent.
func (g generator) sitesOf(s *openapi3.Schema, v any, at string, set func(any), out *[]mutationSite) {
	s = flatten(s)
	add := func(what string, bad any) {
		field := at
		if field == "" {
			field = "body"
		}
		*out = append(*out, mutationSite{what, field, func() { set(bad) }})
	}
	if len(s.OneOf) > 0 {
		add("wrong type (boolean for oneOf)", true)
		return
	}
	switch {
	case is(s, "string"):
		add("wrong type (number for string)", 12345)
	case is(s, "integer"), is(s, "number"):
		add("wrong type (string for number)", "seven")
	case is(s, "boolean"):
		add("wrong type (string for boolean)", "yes")
	case is(s, "array"):
		add("wrong type (object for array)", map[string]any{"not": "an array"})
	case isObject(s):
		add("wrong type (array for object)", []any{"not an object"})
	}
	if len(s.Enum) > 0 && is(s, "string") {
		add("value outside the enum", "bogus-enum-value")
	}
	switch {
	case is(s, "string") && len(s.Enum) == 0:
		for _, bad := range badStrings(s) {
			add(fmt.Sprintf("bad string %.40q", bad), bad)
		}
	case is(s, "integer"), is(s, "number"):
		lo, hi := intBounds(s)
		if s.Min != nil {
			add("below minimum", float64(lo-1))
		}
		if s.Max != nil {
			add("above maximum", float64(hi+1))
		}
		if is(s, "integer") {
			add("fraction for integer", 1.5)
		}
	case is(s, "array"):
		arr, _ := v.([]any)
		if s.MaxItems != nil && *s.MaxItems <= 200 && s.Items != nil {
			long := slices.Clone(arr)
			for uint64(len(long)) <= *s.MaxItems {
				long = append(long, g.value(s.Items.Value, maxDepth, "filler"))
			}
			add("too many items", long)
		}
		if s.MinItems > 0 && uint64(len(arr)) >= s.MinItems {
			add("too few items", arr[:s.MinItems-1])
		}
		for i := range arr {
			g.sitesOf(s.Items.Value, arr[i], pointer(at, strconv.Itoa(i)), func(x any) { arr[i] = x }, out)
		}
	case isObject(s):
		obj, _ := v.(map[string]any)
		if obj == nil {
			return
		}
		if has := s.AdditionalProperties.Has; has != nil && !*has {
			*out = append(*out, mutationSite{"unknown field bogus", pointer(at, "bogus"), func() { obj["bogus"] = 1 }})
		}
		for _, name := range s.Required {
			*out = append(*out, mutationSite{"missing required " + name, pointer(at, name), func() { delete(obj, name) }})
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			names = append(names, name)
		}
		slices.Sort(names) // deterministic order: rapid replays draws by position
		for _, name := range names {
			if p := s.Properties[name]; p != nil {
				g.sitesOf(p.Value, obj[name], pointer(at, name), func(x any) { obj[name] = x }, out)
			}
		}
	}
}

// multipart draws a small form for a multipart schema: binary properties become file parts (arrays
// of them repeated parts), everything else a field.
func (g generator) multipart(s *openapi3.Schema) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	file := func(name, label string) {
		fname := rapid.StringMatching(`[a-z][a-z0-9_-]{0,11}\.(txt|md|csv)`).Draw(g.t, label+".filename")
		content := rapid.StringMatching(`[a-zA-Z0-9 ,.\n]{0,64}`).Draw(g.t, label+".content")
		fw, err := w.CreateFormFile(name, fname)
		if err != nil {
			g.t.Fatalf("multipart: %v", err)
		}
		_, _ = fw.Write([]byte(content))
	}
	s = flatten(s)
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := flatten(s.Properties[name].Value)
		if !slices.Contains(s.Required, name) && !rapid.Bool().Draw(g.t, "form."+name+"?") {
			continue
		}
		switch {
		case p.Format == "binary":
			file(name, "form."+name)
		case is(p, "array") && p.Items != nil && p.Items.Value.Format == "binary":
			hi := int(p.MinItems) + 2
			if p.MaxItems != nil && int(*p.MaxItems) < hi {
				hi = int(*p.MaxItems)
			}
			n := rapid.IntRange(int(p.MinItems), hi).Draw(g.t, "form."+name+"?len")
			for i := range n {
				file(name, fmt.Sprintf("form.%s[%d]", name, i))
			}
		default:
			_ = w.WriteField(name, fmt.Sprint(g.value(p, maxDepth, "form."+name)))
		}
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}
