package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

type sseEvent struct {
	ID, Event, Data string
}

func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur != (sseEvent{}) {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// timelineSeqs returns the seqs of the stream's timeline events, checking each id against its data.
func timelineSeqs(t *testing.T, evs []sseEvent) []int {
	t.Helper()
	var seqs []int
	for _, ev := range evs {
		if ev.Event != "timeline" {
			continue
		}
		var te gen.TimelineEvent
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &te))
		require.Equal(t, strconv.Itoa(te.Seq), ev.ID)
		seqs = append(seqs, te.Seq)
	}
	return seqs
}

func TestResearchEventStream(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			other := e.NewAccount(t, store.TierPro, false, 100)
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "What drove the 2024 rise in EU electricity prices?", "effort": "low"})
			done := e.await(t, owner.Key, job.Slug, isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status)
			path := "/api/v2/research/" + job.Slug + "/events"

			// The whole timeline, oldest first, then the status and the end.
			r := e.Do(t, servertest.Req{Method: "GET", Path: path, Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream"))
			evs := parseSSE(t, r.Body)
			all := timelineSeqs(t, evs)
			require.Greater(t, len(all), 3)
			for i, s := range all {
				require.Equal(t, i+1, s)
			}
			require.Equal(t, sseEvent{Event: "status", Data: `{"status":"completed"}`}, evs[len(evs)-2])
			require.Equal(t, sseEvent{Event: "end", Data: `{"status":"completed"}`}, evs[len(evs)-1])

			tests := []struct {
				name   string
				query  string
				header http.Header
				from   int
			}{
				{name: "after", query: "?after=2", from: 3},
				{name: "last event id", header: http.Header{"Last-Event-Id": {"3"}}, from: 4},
				{name: "header wins", query: "?after=1", header: http.Header{"Last-Event-Id": {"3"}}, from: 4},
				{name: "after the last", query: "?after=" + strconv.Itoa(len(all)), from: len(all) + 1},
			}
			for _, tc := range tests {
				r := e.Do(t, servertest.Req{Method: "GET", Path: path + tc.query, Token: owner.Key, Header: tc.header})
				require.Equal(t, http.StatusOK, r.Status, tc.name)
				evs := parseSSE(t, r.Body)
				seqs := timelineSeqs(t, evs)
				require.Len(t, seqs, len(all)-tc.from+1, tc.name)
				if len(seqs) > 0 {
					require.Equal(t, tc.from, seqs[0], tc.name)
				}
				require.Equal(t, "end", evs[len(evs)-1].Event, tc.name)
			}

			// Following a job from its creation: every event once, in order, then the end.
			live := e.mustCreate(t, owner.Key, map[string]any{"question": "A followed question", "effort": "low"})
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + live.JobId.String() + "/events", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			evs = parseSSE(t, r.Body)
			for i, s := range timelineSeqs(t, evs) {
				require.Equal(t, i+1, s)
			}
			require.Equal(t, "end", evs[len(evs)-1].Event)

			// Private: 404 for another account and anonymously; bad input 422.
			for _, key := range []string{other.Key, ""} {
				r = e.Do(t, servertest.Req{Method: "GET", Path: path, Token: key})
				require.Equal(t, http.StatusNotFound, r.Status)
			}
			r = e.Do(t, servertest.Req{Method: "GET", Path: path + "?after=-1", Token: owner.Key})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			r = e.Do(t, servertest.Req{Method: "GET", Path: path, Token: owner.Key, Header: http.Header{"Last-Event-Id": {"x"}}})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)

			// Public: anyone reads the stream.
			r = e.Do(t, servertest.Req{Method: "PATCH", Path: "/api/v2/research/" + job.Slug, Token: owner.Key, Body: map[string]any{"is_public": true}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r = e.Do(t, servertest.Req{Method: "GET", Path: path + "?after=1", Token: ""})
			require.Equal(t, http.StatusOK, r.Status)
			require.Len(t, timelineSeqs(t, parseSSE(t, r.Body)), len(all)-1)
		})
	}
}
