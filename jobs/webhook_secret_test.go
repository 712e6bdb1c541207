package jobs_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestStandardSignatureMatchesTheSpecVector: the signature is the one the Standard Webhooks
// specification publishes for its example, and one entry per secret when several sign.
func TestStandardSignatureMatchesTheSpecVector(t *testing.T) {
	t.Parallel()
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	body := []byte(`{"test": 2432232314}`)
	at := time.Unix(1614265330, 0)
	tests := []struct {
		name    string
		secrets []string
		want    string
	}{
		{"no secret", nil, ""},
		{"the published vector", []string{secret}, want},
		{"two secrets during a grace period", []string{"whsec_" + strings.Repeat("A", 43) + "=", secret}, " " + want},
	}
	for _, tc := range tests {
		got, err := jobs.StandardSignature(tc.secrets, id, at, body)
		require.NoError(t, err, tc.name)
		require.True(t, strings.HasSuffix(got, tc.want), "%s: %q", tc.name, got)
		require.Len(t, strings.Fields(got), len(tc.secrets), tc.name)
	}
	_, err := jobs.StandardSignature([]string{"whsec_not base64!"}, id, at, body)
	require.Error(t, err)
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hookRecorder is a loopback webhook receiver that answers 204 and keeps every request.
type hookRecorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []recorded
}

type recorded struct {
	header http.Header
	body   []byte
}

func newHookRecorder(t *testing.T) *hookRecorder {
	h := &hookRecorder{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, recorded{header: r.Header.Clone(), body: b})
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookRecorder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.got)
}

func (h *hookRecorder) last() recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[len(h.got)-1]
}

// TestRotatedSecretSignsUntilItsGraceEnds: after a rotation both secrets sign; once the grace
// period is over (on the service's clock) only the new one does; a grace of 0 drops the old one at
// once. Receivers verify with the Standard Webhooks library.
func TestRotatedSecretSignsUntilItsGraceEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	clk := &clock{t: time.Now().UTC().Truncate(time.Microsecond)}
	sealer, err := jobs.NewSealer([]byte("s"))
	require.NoError(t, err)
	svc, q := newService(t, jobs.Deps{Store: st, Billing: billing.New(st, billing.DefaultConfig()), Engine: &scriptEngine{}, Sealer: sealer,
		Logger: quietLogger(), Now: clk.Now}, testConfig(t))
	start(t, q)
	acct, _, err := st.EnsureAccount(ctx, "rotate@example.com", store.TierPro, false)
	require.NoError(t, err)
	hooks := newHookRecorder(t)
	key := liveKey(t, st, acct.ID)

	// deliver runs a job to its webhook and returns the delivery's signatures, checked against each
	// secret (VerifyIgnoringTimestamp: the service's clock is not the library's).
	deliver := func(secrets ...string) []bool {
		t.Helper()
		before := hooks.count()
		c, err := svc.Create(ctx, jobs.CreateRequest{AccountID: acct.ID, Tier: store.TierPro, APIKey: key, Question: "q", Effort: "low",
			WebhookURL: ptr(hooks.URL)})
		require.NoError(t, err)
		waitFor(t, st, c.Job.ID, terminal)
		require.Eventually(t, func() bool { return hooks.count() == before+1 }, 30*time.Second, 10*time.Millisecond)
		got := hooks.last()
		require.Equal(t, strconv.FormatInt(clk.Now().Unix(), 10), got.header.Get("webhook-timestamp"), "the attempt's time on the service's clock")
		out := make([]bool, len(secrets))
		for i, s := range secrets {
			wh, err := standardwebhooks.NewWebhook(s)
			require.NoError(t, err)
			out[i] = wh.VerifyIgnoringTimestamp(got.body, got.header) == nil
		}
		return out
	}

	_, err = svc.RotateWebhookSecret(ctx, acct.ID, jobs.MaxWebhookSecretGrace+time.Second)
	require.True(t, fault.IsKind(err, fault.Invalid), "err %v", err)
	first, err := svc.RotateWebhookSecret(ctx, acct.ID, time.Hour)
	require.NoError(t, err)
	require.Nil(t, first.PreviousExpiresAt, "nothing to keep on the first secret")
	second, err := svc.RotateWebhookSecret(ctx, acct.ID, time.Hour)
	require.NoError(t, err)
	require.Equal(t, clk.Now().Add(time.Hour), *second.PreviousExpiresAt)
	require.Equal(t, []bool{true, true}, deliver(first.Secret, second.Secret), "both sign during the grace period")

	clk.Advance(time.Hour + time.Second)
	require.Equal(t, []bool{false, true}, deliver(first.Secret, second.Secret), "the old one stops when its grace ends")

	third, err := svc.RotateWebhookSecret(ctx, acct.ID, 0)
	require.NoError(t, err)
	require.Nil(t, third.PreviousExpiresAt)
	require.Equal(t, []bool{false, false, true}, deliver(first.Secret, second.Secret, third.Secret), "grace 0: only the new one")
}

// TestSealerKeyFile: RESEARCH_SECRET_KEY_FILE keeps the server secret outside the data folder:
// nothing is generated there, the file's key (trailing newline ignored) is the one used, and unusable
// settings are refused.
func TestSealerKeyFile(t *testing.T) {
	t.Parallel()
	dataDir, secretDir := t.TempDir(), t.TempDir()
	keyFile := filepath.Join(secretDir, "sealing.key")
	require.NoError(t, os.WriteFile(keyFile, []byte("a key kept elsewhere\n"), 0o600))
	s, err := jobs.LoadSealer("", keyFile, dataDir)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dataDir, jobs.SecretFileName))
	require.True(t, os.IsNotExist(err), "no key is generated in the data folder")
	sealed, err := s.Seal("rsk-secret", "job-1")
	require.NoError(t, err)
	same, err := jobs.NewSealer([]byte("a key kept elsewhere"))
	require.NoError(t, err)
	got, err := same.Open(sealed, "job-1")
	require.NoError(t, err)
	require.Equal(t, "rsk-secret", got)

	empty := filepath.Join(secretDir, "empty.key")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	for name, tc := range map[string][2]string{
		"both set":     {"inline", keyFile},
		"missing file": {"", filepath.Join(secretDir, "absent.key")},
		"empty file":   {"", empty},
	} {
		_, err := jobs.LoadSealer(tc[0], tc[1], dataDir)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "RESEARCH_SECRET_KEY", name)
	}
}
