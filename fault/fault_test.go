package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/fault"
)

func TestError(t *testing.T) {
	t.Parallel()
	errGone := fault.Missing("batch")
	errBusy := &fault.Error{Kind: fault.Conflict, Code: "busy", Msg: "busy"}
	cause := errors.New("cause")
	for _, tc := range []struct {
		name         string
		err          error
		kind         fault.Kind
		text, detail string
		fields       []fault.Field
	}{
		{"fields", fault.InvalidInput(fault.Field{Field: "a", Message: "x"}, fault.Field{Field: "b/1", Message: "y"}),
			fault.Invalid, "a: x; b/1: y", "a: x; b/1: y", []fault.Field{{Field: "a", Message: "x"}, {Field: "b/1", Message: "y"}}},
		{"missing, wrapped: the detail stays", fmt.Errorf("batch 7: %w", errGone), fault.NotFound, "batch 7: batch not found", "batch not found", nil},
		{"no detail: the caller reads the wrapped text", fmt.Errorf("%w: wait", errBusy), fault.Conflict, "busy: wait", "", nil},
		{"a cause", &fault.Error{Kind: fault.Forbidden, Msg: "no", Err: cause}, fault.Forbidden, "no", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fault.Of(tc.err)
			require.NotNil(t, f)
			require.True(t, fault.IsKind(tc.err, tc.kind))
			require.Equal(t, tc.text, tc.err.Error())
			require.Equal(t, tc.detail, f.Detail)
			require.Equal(t, tc.fields, f.Fields)
		})
	}
	require.ErrorIs(t, fmt.Errorf("x: %w", errGone), errGone)
	require.ErrorIs(t, &fault.Error{Kind: fault.Forbidden, Msg: "no", Err: cause}, cause)
	require.Nil(t, fault.Of(cause))
	require.False(t, fault.IsKind(cause, fault.Invalid))
	require.False(t, fault.IsKind(errBusy, fault.Invalid))
}
