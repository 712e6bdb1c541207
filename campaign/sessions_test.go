package campaign

import (
	"context"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
)

// counted is a real offline-engine session that records when it is closed.
type counted struct {
	engine.AnswerSession
	id     int
	closed bool
}

func (c *counted) Close() error {
	c.closed = true
	return c.AnswerSession.Close()
}

// TestSessionsShareRetireAndClose: the chunks of a stage share one session; a session older than
// sessionMaxAge is not handed out again and closes when its last chunk releases it; an unused one
// closes after sessionIdle; another stage gets its own.
func TestSessionsShareRetireAndClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answers := engine.Answers(extractive.New(extractive.Options{}), t.TempDir())
	clock := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	p := &sessions{now: func() time.Time { return clock }}
	var opened []*counted
	open := func(ctx context.Context) (engine.AnswerSession, *jsonschema.Schema, error) {
		s, err := answers.OpenAnswers(ctx, engine.AnswerConfig{Effort: "low"})
		if err != nil {
			return nil, nil, err
		}
		c := &counted{AnswerSession: s, id: len(opened) + 1}
		opened = append(opened, c)
		return c, nil, nil
	}
	stage := sessionKey{"c1", "research"}
	id := func(s engine.AnswerSession) int { return s.(*counted).id }

	a, _, releaseA, err := p.acquire(ctx, stage, open)
	require.NoError(t, err)
	b, _, releaseB, err := p.acquire(ctx, stage, open)
	require.NoError(t, err)
	require.Equal(t, 1, id(a))
	require.Equal(t, 1, id(b), "a second chunk of the stage shares the open session")
	other, _, releaseOther, err := p.acquire(ctx, sessionKey{"c1", "summary"}, open)
	require.NoError(t, err)
	require.Equal(t, 2, id(other), "another stage has its own")
	_, err = a.Answer(ctx, engine.Assignment{Question: "What is a heat pump?"})
	require.NoError(t, err)

	releaseA()
	clock = clock.Add(sessionMaxAge) // b still answers with the old session
	c, _, releaseC, err := p.acquire(ctx, stage, open)
	require.NoError(t, err)
	require.Equal(t, 3, id(c), "a session past its age is not handed out")
	require.False(t, opened[0].closed, "still in use by b")
	releaseB()
	require.True(t, opened[0].closed, "closed with its last user")

	releaseOther()
	require.True(t, opened[1].closed, "past its age, closed when released")

	releaseC()
	p.sweep()
	require.False(t, opened[2].closed, "not idle long enough")
	clock = clock.Add(sessionIdle)
	p.sweep()
	require.True(t, opened[2].closed, "closed after sessionIdle unused")
	d, _, releaseD, err := p.acquire(ctx, stage, open)
	require.NoError(t, err)
	defer releaseD()
	require.Equal(t, 4, id(d), "a closed session is never handed out")
}
