package server_test

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// gatedReceiver is a loopback webhook endpoint whose answers wait while it is held, so a test can
// act while a round of attempts is under way; it answers 204 unless told another status.
type gatedReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []delivery
	gate    chan struct{} // closed: answer; open: wait
	arrived chan struct{} // one send per request, before it waits
	status  int           // the answer, read once the gate lets the request through; 0: 204
}

func newGatedReceiver(t *testing.T) *gatedReceiver {
	g := &gatedReceiver{gate: make(chan struct{}), arrived: make(chan struct{}, 16)}
	close(g.gate)
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.got = append(g.got, delivery{header: r.Header.Clone(), body: b})
		gate := g.gate
		g.mu.Unlock()
		g.arrived <- struct{}{}
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		g.mu.Lock()
		status := cmp.Or(g.status, http.StatusNoContent)
		g.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(g.Close)
	return g
}

// answer sets the status the following answers carry.
func (g *gatedReceiver) answer(status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status = status
}

func (g *gatedReceiver) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gatedReceiver) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.gate)
}

func (g *gatedReceiver) deliveries() []delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]delivery(nil), g.got...)
}

// rotateSecret creates or rotates the account's webhook secret and returns it.
func rotateSecret(t *testing.T, e *researchEnv, key string, body any) gen.WebhookSecret {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/webhook-secret", Token: key, Body: body})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var s gen.WebhookSecret
	r.JSON(t, &s)
	require.Regexp(t, `^whsec_[A-Za-z0-9+/]+={0,2}$`, s.Secret)
	return s
}

// verifyStandard checks a delivery the way a receiver holding only the webhook secret does.
func verifyStandard(t *testing.T, secret string, d delivery) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	return wh.Verify(d.body, d.header)
}

// deliveryLog reads a job's delivery log.
func deliveryLog(t *testing.T, e *researchEnv, key, ref string) gen.WebhookDeliveryPage {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + ref + "/webhooks", Token: key})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var p gen.WebhookDeliveryPage
	r.JSON(t, &p)
	return p
}

