package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/gen"
)

// validateRequests checks every request against its operation in the document: path, query and
// header parameters, and JSON bodies (unknown fields included). Upload bodies (multipart, raw bytes)
// are checked by their handlers, which stream them instead of buffering.
func (s *Server) validateRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		op := s.routes.lookup(c)
		if op == nil {
			return next(c)
		}
		// JSON-RPC answers a bad body with its own errors (-32700, -32600, -32602...) in JSON-RPC
		// bodies: only its query and headers are checked here.
		jsonRPC := c.Path() == a2aPath
		unknown := unknownQuery(c, op)
		req := c.Request()
		params := pathParams(c)
		// Upload operations stream their bodies; limitAttachmentBodies has checked their media types.
		upload := isUploadOp(op.route.Operation.OperationID)
		if !upload && !jsonRPC {
			if err := acceptedMedia(op, req); err != nil {
				return err
			}
		}
		body, err := bufferBody(req, upload)
		if err != nil {
			return validationProblem(err, nil)
		}
		if jsonRPC {
			body = nil
		} else if msg := strictJSON(req.Header.Get(echo.HeaderContentType), body); msg != "" {
			return validationProblem(nil, []gen.FieldError{{Field: "body", Message: msg}})
		}
		vreq := req
		if upload {
			// kin-openapi buffers the whole body (its security check reads it even when
			// ExcludeRequestBody is set): hand it a body-less copy so uploads stay streamed.
			bodyless := *req
			bodyless.Body = http.NoBody
			vreq = &bodyless
		}
		input := &openapi3filter.RequestValidationInput{
			Request:    vreq,
			PathParams: params,
			Route:      op.route,
			Options: &openapi3filter.Options{
				MultiError:         true,
				ExcludeRequestBody: upload || jsonRPC,
				// Authentication already ran (authenticate); the document's schemes are not re-checked here.
				AuthenticationFunc:      func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
				SchemaValidationOptions: formatValidators,
			},
		}
		if err := openapi3filter.ValidateRequest(req.Context(), input); err != nil {
			return validationProblem(err, unknown)
		}
		if len(unknown) > 0 {
			return validationProblem(nil, unknown)
		}
		if nul := textWithNUL(c, params, body); len(nul) > 0 {
			return validationProblem(nil, nul)
		}
		return next(c)
	}
}

// acceptedMedia is 415 unsupported_media_type for a body whose Content-Type the operation does not
// list (kin-openapi would call it a 422, and echo's binder a bare 415). Media types match
// case-insensitively (normalizeContentType has lowercased them). An empty body is left to the
// validator: required or not, its media type does not matter.
func acceptedMedia(op *operation, req *http.Request) error {
	rb := op.route.Operation.RequestBody
	if rb == nil || rb.Value == nil || req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	ct := req.Header.Get(echo.HeaderContentType)
	if rb.Value.Content.Get(ct) != nil {
		return nil
	}
	return errUnsupportedMedia(ct, slices.Sorted(maps.Keys(rb.Value.Content)))
}

// formatValidators checks the string formats the generated types parse (uuid, email), so a bad value
// is a 422 naming its field rather than a bind error naming nothing. kin-openapi checks date-time itself.
var formatValidators = []openapi3.SchemaValidationOption{
	openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)),
	openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
}

// bufferBody reads a non-upload body into memory (the global body limit bounds it) and puts it back
// for the validator and the handler. Upload bodies stay streamed: it returns nil for them.
func bufferBody(req *http.Request, upload bool) ([]byte, error) {
	if upload || req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	// Neither a length nor chunks: nothing to read (most GETs). The body limit has wrapped even an
	// empty body, so it is no longer http.NoBody here.
	if req.ContentLength == 0 {
		req.Body = http.NoBody
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
}

// strictJSON says what is wrong with a JSON body that the standard decoders would quietly accept:
// invalid UTF-8 (decoded as U+FFFD, so the stored text is not what was sent) and data after the
// value (`{...}garbage`, `{}{}`: the decoders stop at the first value, so the rest was silently
// dropped). Trailing whitespace is fine.
func strictJSON(contentType string, body []byte) string {
	if len(body) == 0 || !isJSONMedia(contentType) {
		return ""
	}
	if !utf8.Valid(body) {
		return "the body is not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return "the body is not valid JSON: " + err.Error()
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "data after the JSON value; send exactly one JSON value"
	}
	return ""
}

func isJSONMedia(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// textWithNUL names the path and query parameters and JSON body strings (keys included) that contain
// U+0000. The document's strings are text and PostgreSQL cannot store NUL in text or jsonb, so it is
// refused here (422) instead of failing in the database (500). Upload bodies are bytes and exempt.
func textWithNUL(c echo.Context, params map[string]string, body []byte) []gen.FieldError {
	const msg = "must not contain the NUL character (U+0000)"
	var fields []gen.FieldError
	for name, v := range params {
		if strings.ContainsRune(v, 0) {
			fields = append(fields, gen.FieldError{Field: "path." + name, Message: msg})
		}
	}
	for name, vs := range c.QueryParams() {
		if slices.ContainsFunc(vs, func(v string) bool { return strings.ContainsRune(v, 0) }) {
			fields = append(fields, gen.FieldError{Field: "query." + name, Message: msg})
		}
	}
	var v any
	// JSON can only carry NUL as the escape \u0000, so most bodies skip the walk.
	if bytes.Contains(body, []byte(`\u0000`)) && json.Unmarshal(body, &v) == nil {
		walkNUL("", v, func(field string) { fields = append(fields, gen.FieldError{Field: field, Message: msg}) })
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	return fields
}

// walkNUL reports the JSON pointers (without the leading slash, like the validator's body fields) of
// strings and keys in v that contain NUL.
func walkNUL(at string, v any, report func(string)) {
	name := func(at, key string) string { return strings.TrimPrefix(at+"/"+key, "/") }
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			if at == "" {
				at = "body"
			}
			report(at)
		}
	case []any:
		for i, e := range x {
			walkNUL(name(at, strconv.Itoa(i)), e, report)
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) {
				report(name(at, k))
				continue
			}
			walkNUL(name(at, k), e, report)
		}
	}
}

