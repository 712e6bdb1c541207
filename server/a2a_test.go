package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/a2aserver/a2atest"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestA2AClients drives the endpoint with a2a-go's own client in both protocol versions: every task
// is a research job of its caller, visible through REST.
func TestA2AClients(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			other := e.NewAccount(t, store.TierPro, false, 100)
			ctx := context.Background()
			card, err := a2atest.Card(ctx, e.URL)
			require.NoError(t, err)
			for _, v := range a2atest.Versions {
				t.Run(string(v), func(t *testing.T) {
					c, err := a2atest.Client(ctx, card, v, owner.Key)
					require.NoError(t, err)
					o, err := a2atest.Client(ctx, card, v, other.Key)
					require.NoError(t, err)
					e.a2aSendGetList(t, ctx, v, c, o, owner.Key)
					a2aStream(t, ctx, c)
					a2aSubscribeCancel(t, ctx, c, o)
				})
			}
		})
	}
}

func question(text string, meta map[string]any) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)), Metadata: meta}
}

// a2aSendGetList: a blocking send answers the finished task; get, list, cancel and subscribe see
// it; another account sees nothing.
func (e *researchEnv) a2aSendGetList(t *testing.T, ctx context.Context, v a2a.ProtocolVersion, c, o *a2aclient.Client, key string) {
	res, err := c.SendMessage(ctx, question("What drove the 2024 rise in EU electricity prices?", map[string]any{"effort": "low"}))
	require.NoError(t, err)
	task, ok := res.(*a2a.Task)
	require.True(t, ok, "%T", res)
	require.Equal(t, a2a.TaskStateCompleted, task.Status.State)
	require.Len(t, task.Artifacts, 1)
	require.Equal(t, "report.md", task.Artifacts[0].Name)

	// The task is the caller's research job.
	job := e.get(t, key, string(task.ID))
	require.Equal(t, job.Report.Markdown, task.Artifacts[0].Parts[0].Text())
	require.EqualValues(t, "low", job.Effort)

	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	require.NoError(t, err)
	require.Equal(t, a2a.TaskStateCompleted, got.Status.State)
	require.Equal(t, task.ContextID, got.ContextID)
	require.NotEmpty(t, got.History)
	require.Contains(t, got.History[0].Parts[0].Text(), "electricity prices")

	// Finished: not cancelable, nothing to subscribe to.
	_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	require.ErrorIs(t, err, a2a.ErrTaskNotCancelable)
	for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		require.ErrorIs(t, err, a2a.ErrUnsupportedOperation)
	}
	// A task takes one message.
	follow := question("And in 2025?", nil)
	follow.Message.TaskID = task.ID
	_, err = c.SendMessage(ctx, follow)
	require.ErrorIs(t, err, a2a.ErrUnsupportedOperation)

	// Another account's task does not exist for it.
	_, err = o.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	require.ErrorIs(t, err, a2a.ErrTaskNotFound)
	_, err = o.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	require.ErrorIs(t, err, a2a.ErrTaskNotFound)
	follow.Message.TaskID = task.ID
	_, err = o.SendMessage(ctx, follow)
	require.ErrorIs(t, err, a2a.ErrTaskNotFound)
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "7c9e6679-7425-40de-944b-e07fc1f90ae7"})
	require.ErrorIs(t, err, a2a.ErrTaskNotFound)

	// Bad research parameters are invalid params, and create nothing.
	_, err = c.SendMessage(ctx, question("q", map[string]any{"effort": "huge"}))
	require.ErrorIs(t, err, a2a.ErrInvalidParams)
	_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"x": 1}))})
	require.ErrorIs(t, err, a2a.ErrInvalidParams)

	// ListTasks (v1.0 only: v0.3 has no tasks/list) pages the caller's tasks.
	if v == a2a.Version {
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, IncludeArtifacts: true})
		require.NoError(t, err)
		require.Len(t, list.Tasks, 1)
		require.Equal(t, task.ID, list.Tasks[0].ID)
		require.Len(t, list.Tasks[0].Artifacts, 1)
		list, err = o.ListTasks(ctx, &a2a.ListTasksRequest{})
		require.NoError(t, err)
		require.Empty(t, list.Tasks)
	}
}

