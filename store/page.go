package store

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ErrInvalidCursor is returned for a cursor this server did not issue.
var ErrInvalidCursor = errors.New("invalid cursor")

// Cursor is a keyset position: the (created_at, id) of the last row of a page.
type Cursor struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"i"`
}

// Encode renders the cursor as the opaque base64url token clients pass back.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a token from Encode; "" means the first page.
func DecodeCursor(token string) (*Cursor, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", ErrInvalidCursor)
	}
	var c Cursor
	if err := json.Unmarshal(b, &c); err != nil || c.ID == "" || c.CreatedAt.IsZero() {
		return nil, fmt.Errorf("%w: not a cursor", ErrInvalidCursor)
	}
	return &c, nil
}

// PageRequest asks for one page, newest first.
type PageRequest struct {
	Limit  int
	Cursor *Cursor
}

// Page is one page of rows plus the cursor of the next one (nil on the last page).
type Page[T any] struct {
	Items []T
	Next  *Cursor
}

// paginate runs q newest first from the request's position and fills a Page; key gives each row's position.
func paginate[T any](q *gorm.DB, req PageRequest, key func(T) Cursor) (Page[T], error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	if c := req.Cursor; c != nil {
		q = q.Where("(created_at < ?) OR (created_at = ? AND id < ?)", c.CreatedAt, c.CreatedAt, c.ID)
	}
	var rows []T
	if err := q.Order("created_at DESC").Order("id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return Page[T]{}, err
	}
	page := Page[T]{Items: rows}
	if len(rows) > limit {
		page.Items = rows[:limit]
		next := key(rows[limit-1])
		page.Next = &next
	}
	return page, nil
}