func unknownQuery(c echo.Context, op *operation) []gen.FieldError {
	var fields []gen.FieldError
	for name := range c.QueryParams() {
		if !op.query[name] {
			fields = append(fields, gen.FieldError{Field: "query." + name, Message: "unknown query parameter"})
		}
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	return fields
}

// validationProblem turns kin-openapi's errors into a 422 naming each bad field (or a 413 when the
// body limit cut the read short).
func validationProblem(err error, fields []gen.FieldError) error {
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
		return he
	}
	if err != nil {
		collectFieldErrors(err, &fields)
	}
	detail := "the request does not match the API document"
	if len(fields) == 1 {
		detail = fields[0].Field + ": " + fields[0].Message
	}
	return errValidation(detail, fields...)
}

func collectFieldErrors(err error, out *[]gen.FieldError) {
	// Check the outer type first: a RequestError unwraps to the MultiError of its schema errors.
	var reqErr *openapi3filter.RequestError
	if multi, ok := err.(openapi3.MultiError); ok {
		for _, e := range multi {
			collectFieldErrors(e, out)
		}
		return
	}
	if errors.As(err, &reqErr) {
		prefix := "body"
		if p := reqErr.Parameter; p != nil {
			prefix = p.In + "." + p.Name
			if p.In == openapi3.ParameterInHeader {
				prefix = "header." + p.Name
			}
		}
		if reqErr.Err == nil {
			*out = append(*out, gen.FieldError{Field: prefix, Message: reqErr.Reason})
			return
		}
		before := len(*out)
		collectSchemaErrors(prefix, reqErr.Err, out)
		if len(*out) == before {
			msg := reqErr.Err.Error()
			if reqErr.Reason != "" {
				msg = reqErr.Reason + ": " + msg
			}
			*out = append(*out, gen.FieldError{Field: prefix, Message: msg})
		}
		return
	}
	var secErr *openapi3filter.SecurityRequirementsError
	if errors.As(err, &secErr) {
		*out = append(*out, gen.FieldError{Field: "header.Authorization", Message: "credentials required"})
		return
	}
	*out = append(*out, gen.FieldError{Field: "request", Message: err.Error()})
}

func collectSchemaErrors(prefix string, err error, out *[]gen.FieldError) {
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		for _, e := range multi {
			collectSchemaErrors(prefix, e, out)
		}
		return
	}
	var se *openapi3.SchemaError
	if !errors.As(err, &se) {
		return
	}
	ptr := se.JSONPointer()
	field := strings.Join(ptr, "/")
	msg := se.Reason
	// "property "x" is unsupported" (kin-openapi files it under "properties"): point at the unknown
	// property itself.
	if se.SchemaField == "properties" || se.SchemaField == "additionalProperties" {
		if name, ok := unsupportedProperty(se.Reason); ok {
			field = strings.Trim(field+"/"+name, "/")
			msg = "unknown field"
		}
	}
	switch {
	case prefix == "body" && field == "":
		field = "body"
	case prefix == "body":
	case field == "":
		field = prefix
	default:
		field = prefix + "/" + field
	}
	*out = append(*out, gen.FieldError{Field: field, Message: msg})
}

func unsupportedProperty(reason string) (string, bool) {
	var name string
	if _, err := fmt.Sscanf(reason, "property %q is unsupported", &name); err == nil {
		return name, true
	}
	return "", false
}
