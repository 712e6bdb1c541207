package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
)

// Problem is an RFC 9457 problem, returned as an error by handlers and middleware and written by
// the one error handler.
type Problem struct {
	Status int
	Code   string
	Title  string
	Detail string
	Errors []gen.FieldError
	header http.Header
	cause  error
}

func (p *Problem) Error() string {
	if p.cause != nil {
		return fmt.Sprintf("%d %s: %s: %v", p.Status, p.Code, p.Detail, p.cause)
	}
	return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail)
}

func (p *Problem) Unwrap() error { return p.cause }

func newProblem(status int, code, detail string) *Problem {
	return &Problem{Status: status, Code: code, Title: http.StatusText(status), Detail: detail}
}

func errValidation(detail string, fields ...gen.FieldError) *Problem {
	p := newProblem(http.StatusUnprocessableEntity, "validation_error", detail)
	p.Title = "Validation failed"
	p.Errors = fields
	return p
}

func errUnauthenticated(detail string) *Problem {
	p := newProblem(http.StatusUnauthorized, "unauthenticated", detail)
	p.header = http.Header{"WWW-Authenticate": {`Bearer realm="researchd"`}}
	return p
}

func errForbidden(code, detail string) *Problem {
	return newProblem(http.StatusForbidden, code, detail)
}

func errNotFound(what string) *Problem {
	return newProblem(http.StatusNotFound, "not_found", what+" not found")
}

func errConflict(code, detail string) *Problem { return newProblem(http.StatusConflict, code, detail) }

// errUnsupportedMedia is the 415 for a body in a media type the operation does not accept.
func errUnsupportedMedia(got string, accepted []string) *Problem {
	if got == "" {
		got = "(none)"
	}
	return newProblem(http.StatusUnsupportedMediaType, "unsupported_media_type",
		fmt.Sprintf("Content-Type %q is not accepted here; send %s", got, strings.Join(accepted, " or ")))
}

// problemFor maps any error to the problem the client sees.
func problemFor(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return problemForHTTPError(he)
	}
	if f := fault.Of(err); f != nil {
		return problemForFault(err, f)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNotFound("resource")
	case errors.Is(err, store.ErrInvalidCursor):
		p := errValidation("cursor is not one this server issued", gen.FieldError{Field: "query.cursor", Message: "invalid cursor"})
		p.Code = "invalid_cursor"
		return p
	}
	p = newProblem(http.StatusInternalServerError, "internal_error", "an unexpected error occurred")
	p.cause = err
	return p
}

// faultStatus and faultCode are the status and the default code of each kind of refusal.
var (
	faultStatus = map[fault.Kind]int{
		fault.Invalid: http.StatusUnprocessableEntity, fault.NotFound: http.StatusNotFound, fault.Conflict: http.StatusConflict,
		fault.Forbidden: http.StatusForbidden, fault.PaymentRequired: http.StatusPaymentRequired,
		fault.TooLarge: http.StatusRequestEntityTooLarge, fault.Unauthenticated: http.StatusUnauthorized,
	}
	faultCode = map[fault.Kind]string{
		fault.Invalid: "validation_error", fault.NotFound: "not_found", fault.Conflict: "conflict", fault.Forbidden: "forbidden",
		fault.PaymentRequired: "insufficient_credits", fault.TooLarge: "payload_too_large", fault.Unauthenticated: "unauthenticated",
	}
)

// problemTitles are the titles of the problem types (codes) whose title is not their status text;
// a type has one title wherever it is answered (RFC 9457).
var problemTitles = map[string]string{
	"idempotency_key_reused": "Idempotency key reused",
	"insufficient_credits":   "Insufficient credits",
	"unsupported_file_type":  "Unsupported file type",
	"file_type_mismatch":     "File content does not match its type",
	"size_mismatch":          "Body size does not match size_bytes",
	"url_not_allowed":        "URL not allowed",
	"import_failed":          "Import failed",
}

// problemForFault is the problem of a domain refusal f, found in err.
func problemForFault(err error, f *fault.Error) *Problem {
	status, ok := faultStatus[f.Kind]
	if !ok {
		p := newProblem(http.StatusInternalServerError, "internal_error", "an unexpected error occurred")
		p.cause = err
		return p
	}
	code := f.Code
	if code == "" {
		code = faultCode[f.Kind]
	}
	detail := f.Detail
	if detail == "" {
		detail = err.Error()
	}
	var p *Problem
	switch f.Kind {
	case fault.Invalid:
		p = errValidation(detail)
		p.Code = code
	case fault.Unauthenticated:
		p = errUnauthenticated(detail)
	default:
		p = newProblem(status, code, detail)
	}
	if t, ok := problemTitles[code]; ok {
		p.Title = t
	}
	for _, fe := range f.Fields {
		p.Errors = append(p.Errors, gen.FieldError{Field: fe.Field, Message: fe.Message})
	}
	return p
}

func problemForHTTPError(he *echo.HTTPError) *Problem {
	msg := fmt.Sprint(he.Message)
	switch he.Code {
	case http.StatusNotFound:
		return newProblem(http.StatusNotFound, "not_found", "no such route")
	case http.StatusMethodNotAllowed:
		return newProblem(http.StatusMethodNotAllowed, "method_not_allowed", "this route does not accept the method")
	case http.StatusRequestEntityTooLarge:
		return newProblem(http.StatusRequestEntityTooLarge, "payload_too_large", "request body is too large")
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return errValidation(msg)
	case http.StatusUnauthorized:
		return errUnauthenticated(msg)
	}
	if he.Code >= 500 {
		p := newProblem(he.Code, "internal_error", "an unexpected error occurred")
		p.cause = he
		return p
	}
	code := strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_"))
	return newProblem(he.Code, code, msg)
}

// errorHandler writes every error as application/problem+json.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p := problemFor(err)
		reqID := c.Response().Header().Get(echo.HeaderXRequestID)
		if p.Status >= 500 && p.Status != http.StatusNotImplemented {
			log.ErrorContext(c.Request().Context(), "request failed", "request_id", reqID, "path", c.Request().URL.Path, "error", err)
		}
		for k, vs := range p.header {
			for _, v := range vs {
				c.Response().Header().Add(k, v)
			}
		}
		body := gen.Problem{
			Type:      "https://researchd.dev/problems/" + strings.ReplaceAll(p.Code, "_", "-"),
			Title:     p.Title,
			Status:    p.Status,
			Detail:    &p.Detail,
			Code:      p.Code,
			Instance:  ptr(c.Request().URL.Path),
			RequestId: ptr(reqID),
		}
		if len(p.Errors) > 0 {
			body.Errors = &p.Errors
		}
		c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
		if werr := c.JSON(p.Status, body); werr != nil {
			log.WarnContext(c.Request().Context(), "write problem", "error", werr)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// requestHash decides "same body" for an Idempotency-Key: the decoded body re-encoded, so
// formatting and key order do not matter.
func requestHash(body any) (string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("request hash: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// idempotencyOf is the Idempotency-Key header and the hash of body, both empty without the header.
func idempotencyOf(key *string, body any) (string, string, error) {
	if key == nil {
		return "", "", nil
	}
	hash, err := requestHash(body)
	if err != nil {
		return "", "", err
	}
	return *key, hash, nil
}
