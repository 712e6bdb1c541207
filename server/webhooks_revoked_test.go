package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestWebhookRevokedKeyNeverSigns: once the API key that signs a job's webhooks is revoked, no
// delivery is signed with it, whether it was revoked while the job ran (nothing is sent) or between
// two attempts of a round (the remaining attempt is not made): the attempt is recorded as not sent,
// with the reason, and the round ends. A redelivery by the owner then sends it signed with the
// redelivering, live key.
func TestWebhookRevokedKeyNeverSigns(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newBatchEnv(t, d, func(jc *jobs.Config) {
				jc.WebhookSchedule = []time.Duration{0, 200 * time.Millisecond, 800 * time.Millisecond}
				jc.WebhookTimeout, jc.WebhookBudget = 5*time.Second, 8*time.Second
			})
			owner := e.NewAccount(t, store.TierPro, false, 50)
			for _, tc := range []struct {
				name string
				// failFirst: the first attempt is made (with the key still live) and fails.
				failFirst bool
				// sent is how many requests the receiver got before the redelivery.
				sent int
			}{
				{"revoked while the job runs", false, 0},
				{"revoked between attempts", true, 1},
			} {
				ctx := t.Context()
				row, signer, err := e.Services.Accounts.CreateKey(ctx, owner.ID, nil, auth.AllScopes)
				require.NoError(t, err)
				rc := newGatedReceiver(t)
				if tc.failFirst {
					rc.answer(http.StatusInternalServerError)
					rc.hold()
				}
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research", Token: signer,
					Body: map[string]any{"question": "[gate] What moved EU power prices?", "effort": "low", "webhook_url": rc.URL}})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				var job gen.ResearchJobDetail
				r.JSON(t, &job)
				id := job.JobId.String()
				revoke := func() {
					r := e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/keys/" + row.ID, Token: owner.Key})
					require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
				}
				e.engine.awaitInFlight(t, 1)
				if !tc.failFirst {
					revoke()
				}
				e.releaseRuns(1)
				if tc.failFirst {
					<-rc.arrived // attempt 1 is under way, signed with the key still live
					revoke()
					rc.release() // attempt 1 fails
				}
				m := settledRound(t, e.Store, id, 1)
				rc.answer(http.StatusNoContent)
				require.Equal(t, store.WebhookFailed, m.State, tc.name)
				require.Nil(t, m.KeySealed, "%s: the revoked key is not kept", tc.name)
				got := rc.deliveries()
				require.Len(t, got, tc.sent, tc.name)

				var log gen.WebhookDeliveryPage
				e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + id + "/webhooks", Token: owner.Key}).JSON(t, &log)
				require.Len(t, log.Items, tc.sent+1, tc.name)
				last := log.Items[0] // newest first
				require.False(t, last.Succeeded, tc.name)
				require.True(t, last.StatusCode.IsNull(), "%s: nothing was sent", tc.name)
				require.True(t, strings.HasPrefix(last.Error.MustGet(), "not sent: the API key that signs"), "%s: %s", tc.name, last.Error.MustGet())
				require.Equal(t, tc.sent+1, last.Attempt, tc.name)

				r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + id + "/webhooks/redeliver", Token: owner.Key})
				require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
				require.Equal(t, store.WebhookDelivered, settledRound(t, e.Store, id, 2).State, tc.name)
				got = rc.deliveries()
				require.Len(t, got, tc.sent+1, tc.name)
				redelivered := got[len(got)-1]
				sig := redelivered.header.Get(jobs.HeaderSignature)
				require.True(t, jobs.VerifySignature(owner.Key, redelivered.body, sig), "%s: signed with the live key", tc.name)
				require.False(t, jobs.VerifySignature(signer, redelivered.body, sig), tc.name)
			}
		})
	}
}