// a2aStream: a streaming send replays the job's timeline and ends with the report and a terminal
// status.
func a2aStream(t *testing.T, ctx context.Context, c *a2aclient.Client) {
	var events []a2a.Event
	for ev, err := range c.SendStreamingMessage(ctx, question("Why do heat pumps save energy?", map[string]any{"effort": "low"})) {
		require.NoError(t, err)
		events = append(events, ev)
	}
	require.GreaterOrEqual(t, len(events), 4)
	first, ok := events[0].(*a2a.Task)
	require.True(t, ok, "%T", events[0])
	var timeline, artifacts int
	for _, ev := range events[1 : len(events)-1] {
		require.Equal(t, first.ID, ev.TaskInfo().TaskID)
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			require.False(t, ev.Status.State.Terminal())
			if ev.Status.Message != nil { // a timeline event (a bare update is a change of state)
				timeline++
			}
		case *a2a.TaskArtifactUpdateEvent:
			require.Equal(t, "report.md", ev.Artifact.Name)
			artifacts++
		}
	}
	require.Positive(t, timeline)
	require.Equal(t, 1, artifacts)
	last, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
	require.True(t, ok, "%T", events[len(events)-1])
	require.Equal(t, a2a.TaskStateCompleted, last.Status.State)
}

// a2aSubscribeCancel: a subscriber to a running task sees it work, and its cancelation ends the
// stream; another account can neither subscribe nor cancel.
func a2aSubscribeCancel(t *testing.T, ctx context.Context, c, o *a2aclient.Client) {
	req := question("Hold this one [block]", map[string]any{"effort": "low"})
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	require.NoError(t, err)
	task := res.(*a2a.Task)
	require.False(t, task.Status.State.Terminal())
	for _, err := range o.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		require.ErrorIs(t, err, a2a.ErrTaskNotFound)
	}
	var final a2a.TaskState
	canceled := false
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		require.NoError(t, err)
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		if u.Status.State == a2a.TaskStateWorking && !canceled {
			canceled = true
			got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			require.NoError(t, err)
			require.Equal(t, a2a.TaskStateCanceled, got.Status.State)
			again, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			require.NoError(t, err, "cancelling a canceled task answers it as it is")
			require.Equal(t, a2a.TaskStateCanceled, again.Status.State)
		}
		final = u.Status.State
	}
	require.True(t, canceled)
	require.Equal(t, a2a.TaskStateCanceled, final)
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (e *researchEnv) rpc(t *testing.T, key string, raw string) rpcReply {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/a2a", Token: key, RawBody: []byte(raw), ContentType: "application/json"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"), r.Header.Get("Content-Type"))
	var out rpcReply
	r.JSON(t, &out)
	require.Equal(t, "2.0", out.JSONRPC)
	return out
}

