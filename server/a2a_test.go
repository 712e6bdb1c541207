package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
		Artifacts []struct {
			Name  string `json:"name"`
			Parts []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"artifacts"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func (e *researchEnv) rpc(t *testing.T, key string, raw string) rpcReply {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/a2a", Token: key, RawBody: []byte(raw), ContentType: "application/json"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"))
	var out rpcReply
	r.JSON(t, &out)
	require.Equal(t, "2.0", out.JSONRPC)
	return out
}

func TestA2A(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			other := e.NewAccount(t, store.TierPro, false, 100)

			send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"What drove the 2024 rise in EU electricity prices?"}]},"metadata":{"effort":"low"}}}`
			sent := e.rpc(t, owner.Key, send)
			require.Nil(t, sent.Error)
			require.JSONEq(t, `1`, string(sent.ID))
			require.Equal(t, "task", sent.Result.Kind)
			require.Equal(t, "submitted", sent.Result.Status.State)
			taskID := sent.Result.ID
			require.Equal(t, taskID, sent.Result.ContextID)

			// The task is the caller's research job.
			job := e.await(t, owner.Key, taskID, isTerminal)
			got := e.rpc(t, owner.Key, `{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"id":"`+taskID+`"}}`)
			require.Nil(t, got.Error)
			require.JSONEq(t, `"g"`, string(got.ID))
			require.Equal(t, "completed", got.Result.Status.State)
			require.Len(t, got.Result.Artifacts, 1)
			require.Equal(t, "report.md", got.Result.Artifacts[0].Name)
			require.Equal(t, job.Report.Markdown, got.Result.Artifacts[0].Parts[0].Text)

			// A finished task cannot be cancelled; a fresh one can, and cancelling again is a no-op.
			require.Equal(t, -32002, e.rpc(t, owner.Key, `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"`+taskID+`"}}`).Error.Code)
			fresh := e.mustCreate(t, owner.Key, map[string]any{"question": "A question to cancel", "effort": "low"})
			for range 2 {
				c := e.rpc(t, owner.Key, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"`+fresh.JobId.String()+`"}}`)
				if c.Error != nil { // the worker finished it first
					require.Equal(t, -32002, c.Error.Code)
					break
				}
				require.Equal(t, "canceled", c.Result.Status.State)
			}

			// Another account's task, an unknown one, a bad id: task not found.
			for _, id := range []string{taskID, "7c9e6679-7425-40de-944b-e07fc1f90ae7", "nope"} {
				r := e.rpc(t, other.Key, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"id":"`+id+`"}}`)
				require.Equal(t, -32001, r.Error.Code, id)
				require.JSONEq(t, `4`, string(r.ID))
			}

			tests := []struct {
				name, body string
				code       int
				id         string
			}{
				{"malformed JSON", `{"jsonrpc":"2.0",`, -32700, `null`},
				{"not an object", `[1,2]`, -32600, `null`},
				{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"tasks/get"}`, -32600, `5`},
				{"no method", `{"jsonrpc":"2.0","id":"x"}`, -32600, `"x"`},
				{"unknown method", `{"jsonrpc":"2.0","id":6,"method":"tasks/explode","params":{}}`, -32601, `6`},
				{"no text", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"file"}]}}}`, -32602, `7`},
				{"bad params", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":[1]}`, -32602, `8`},
				{"bad effort", `{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"q"}]},"metadata":{"effort":"huge"}}}`, -32602, `9`},
			}
			for _, tc := range tests {
				r := e.rpc(t, owner.Key, tc.body)
				require.NotNil(t, r.Error, tc.name)
				require.Equal(t, tc.code, r.Error.Code, tc.name)
				require.JSONEq(t, tc.id, string(r.ID), tc.name)
			}

			// The agent card is public.
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/.well-known/agent-card.json"})
			require.Equal(t, http.StatusOK, r.Status)
			var card struct {
				URL    string `json:"url"`
				Skills []struct {
					ID string `json:"id"`
				} `json:"skills"`
			}
			r.JSON(t, &card)
			require.Equal(t, e.URL+"/api/v2/a2a", card.URL)
			require.Equal(t, "research", card.Skills[0].ID)
		})
	}
}