// settledRound waits until round of the job's latest webhook has ended.
func settledRound(t *testing.T, st *store.Store, jobID string, round int) store.WebhookMessage {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := st.LatestWebhookMessage(context.Background(), jobID)
		if err == nil && m.Round == round && m.State != store.WebhookPending {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %d of the webhook of %s never ended: %+v %v", round, jobID, m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebhookSigningLogAndRedelivery: deliveries carry Standard Webhooks headers a receiver verifies
// with only the account's secret, beside the unchanged X-Signature-SHA256; the delivery log lists
// every attempt (owner and administrators only); a redelivery is a new round of the same message,
// signed with the redelivering key; sealed API keys are gone once deliveries are final.
func TestWebhookSigningLogAndRedelivery(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 50)
			other := e.NewAccount(t, store.TierPro, false, 50)
			admin := e.NewAccount(t, store.TierPro, true, 0)
			secret := rotateSecret(t, e, owner.Key, nil)
			require.True(t, secret.PreviousSecretExpiresAt.IsNull())

			rc := newReceiver(t, 1) // the first attempt fails, the second succeeds
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "Signed webhook question", "effort": "low", "webhook_url": rc.URL})
			e.await(t, owner.Key, job.Slug, isTerminal)
			m := settledRound(t, e.Store, job.JobId.String(), 1)
			require.Equal(t, store.WebhookDelivered, m.State)

			got := rc.deliveries()
			require.Len(t, got, 2)
			for i, dv := range got {
				require.NoError(t, verifyStandard(t, secret.Secret, dv), "attempt %d", i+1)
				require.True(t, jobs.VerifySignature(owner.Key, dv.body, dv.header.Get("X-Signature-SHA256")), "the specification's signature is unchanged")
				require.Equal(t, m.ID, dv.header.Get("webhook-id"), "one webhook-id across attempts: receivers dedupe on it")
				require.Empty(t, dv.header.Get("X-Service-Signature"), "v2 jobs do not send the v1 header")
			}
			// A receiver rejects what it cannot verify: another secret, a changed body, a replay
			// re-stamped with a fresh time.
			require.ErrorIs(t, verifyStandard(t, "whsec_"+strings.Repeat("A", 43)+"=", got[0]), standardwebhooks.ErrNoMatchingSignature)
			tampered := delivery{header: got[1].header.Clone(), body: append([]byte(nil), got[1].body...)}
			tampered.body[len(tampered.body)-2] ^= 1
			require.Error(t, verifyStandard(t, secret.Secret, tampered))
			replayed := delivery{header: got[1].header.Clone(), body: got[1].body}
			ts, err := strconv.ParseInt(replayed.header.Get("webhook-timestamp"), 10, 64)
			require.NoError(t, err)
			replayed.header.Set("webhook-timestamp", strconv.FormatInt(ts+1, 10))
			require.ErrorIs(t, verifyStandard(t, secret.Secret, replayed), standardwebhooks.ErrNoMatchingSignature)

			// The log: newest first, with status, latency and error per attempt.
			log := deliveryLog(t, e, owner.Key, job.Slug)
			require.Len(t, log.Items, 2)
			require.False(t, log.HasMore)
			newest, oldest := log.Items[0], log.Items[1]
			require.Equal(t, []int{2, 1}, []int{newest.Attempt, oldest.Attempt})
			require.Equal(t, 204, newest.StatusCode.MustGet())
			require.Equal(t, 500, oldest.StatusCode.MustGet())
			require.True(t, newest.Succeeded)
			require.False(t, oldest.Succeeded)
			for i, it := range log.Items {
				require.Equal(t, m.ID, it.WebhookId)
				require.Equal(t, 1, it.Round)
				require.Equal(t, gen.WebhookDeliveryEvent(jobs.EventCompleted), it.Event)
				require.Equal(t, rc.URL, it.Url)
				require.GreaterOrEqual(t, it.LatencyMs, 0)
				require.True(t, it.Error.IsNull())
				require.Equal(t, got[1-i].header.Get("X-Request-ID"), it.RequestId)
				require.Equal(t, got[1-i].header.Get("webhook-timestamp"), strconv.FormatInt(it.CreatedAt.Unix(), 10))
			}
			page := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.Slug + "/webhooks?limit=1", Token: owner.Key})
			var p1 gen.WebhookDeliveryPage
			page.JSON(t, &p1)
			require.True(t, p1.HasMore)
			page = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.Slug + "/webhooks?limit=1&cursor=" + p1.NextCursor.MustGet(), Token: owner.Key})
			var p2 gen.WebhookDeliveryPage
			page.JSON(t, &p2)
			require.Equal(t, oldest.DeliveryId, p2.Items[0].DeliveryId)

			// The sealed API key is deleted once the deliveries are final.
			stored, err := e.Store.ResearchJobByID(ctx, job.JobId.String())
			require.NoError(t, err)
			require.Nil(t, stored.WebhookKeySealed)
			require.Nil(t, m.KeySealed)

			// Another account never sees the log nor redelivers, even once the job is public; an
			// administrator reads it.
			r := e.Do(t, servertest.Req{Method: "PATCH", Path: "/api/v2/research/" + job.Slug, Token: owner.Key, Body: map[string]any{"is_public": true}})
			require.Equal(t, http.StatusOK, r.Status)
			for _, req := range []servertest.Req{
				{Method: "GET", Path: "/api/v2/research/" + job.Slug + "/webhooks", Token: other.Key},
				{Method: "POST", Path: "/api/v2/research/" + job.Slug + "/webhooks/redeliver", Token: other.Key},
				{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/webhooks", Token: other.Key},
			} {
				r := e.Do(t, req)
				require.Equal(t, http.StatusNotFound, r.Status, "%s %s", req.Method, req.Path)
				require.Equal(t, "not_found", r.Problem(t).Code)
			}
			require.Len(t, deliveryLog(t, e, admin.Key, job.Slug).Items, 2)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.Slug + "/webhooks"})
			require.Equal(t, http.StatusUnauthorized, r.Status)

			// Redelivery: the same message again, signed with the key of the request.
			second := e.Key(t, owner.ID, "research")
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + job.Slug + "/webhooks/redeliver", Token: second})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var rd gen.WebhookRedelivery
			r.JSON(t, &rd)
			require.Equal(t, gen.WebhookRedelivery{WebhookId: m.ID, JobId: job.JobId, RunId: rd.RunId, Event: gen.WebhookRedeliveryEvent(jobs.EventCompleted),
				Round: 2, Url: rc.URL, State: gen.WebhookRedeliveryState(store.WebhookPending)}, rd)
			m = settledRound(t, e.Store, job.JobId.String(), 2)
			require.Equal(t, store.WebhookDelivered, m.State)
			require.Nil(t, m.KeySealed, "the redelivery's key is deleted too")
			got = rc.deliveries()
			require.Len(t, got, 3)
			again := got[2]
			require.Equal(t, string(got[0].body), string(again.body))
			require.Equal(t, m.ID, again.header.Get("webhook-id"))
			require.NoError(t, verifyStandard(t, secret.Secret, again))
			require.True(t, jobs.VerifySignature(second, again.body, again.header.Get("X-Signature-SHA256")))
			log = deliveryLog(t, e, owner.Key, job.Slug)
			require.Len(t, log.Items, 3)
			require.Equal(t, []int{2, 1}, []int{log.Items[0].Round, log.Items[0].Attempt})

			// An administrator's redelivery carries no API-key signature (only the owner's keys are known
			// to the receiver); the Standard Webhooks one still verifies.
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + job.Slug + "/webhooks/redeliver", Token: admin.Key})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			settledRound(t, e.Store, job.JobId.String(), 3)
			got = rc.deliveries()
			require.Len(t, got, 4)
			require.Empty(t, got[3].header.Get("X-Signature-SHA256"))
			require.NoError(t, verifyStandard(t, secret.Secret, got[3]))

			// A job that sent no webhook has nothing to redeliver.
			plain := e.mustCreate(t, owner.Key, map[string]any{"question": "No webhook here", "effort": "low"})
			e.await(t, owner.Key, plain.Slug, isTerminal)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + plain.Slug + "/webhooks/redeliver", Token: owner.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "no_webhook", r.Problem(t).Code)
			require.Empty(t, deliveryLog(t, e, owner.Key, plain.Slug).Items)

			// A cancelled job sends no webhook, so its key goes at once.
			blocked := e.mustCreate(t, owner.Key, map[string]any{"question": "Cancelled before its webhook [block]", "effort": "low", "webhook_url": rc.URL})
			e.await(t, owner.Key, blocked.Slug, hasStatus(gen.JobStatusInProgress))
			stored, err = e.Store.ResearchJobByID(ctx, blocked.JobId.String())
			require.NoError(t, err)
			require.NotNil(t, stored.WebhookKeySealed, "held while a run may end with a webhook")
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + blocked.Slug + "/cancel", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			stored, err = e.Store.ResearchJobByID(ctx, blocked.JobId.String())
			require.NoError(t, err)
			require.Nil(t, stored.WebhookKeySealed)
		})
	}
}

