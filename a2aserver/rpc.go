package a2aserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"unicode/utf8"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// JSON-RPC 2.0 and A2A error codes answered by the endpoint itself; the library answers the rest
// (-32001 task not found, -32002 not cancelable, -32003 push not supported, -32004 unsupported
// operation) with the same body shape.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// decoders check a method's params the way its library handler will read them, so params of the
// wrong shape are -32602 here rather than whatever the handler's decoder makes of them.
type decoder func(json.RawMessage) error

func decodeInto[T any](raw json.RawMessage) error {
	var v T
	return json.Unmarshal(raw, &v)
}

// v1Methods are the A2A v1.0 JSON-RPC method names; v0Methods the v0.3 ones.
var v1Methods = map[string]decoder{
	"SendMessage":                      decodeInto[a2a.SendMessageRequest],
	"SendStreamingMessage":             decodeInto[a2a.SendMessageRequest],
	"GetTask":                          decodeInto[a2a.GetTaskRequest],
	"ListTasks":                        decodeInto[a2a.ListTasksRequest],
	"CancelTask":                       decodeInto[a2a.CancelTaskRequest],
	"SubscribeToTask":                  decodeInto[a2a.SubscribeToTaskRequest],
	"GetTaskPushNotificationConfig":    decodeInto[a2a.GetTaskPushConfigRequest],
	"CreateTaskPushNotificationConfig": decodeInto[a2a.PushConfig],
	"ListTaskPushNotificationConfigs":  decodeInto[a2a.ListTaskPushConfigRequest],
	"DeleteTaskPushNotificationConfig": decodeInto[a2a.DeleteTaskPushConfigRequest],
	"GetExtendedAgentCard":             decodeInto[a2a.GetExtendedAgentCardRequest],
}

var v0Methods = map[string]decoder{
	"message/send":                        decodeV0Message,
	"message/stream":                      decodeV0Message,
	"tasks/get":                           decodeInto[a2alegacy.TaskQueryParams],
	"tasks/cancel":                        decodeInto[a2alegacy.TaskIDParams],
	"tasks/resubscribe":                   decodeInto[a2alegacy.TaskIDParams],
	"tasks/pushNotificationConfig/get":    decodeInto[a2alegacy.GetTaskPushConfigParams],
	"tasks/pushNotificationConfig/set":    decodeInto[a2alegacy.TaskPushConfig],
	"tasks/pushNotificationConfig/list":   decodeInto[a2alegacy.ListTaskPushConfigParams],
	"tasks/pushNotificationConfig/delete": decodeInto[a2alegacy.DeleteTaskPushConfigParams],
	"agent/getAuthenticatedExtendedCard":  func(json.RawMessage) error { return nil },
}

func decodeV0Message(raw json.RawMessage) error {
	var p a2alegacy.MessageSendParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	_, err := a2av0.ToV1SendMessageRequest(&p)
	return err
}

// endpoint is POST /api/v2/a2a: it checks the JSON-RPC envelope, then hands the request to the
// library's v1.0 or v0.3 JSON-RPC handler by method name (each knows only its own names). Every
// outcome is a JSON-RPC body with HTTP 200 and the request's id.
type endpoint struct {
	v1, v0 http.Handler
	log    *slog.Logger
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

func (h *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		h.fail(w, nil, codeParseError, "parse error: the body could not be read")
		return
	}
	if !utf8.Valid(body) || !json.Valid(body) {
		h.fail(w, nil, codeParseError, "parse error: the body is not valid JSON")
		return
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil || env == nil {
		h.fail(w, nil, codeInvalidRequest, "invalid request: not a JSON-RPC request object (batches are not supported)")
		return
	}
	id, ok := requestID(env["id"])
	if !ok {
		h.fail(w, nil, codeInvalidRequest, "invalid request: id must be a string, a number or null")
		return
	}
	var version, method string
	if json.Unmarshal(env["jsonrpc"], &version) != nil || version != "2.0" {
		h.fail(w, id, codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
		return
	}
	if json.Unmarshal(env["method"], &method) != nil || method == "" {
		h.fail(w, id, codeInvalidRequest, "invalid request: method must be a non-empty string")
		return
	}
	next, decode := h.v1, v1Methods[method]
	if decode == nil {
		next, decode = h.v0, v0Methods[method]
	}
	if decode == nil {
		h.fail(w, id, codeMethodNotFound, "method not found: "+method)
		return
	}
	params := env["params"]
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = json.RawMessage("{}")
	}
	if params[0] != '{' {
		h.fail(w, id, codeInvalidParams, "invalid params: params must be an object")
		return
	}
	if err := decode(params); err != nil {
		h.fail(w, id, codeInvalidParams, "invalid params: "+err.Error())
		return
	}
	// The library's handlers read the envelope again: hand them the checked one.
	norm, err := json.Marshal(map[string]json.RawMessage{"jsonrpc": env["jsonrpc"], "id": id, "method": env["method"], "params": params})
	if err != nil {
		h.fail(w, id, codeParseError, "parse error")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(norm))
	r.ContentLength = int64(len(norm))
	next.ServeHTTP(w, r)
}

// requestID returns the id to echo: absent is null (a notification still gets its answer over
// HTTP); anything but a string, a number or null is invalid.
func requestID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return json.RawMessage("null"), true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	switch v.(type) {
	case string, float64, nil:
		return raw, true
	}
	return nil, false
}

func (h *endpoint) fail(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.WriteHeader(http.StatusOK)
	if err := json.NewEncoder(w).Encode(rpcReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg}}); err != nil {
		h.log.Debug("a2a reply not written", "error", err) // the client went away
	}
}