// TestA2AProtocolErrors: malformed and invalid requests answer JSON-RPC errors (HTTP 200, the
// request's id), never problem+json, and change nothing.
func TestA2AProtocolErrors(t *testing.T) {
	t.Parallel()
	e := newResearchEnv(t, store.SQLite)
	owner := e.NewAccount(t, store.TierPro, false, 100)
	const msg = `"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"q"}]}`
	const msgV0 = `"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"q"}]}`
	tests := []struct {
		name, body string
		code       int
		id         string
	}{
		{"malformed JSON", `{"jsonrpc":"2.0",`, -32700, `null`},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"GetTask"}{}`, -32700, `null`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"\xff\"}}", -32700, `null`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`, -32600, `null`},
		{"not an object", `"hello"`, -32600, `null`},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"tasks/get"}`, -32600, `5`},
		{"no version", `{"id":"a","method":"GetTask"}`, -32600, `"a"`},
		{"no method", `{"jsonrpc":"2.0","id":"x"}`, -32600, `"x"`},
		{"method not a string", `{"jsonrpc":"2.0","id":"x","method":7}`, -32600, `"x"`},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}`, -32600, `null`},
		{"unknown method", `{"jsonrpc":"2.0","id":6,"method":"tasks/explode","params":{}}`, -32601, `6`},
		{"params an array", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":[1]}`, -32602, `8`},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":5}}`, -32602, `9`},
		{"v1 part without content", `{"jsonrpc":"2.0","id":10,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{}]}}}`, -32602, `10`},
		{"v0 part of unknown kind", `{"jsonrpc":"2.0","id":11,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"video"}]}}}`, -32602, `11`},
		{"v1 no params", `{"jsonrpc":"2.0","id":12,"method":"GetTask"}`, -32602, `12`},
		{"v0 no text", `{"jsonrpc":"2.0","id":13,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"data","data":{"a":1}}]}}}`, -32602, `13`},
		{"v1 bad effort", `{"jsonrpc":"2.0","id":14,"method":"SendMessage","params":{` + msg + `,"metadata":{"effort":"huge"}}}`, -32602, `14`},
		{"v0 schema not an object", `{"jsonrpc":"2.0","id":15,"method":"message/send","params":{` + msgV0 + `,"metadata":{"json_schema":"x"}}}`, -32602, `15`},
		{"v1 unknown task", `{"jsonrpc":"2.0","id":16,"method":"GetTask","params":{"id":"nope"}}`, -32001, `16`},
		{"v0 unknown task", `{"jsonrpc":"2.0","id":"g","method":"tasks/cancel","params":{"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}`, -32001, `"g"`},
		{"v0 push config", `{"jsonrpc":"2.0","id":17,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"t","pushNotificationConfig":{"url":"https://example.com/hook"}}}`, -32003, `17`},
		{"v1 extended card", `{"jsonrpc":"2.0","id":18,"method":"GetExtendedAgentCard","params":{}}`, -32004, `18`},
		{"v1 push config in a message", `{"jsonrpc":"2.0","id":19,"method":"SendMessage","params":{` + msg + `,"configuration":{"taskPushNotificationConfig":{"url":"https://example.com/hook"}}}}`, -32003, `19`},
	}
	for _, tc := range tests {
		r := e.rpc(t, owner.Key, tc.body)
		require.NotNil(t, r.Error, tc.name)
		require.Equal(t, tc.code, r.Error.Code, "%s: %s", tc.name, r.Error.Message)
		require.JSONEq(t, tc.id, string(r.ID), tc.name)
	}
	// None of them created a job.
	r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: owner.Key})
	require.JSONEq(t, `[]`, string(mustField(t, r.Body, "items")))

	// Credentials are HTTP's business: none is 401 problem+json.
	r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/a2a", RawBody: []byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`), ContentType: "application/json"})
	require.Equal(t, http.StatusUnauthorized, r.Status)

	// The agent card is public and describes both protocol versions on the same URL.
	r = e.Do(t, servertest.Req{Method: "GET", Path: "/.well-known/agent-card.json"})
	require.Equal(t, http.StatusOK, r.Status)
	var card struct {
		URL                 string `json:"url"`
		ProtocolVersion     string `json:"protocolVersion"`
		SupportedInterfaces []struct {
			URL, ProtocolBinding, ProtocolVersion string
		} `json:"supportedInterfaces"`
		Capabilities struct {
			Streaming bool `json:"streaming"`
		} `json:"capabilities"`
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
		SecuritySchemes map[string]struct {
			Type   string `json:"type"`
			Scheme string `json:"scheme"`
		} `json:"securitySchemes"`
	}
	r.JSON(t, &card)
	require.Equal(t, e.URL+"/api/v2/a2a", card.URL)
	require.Equal(t, "0.3", card.ProtocolVersion)
	require.Len(t, card.SupportedInterfaces, 2)
	for i, v := range []string{"1.0", "0.3"} {
		require.Equal(t, e.URL+"/api/v2/a2a", card.SupportedInterfaces[i].URL)
		require.Equal(t, "JSONRPC", card.SupportedInterfaces[i].ProtocolBinding)
		require.Equal(t, v, card.SupportedInterfaces[i].ProtocolVersion)
	}
	require.True(t, card.Capabilities.Streaming)
	require.Equal(t, "research", card.Skills[0].ID)
	require.Equal(t, "http", card.SecuritySchemes["apiKey"].Type)
	require.Equal(t, "bearer", card.SecuritySchemes["apiKey"].Scheme)
}

func mustField(t *testing.T, body []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	return m[name]
}