// TestWebhookRedeliveryWhileUnderWay: a redelivery while a round is under way is 409, and the
// round that is under way is not disturbed.
func TestWebhookRedeliveryWhileUnderWay(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 50)
			g := newGatedReceiver(t)
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "Held webhook question", "effort": "low", "webhook_url": g.URL})
			e.await(t, owner.Key, job.Slug, isTerminal)
			<-g.arrived
			settledRound(t, e.Store, job.JobId.String(), 1)

			g.hold()
			path := "/api/v2/research/" + job.Slug + "/webhooks/redeliver"
			r := e.Do(t, servertest.Req{Method: "POST", Path: path, Token: owner.Key})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			<-g.arrived // the round's first attempt is waiting on the receiver
			r = e.Do(t, servertest.Req{Method: "POST", Path: path, Token: owner.Key})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "webhook_delivery_in_progress", r.Problem(t).Code)
			g.release()
			m := settledRound(t, e.Store, job.JobId.String(), 2)
			require.Equal(t, store.WebhookDelivered, m.State)
			require.GreaterOrEqual(t, len(g.deliveries()), 2)
		})
	}
}

// TestWebhookSecretRotation: after a rotation both secrets sign (two space-separated signatures)
// for the grace period asked for; grace 0 drops the old one at once; bad input changes nothing.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 50)
			other := e.NewAccount(t, store.TierPro, false, 50)
			rc := newReceiver(t, 0)
			deliver := func(question string) delivery {
				t.Helper()
				job := e.mustCreate(t, owner.Key, map[string]any{"question": question, "effort": "low", "webhook_url": rc.URL})
				e.await(t, owner.Key, job.Slug, isTerminal)
				settledRound(t, e.Store, job.JobId.String(), 1)
				got := rc.deliveries()
				return got[len(got)-1]
			}
			signatures := func(dv delivery) int { return len(strings.Fields(dv.header.Get("webhook-signature"))) }

			// Before any secret: id and timestamp, no signature; X-Signature-SHA256 as always.
			dv := deliver("Before any secret")
			require.NotEmpty(t, dv.header.Get("webhook-id"))
			require.NotEmpty(t, dv.header.Get("webhook-timestamp"))
			require.Empty(t, dv.header.Get("webhook-signature"))
			require.True(t, jobs.VerifySignature(owner.Key, dv.body, dv.header.Get("X-Signature-SHA256")))

			first := rotateSecret(t, e, owner.Key, nil)
			dv = deliver("With the first secret")
			require.Equal(t, 1, signatures(dv))
			require.NoError(t, verifyStandard(t, first.Secret, dv))

			before := time.Now()
			second := rotateSecret(t, e, owner.Key, map[string]any{"grace_period_seconds": 3600})
			require.NotEqual(t, first.Secret, second.Secret)
			until := second.PreviousSecretExpiresAt.MustGet()
			require.WithinRange(t, until, before.Add(time.Hour-time.Second), time.Now().Add(time.Hour+time.Second))
			dv = deliver("During the grace period")
			require.Equal(t, 2, signatures(dv), "both secrets sign during the grace period")
			require.NoError(t, verifyStandard(t, first.Secret, dv), "receivers still holding the old secret accept it")
			require.NoError(t, verifyStandard(t, second.Secret, dv))

			// Another account's secret is its own: it does not sign the owner's webhooks.
			theirs := rotateSecret(t, e, other.Key, nil)
			require.ErrorIs(t, verifyStandard(t, theirs.Secret, dv), standardwebhooks.ErrNoMatchingSignature)

			// The default grace is the server's (24 h).
			third := rotateSecret(t, e, owner.Key, map[string]any{})
			require.WithinRange(t, third.PreviousSecretExpiresAt.MustGet(), time.Now().Add(24*time.Hour-time.Minute), time.Now().Add(24*time.Hour+time.Minute))
			dv = deliver("After the third rotation")
			require.Equal(t, 2, signatures(dv), "at most two secrets sign")
			require.ErrorIs(t, verifyStandard(t, first.Secret, dv), standardwebhooks.ErrNoMatchingSignature, "rotating again ends the earlier grace period")
			require.NoError(t, verifyStandard(t, second.Secret, dv))
			require.NoError(t, verifyStandard(t, third.Secret, dv))

			// A leaked secret: grace 0 stops it at once.
			fourth := rotateSecret(t, e, owner.Key, map[string]any{"grace_period_seconds": 0})
			require.True(t, fourth.PreviousSecretExpiresAt.IsNull())
			dv = deliver("After revoking the old secret")
			require.Equal(t, 1, signatures(dv))
			require.NoError(t, verifyStandard(t, fourth.Secret, dv))
			require.ErrorIs(t, verifyStandard(t, third.Secret, dv), standardwebhooks.ErrNoMatchingSignature)

			for _, body := range []map[string]any{{"grace_period_seconds": -1}, {"grace_period_seconds": 604801}, {"grace": 10}} {
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/webhook-secret", Token: owner.Key, Body: body})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v", body)
			}
			dv = deliver("After refused rotations")
			require.NoError(t, verifyStandard(t, fourth.Secret, dv), "a refused rotation changes nothing")
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/webhook-secret"})
			require.Equal(t, http.StatusUnauthorized, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/webhook-secret", Token: e.Key(t, owner.ID, "billing")})
			require.Equal(t, http.StatusForbidden, r.Status)
		})
	}
}

