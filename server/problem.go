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

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
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
	// Every path that names an expert (research, batches, loops, campaigns) resolves it through
	// the same seam; its tier refusal is answered the same way wherever it comes from.
	var te *jobs.ExpertTierError
	switch {
	case errors.As(err, &te):
		return errForbidden(jobs.CodeForbidden, te.Error()+"; upgrade the account's tier or choose another expert")
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

// errIdempotencyKeyReused is the 409 for a known Idempotency-Key sent with a different body.
func errIdempotencyKeyReused() *Problem {
	p := errConflict("idempotency_key_reused", "this Idempotency-Key was used with a different request body")
	p.Title = "Idempotency key reused"
	return p
}

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

// idempotency is the Idempotency-Key header and the hash of body, both empty without the header.
func idempotency(key *string, body any) (string, string, error) {
	if key == nil {
		return "", "", nil
	}
	hash, err := requestHash(body)
	if err != nil {
		return "", "", err
	}
	return *key, hash, nil
}
