package server_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestWebhooksMatchTheirCallback checks real deliveries (a completed and a failed job) against the
// `callbacks` of POST /research in the document: every header it requires, every header's format,
// and the payload schema.
func TestWebhooksMatchTheirCallback(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	require.NoError(t, err)
	for _, path := range []string{"/api/v2/research", "/api/v2/run"} {
		require.Len(t, doc.Paths.Value(path).Post.Callbacks, 1, path)
	}
	cb := doc.Paths.Value("/api/v2/research").Post.Callbacks["researchWebhook"]
	require.NotNil(t, cb, "POST /research documents its webhook as the callback researchWebhook")
	item := cb.Value.Value("{$request.body#/webhook_url}")
	require.NotNil(t, item)
	route := &routers.Route{Spec: doc, Path: "/hook", PathItem: item, Method: http.MethodPost, Operation: item.Post}

	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierEnterprise, false, 50)
			rc := newReceiver(t, 0)
			for _, q := range []string{"Callback question [fail]", "Callback question"} {
				j := e.mustCreate(t, owner.Key, map[string]any{"question": q, "effort": "low", "webhook_url": rc.URL + "/hook",
					"json_schema": map[string]any{"type": "object"}})
				e.await(t, owner.Key, j.Slug, isTerminal)
				awaitDeliveries(t, e.Store, j.JobId.String(), func(ds []store.WebhookDelivery) bool { return len(ds) > 0 && ds[0].Succeeded })
			}
			require.Eventually(t, func() bool { return len(rc.deliveries()) == 2 }, 30*time.Second, 20*time.Millisecond)
			events := map[string]bool{}
			for _, dv := range rc.deliveries() {
				req, err := http.NewRequest(http.MethodPost, rc.URL+"/hook", bytes.NewReader(dv.body))
				require.NoError(t, err)
				req.Header = dv.header
				err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
					Request: req, Route: route,
					Options: &openapi3filter.Options{MultiError: true},
				})
				require.NoError(t, err, "delivery %s", dv.body)
				events[string(dv.body)] = true
			}
			require.Len(t, events, 2)
		})
	}
}