// TestV1WebhookSignature: a job created through POST /v1/grep/research signs its webhook with the
// legacy-named header and correlates by the body alone (the v1 operation); a v2 job keeps
// X-Signature-SHA256 and the correlation headers. Both carry the Standard Webhooks headers.
func TestV1WebhookSignature(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 50)
			secret := rotateSecret(t, e, owner.Key, nil)
			rc := newReceiver(t, 0)

			r := e.Do(t, servertest.Req{Method: "POST", Path: "/v1/grep/research", Token: owner.Key,
				Body: map[string]any{"question": "A v1 question with a webhook", "depth": "deep", "webhook_url": rc.URL}})
			require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
			var v1 gen.V1ResearchResponse
			r.JSON(t, &v1)
			e.await(t, owner.Key, v1.JobId.String(), isTerminal)
			settledRound(t, e.Store, v1.JobId.String(), 1)
			v2 := e.mustCreate(t, owner.Key, map[string]any{"question": "A v2 question with a webhook", "effort": "low", "webhook_url": rc.URL})
			e.await(t, owner.Key, v2.Slug, isTerminal)
			settledRound(t, e.Store, v2.JobId.String(), 1)

			got := rc.deliveries()
			require.Len(t, got, 2)
			legacy, current := got[0], got[1]
			require.Contains(t, string(legacy.body), `"job_id":"`+v1.JobId.String()+`"`, "v1 correlates by the body")
			require.True(t, jobs.VerifySignature(owner.Key, legacy.body, legacy.header.Get("X-Service-Signature")))
			for _, h := range []string{"X-Signature-SHA256", "X-Request-ID", "X-Service-Original-Request-ID", "X-Service-Job-ID"} {
				require.Empty(t, legacy.header.Get(h), "a v1 webhook has no %s", h)
			}
			require.NoError(t, verifyStandard(t, secret.Secret, legacy))

			require.True(t, jobs.VerifySignature(owner.Key, current.body, current.header.Get("X-Signature-SHA256")))
			require.Empty(t, current.header.Get("X-Service-Signature"))
			require.Equal(t, v2.JobId.String(), current.header.Get("X-Service-Job-ID"))
			require.NotEmpty(t, current.header.Get("X-Request-ID"))
			require.NoError(t, verifyStandard(t, secret.Secret, current))

			// The v1 job's log and redelivery work as for any job, and keep the v1 header.
			require.Len(t, deliveryLog(t, e, owner.Key, v1.JobId.String()).Items, 1)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/research/" + v1.JobId.String() + "/webhooks/redeliver", Token: owner.Key})
			require.Equal(t, http.StatusAccepted, r.Status)
			settledRound(t, e.Store, v1.JobId.String(), 2)
			got = rc.deliveries()
			require.Len(t, got, 3)
			require.True(t, jobs.VerifySignature(owner.Key, got[2].body, got[2].header.Get("X-Service-Signature")))
			require.Empty(t, got[2].header.Get("X-Signature-SHA256"))
		})
	}
}
