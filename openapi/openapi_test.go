package openapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/researchd/researchd/openapi"
)

// TestDocumentIsValid loads the document and validates it, examples included.
func TestDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatal(err)
	}
}

// TestOperationConventions holds every operation to the house rules, so Swagger UI keeps reading as
// product documentation and clients can rely on the error responses.
func TestOperationConventions(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for _, tag := range doc.Tags {
		tags[tag.Name] = true
	}
	ids := map[string]string{}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			where := method + " " + path
			t.Run(where, func(t *testing.T) {
				checkOperation(t, doc, item, op, tags)
				if prev, dup := ids[op.OperationID]; dup {
					t.Errorf("operationId %s is also used by %s", op.OperationID, prev)
				}
				ids[op.OperationID] = where
			})
		}
	}
}

// TestNoGeneratedNameCollisions: oapi-codegen's client names each operation's types <OperationId>Response,
// <OperationId>Params and <OperationId>JSONRequestBody; a schema of the same name breaks the build of
// the generated client (scripts/client-check.sh compiles it; this catches it without npm or a build).
func TestNoGeneratedNameCollisions(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			base := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:]
			for _, suffix := range []string{"Response", "Params", "JSONBody", "JSONRequestBody", "MultipartBody", "MultipartRequestBody"} {
				if doc.Components.Schemas[base+suffix] != nil || doc.Components.Responses[base+suffix] != nil {
					t.Errorf("component %s collides with a type generated for operation %s: rename it", base+suffix, op.OperationID)
				}
			}
		}
	}
}

func checkOperation(t *testing.T, doc *openapi3.T, item *openapi3.PathItem, op *openapi3.Operation, tags map[string]bool) {
	if op.OperationID == "" {
		t.Error("no operationId")
	}
	if len(op.Tags) != 1 || !tags[op.Tags[0]] {
		t.Errorf("needs exactly one declared tag, has %v", op.Tags)
	}
	if op.Summary == "" || len(op.Description) < 40 {
		t.Error("needs a summary and a description that carries the behaviour")
	}
	has := func(code string) bool { return op.Responses.Value(code) != nil }
	ok2xx := false
	for code, r := range op.Responses.Map() {
		ok2xx = ok2xx || strings.HasPrefix(code, "2")
		if code == "default" {
			t.Error("no default response: list each status")
		}
		if code >= "400" && r.Ref == "" {
			t.Errorf("error response %s must $ref #/components/responses/...", code)
		}
	}
	if !ok2xx || !has("500") {
		t.Error("needs a 2xx and a 500 response")
	}
	params := append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
	hasPath := false
	for _, p := range params {
		hasPath = hasPath || (p.Value != nil && p.Value.In == openapi3.ParameterInPath)
	}
	if !has("422") {
		t.Error("no 422: unknown query parameters are refused everywhere")
	}
	if hasPath && !has("404") {
		t.Error("path parameter but no 404")
	}
	for code, r := range op.Responses.Map() {
		if r.Value != nil && r.Value.Headers["X-Request-Id"] == nil {
			t.Errorf("response %s does not declare X-Request-Id (make generate runs scripts/openapi-conventions.py)", code)
		}
	}
	if op.RequestBody != nil {
		if !has("413") {
			t.Error("request body but no 413")
		}
		_, anyType := op.RequestBody.Value.Content["*/*"]
		if !anyType && op.OperationID != "a2aJsonRpc" && !has("415") {
			t.Error("request body but no 415 (make generate runs scripts/openapi-conventions.py)")
		}
		for mt, c := range op.RequestBody.Value.Content {
			if strings.Contains(mt, "json") && c.Example == nil && len(c.Examples) == 0 {
				t.Errorf("request body %s has no example", mt)
			}
		}
	}
	sec := doc.Security
	if op.Security != nil {
		sec = *op.Security
	}
	secured, optional := false, false
	for _, r := range sec {
		optional = optional || len(r) == 0
		secured = secured || len(r) > 0
	}
	if secured && !optional && !has("401") {
		t.Error("secured but no 401")
	}
	if secured {
		if !has("403") {
			t.Error("secured but no 403")
		}
		if s, _ := op.Extensions["x-scope"].(string); s == "" {
			t.Error("secured but no x-scope")
		}
	}
}
