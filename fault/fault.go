// Package fault is the one set of error kinds the domain packages return when they refuse a
// request: invalid input (naming the fields at fault), not found, conflict, forbidden, payment
// required, too large and unauthenticated. A *Error says what kind of refusal it is, its stable
// code and what the caller reads; the HTTP layer turns any *Error into a problem in one place
// (server/problem.go), so a domain package never names a status code and the server has no
// per-resource error mappers.
package fault

import (
	"errors"
	"strings"
)

// Kind is what sort of refusal an error is.
type Kind uint8

// The kinds (the HTTP status each answers in server/problem.go).
const (
	Invalid         Kind = iota + 1 // 422: the input is wrong; Fields say where
	NotFound                        // 404: no such resource the caller may see
	Conflict                        // 409: the resource's state does not allow it
	Forbidden                       // 403: the caller may see it but not do this
	PaymentRequired                 // 402: the balance cannot pay for it
	TooLarge                        // 413: over a size limit
	Unauthenticated                 // 401: missing, invalid or used credentials
)

// Field is one input at fault: where (a JSON-pointer-like path such as questions, files/2 or
// skill_names/2) and why.
type Field struct{ Field, Message string }

// Error is a refusal.
type Error struct {
	Kind Kind
	// Code is the stable snake_case code of the refusal; "" is the kind's own (validation_error,
	// not_found, forbidden, insufficient_credits, payload_too_large, unauthenticated).
	Code string
	// Msg is the error's text.
	Msg string
	// Detail is what the caller reads. "" means the text of the error as it was returned: Msg with
	// the context wrapped around it (fmt.Errorf("only the owner may ...: %w", ErrForbidden)).
	Detail string
	// Fields are the inputs at fault (Invalid).
	Fields []Field
	// Err is what the refusal is made of, for errors.Is and errors.As (a sentinel, or a typed
	// error other packages inspect); nil for none.
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// InvalidInput is an Invalid refusal of fields. It reads, and the caller reads it, as each field's
// "field: message", joined by "; ".
func InvalidInput(fields ...Field) *Error {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Message
	}
	msg := strings.Join(parts, "; ")
	return &Error{Kind: Invalid, Msg: msg, Detail: msg, Fields: fields}
}

// Missing is the NotFound refusal of what ("batch"): "batch not found", whatever context is
// wrapped around it.
func Missing(what string) *Error {
	msg := what + " not found"
	return &Error{Kind: NotFound, Msg: msg, Detail: msg}
}

// Of returns the outermost *Error in err's chain, or nil.
func Of(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsKind reports whether err is (or wraps) a refusal of kind k.
func IsKind(err error, k Kind) bool {
	e := Of(err)
	return e != nil && e.Kind == k
}
