package server

import (
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/store"
)

// pageRequest turns the limit and cursor query parameters into a store page request.
func pageRequest(limit *int, cursor *string) (store.PageRequest, error) {
	req := store.PageRequest{Limit: 20}
	if limit != nil {
		req.Limit = *limit
	}
	if cursor != nil {
		c, err := store.DecodeCursor(*cursor)
		if err != nil {
			return req, err
		}
		req.Cursor = c
	}
	return req, nil
}

// pageEnvelope returns the next_cursor and has_more of a CursorPage.
func pageEnvelope[T any](p store.Page[T]) (nullable.Nullable[string], bool) {
	return nextCursor(p.Next)
}

// nextCursor is the next_cursor and has_more after a page that ends at next (nil: the last page).
func nextCursor(next *store.Cursor) (nullable.Nullable[string], bool) {
	if next == nil {
		return nullable.NewNullNullable[string](), false
	}
	return nullable.NewNullableWithValue(next.Encode()), true
}

// mapItems maps a list item by item (never nil, so an empty list is [] in JSON).
func mapItems[T, U any](rows []T, fn func(T) U) []U {
	out := make([]U, 0, len(rows))
	for _, r := range rows {
		out = append(out, fn(r))
	}
	return out
}

// nullableOf maps a nil pointer to JSON null.
func nullableOf[T any](v *T) nullable.Nullable[T] {
	if v == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(*v)
}

// valueOf is the inverse of nullableOf: nil when the field was omitted or null.
func valueOf[T any](n nullable.Nullable[T]) *T {
	v, err := n.Get()
	if err != nil {
		return nil
	}
	return &v
}
