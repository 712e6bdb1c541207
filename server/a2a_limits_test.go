package server_test

import (
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/a2aserver"
	"github.com/researchd/researchd/a2aserver/a2atest"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestA2ATaskLimits: a process follows at most A2ALimits tasks at once, and at most
// MaxTasksPerAccount of one account, however many clients send and walk away; a send over a limit
// is the protocol's -32000 server error with code too_many_tasks and the limit's scope, in both
// protocol versions and streaming or not, and creates no job. A slot comes back when its task ends.
func TestA2ATaskLimits(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnvWith(t, d, func(cfg *servertest.Config) {
				cfg.A2ALimits = a2aserver.Limits{MaxTasks: 3, MaxTasksPerAccount: 2}
			})
			ctx := t.Context()
			card, err := a2atest.Card(ctx, e.URL)
			require.NoError(t, err)
			accts := map[string]struct {
				id string
				c  map[a2a.ProtocolVersion]*a2aclient.Client
			}{}
			for _, name := range []string{"alice", "bob", "carol"} {
				a := e.NewAccount(t, store.TierPro, false, 100)
				cs := map[a2a.ProtocolVersion]*a2aclient.Client{}
				for _, v := range a2atest.Versions {
					cs[v], err = a2atest.Client(ctx, card, v, a.Key)
					require.NoError(t, err)
				}
				accts[name] = struct {
					id string
					c  map[a2a.ProtocolVersion]*a2aclient.Client
				}{a.ID, cs}
			}
			// Each accepted send leaves a task running ([block]) whose client is gone.
			send := func(who string, v a2a.ProtocolVersion, stream bool) (a2a.TaskID, error) {
				req := question("Hold this one [block]", map[string]any{"effort": "low"})
				c := accts[who].c[v]
				if stream {
					for ev, err := range c.SendStreamingMessage(ctx, req) {
						if err != nil {
							return "", err
						}
						return ev.TaskInfo().TaskID, nil // the client walks away after the first event
					}
					return "", errors.New("empty stream")
				}
				req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
				res, err := c.SendMessage(ctx, req)
				if err != nil {
					return "", err
				}
				return res.(*a2a.Task).ID, nil
			}
			var started []a2a.TaskID
			for _, tc := range []struct {
				name   string
				who    string
				v      a2a.ProtocolVersion
				stream bool
				scope  string // "": accepted
			}{
				{"first of alice's", "alice", a2a.Version, false, ""},
				{"second of alice's, streamed", "alice", a2a.Version, true, ""},
				{"third of alice's: over the account's limit", "alice", a2a.Version, false, "account"},
				{"third of alice's, v0.3", "alice", a2atest.Versions[1], false, "account"},
				{"third of alice's, streamed", "alice", a2a.Version, true, "account"},
				{"first of bob's", "bob", a2atest.Versions[1], false, ""},
				{"carol's: over the server's limit", "carol", a2a.Version, false, "server"},
				{"carol's, streamed v0.3", "carol", a2atest.Versions[1], true, "server"},
			} {
				id, err := send(tc.who, tc.v, tc.stream)
				if tc.scope == "" {
					require.NoError(t, err, tc.name)
					started = append(started, id)
					continue
				}
				require.ErrorIs(t, err, a2a.ErrServerError, tc.name)
				var ae *a2a.Error
				require.ErrorAs(t, err, &ae, tc.name)
				require.Equal(t, a2aserver.CodeTooManyTasks, ae.Details["code"], tc.name)
				require.Equal(t, tc.scope, ae.Details["scope"], tc.name)
			}
			var n int64
			require.NoError(t, e.Store.DB().Model(&store.ResearchJob{}).Where("account_id = ?", accts["carol"].id).Count(&n).Error)
			require.Zero(t, n, "a refused send creates no job")
			require.NoError(t, e.Store.DB().Model(&store.ResearchJob{}).Where("account_id = ?", accts["alice"].id).Count(&n).Error)
			require.EqualValues(t, 2, n)

			// One of alice's ends: its execution lets go of the slot, and carol's send goes through.
			_, err = accts["alice"].c[a2a.Version].CancelTask(ctx, &a2a.CancelTaskRequest{ID: started[0]})
			require.NoError(t, err)
			deadline := time.Now().Add(30 * time.Second)
			for {
				id, err := send("carol", a2a.Version, false)
				if err == nil {
					started = append(started, id)
					break
				}
				require.ErrorIs(t, err, a2a.ErrServerError)
				require.True(t, time.Now().Before(deadline), "the slot never came back: %v", err)
				time.Sleep(50 * time.Millisecond)
			}
			owners := []string{"alice", "alice", "bob", "carol"}
			for i, id := range started[1:] {
				_, err := accts[owners[i+1]].c[a2a.Version].CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
				require.NoError(t, err)
			}
		})
	}
}
