package loop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/store"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, store.SQLite, monday)
	l := b.create(t, daily(8, 0))

	id1, _, err := b.svc.RunNow(ctx, b.account, l.ID)
	require.NoError(t, err)
	b.batches.answer(t, id1, 1, "Initech launched a stapler.", `{"product":"stapler","price":10,"tags":["office"]}`)
	b.batches.answer(t, id1, 2, "Nothing at Hooli.", `{"product":null}`)
	b.batches.finish(t, id1, 2)

	first, err := b.svc.Diff(ctx, b.account, l.ID, 1)
	require.NoError(t, err)
	require.Nil(t, first.PreviousRunNumber)
	require.Equal(t, loop.ChangeNew, first.Questions[0].Change, "no previous run: every answer is new")

	id2, _, err := b.svc.RunNow(ctx, b.account, l.ID)
	require.NoError(t, err)
	b.batches.answer(t, id2, 1, "Initech  launched a stapler.", `{"product":"stapler","price":12,"tags":["office"],"color":"red"}`)
	d, err := b.svc.Diff(ctx, b.account, l.ID, 2)
	require.NoError(t, err)
	require.Equal(t, 1, *d.PreviousRunNumber)
	require.Equal(t, id1, *d.PreviousBatchID)
	require.Len(t, d.Questions, 2)

	q1 := d.Questions[0]
	require.Equal(t, loop.ChangeChanged, q1.Change)
	require.False(t, q1.HeadlineChanged, "whitespace does not count")
	require.Equal(t, []loop.FieldChange{
		{Path: "/color", New: "red", NewSet: true},
		{Path: "/price", Old: float64(10), New: float64(12), OldSet: true, NewSet: true},
	}, q1.ChangedFields)
	require.Equal(t, loop.ChangeNotComparable, d.Questions[1].Change, "row 2 is still pending")

	b.batches.answer(t, id2, 2, "Hooli bought a company.", `{"product":null}`)
	d, err = b.svc.Diff(ctx, b.account, l.ID, 2)
	require.NoError(t, err)
	q2 := d.Questions[1]
	require.Equal(t, loop.ChangeChanged, q2.Change)
	require.True(t, q2.HeadlineChanged)
	require.Equal(t, "Nothing at Hooli.", *q2.PreviousHeadline)
	require.Empty(t, q2.ChangedFields)

	_, err = b.svc.Diff(ctx, b.account, l.ID, 3)
	require.ErrorIs(t, err, loop.ErrRunNotFound)
	_, err = b.svc.Diff(ctx, "someone-else", l.ID, 1)
	require.ErrorIs(t, err, loop.ErrNotFound)
}
