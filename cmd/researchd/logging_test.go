package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/server"
	"github.com/researchd/researchd/store/storetest"
)

// TestConsoleLog: the text log shows warnings, the jobs' state changes and the rest of the info
// lines; the access log and River's statistics only at debug, and River's warnings always.
func TestConsoleLog(t *testing.T) {
	t.Parallel()
	emit := func(log *slog.Logger) {
		log.Info(server.AccessLogMessage, "method", "GET", "path", "/healthz", "status", 200)
		log.With("component", "river").Info("producer: Producer job counts", "num_active", 0)
		log.With("component", "river").Warn("producer: queue poll failed", "error", "timeout")
		log.With("component", "jobs").Info("job completed", "job_id", "j1")
		log.Info("researchd listening", "addr", "127.0.0.1:8080", "docs", "http://127.0.0.1:8080/docs")
		log.WithGroup("g").Debug("detail", "note", "two words")
	}
	tests := []struct {
		level      string
		want, hide []string
	}{
		{"info", []string{
			"WARN producer: queue poll failed error=timeout",
			"job completed job_id=j1",
			"researchd listening addr=127.0.0.1:8080 docs=http://127.0.0.1:8080/docs",
		}, []string{"request", "Producer job counts", "detail", "component="}},
		{"debug", []string{
			"request method=GET path=/healthz status=200",
			"producer: Producer job counts num_active=0",
			"job completed job_id=j1",
			`DEBUG detail g.note="two words"`,
		}, nil},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		emit(newLogger(&buf, tt.level, logFormatText))
		out := buf.String()
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			require.Regexp(t, `^\d\d:\d\d:\d\d \S`, line)
		}
		for _, w := range tt.want {
			require.Contains(t, out, w, tt.level)
		}
		for _, h := range tt.hide {
			require.NotContains(t, out, h, tt.level)
		}
	}
	// Not a terminal, format auto: JSON lines as before, access log included.
	var buf bytes.Buffer
	emit(newLogger(&buf, "info", logFormatAuto))
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		require.True(t, json.Valid([]byte(line)), line)
	}
	require.Contains(t, buf.String(), `"msg":"request"`)
	_, err := loadConfig(func(k string) string { return map[string]string{"RESEARCH_LOG_FORMAT": "xml"}[k] })
	require.ErrorContains(t, err, "RESEARCH_LOG_FORMAT")
}

// TestServeQuietTerminal: `researchd serve` logging as on a terminal prints the key (stdout), the docs
// URL and one line per job state change, not the access log, whatever the traffic; at debug the
// access log is back.
func TestServeQuietTerminal(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"info", "debug"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, storetest.Dialects()[0])
			c.env["RESEARCH_ADDR"] = "127.0.0.1:0"
			c.env["RESEARCH_LOG_LEVEL"] = level
			c.env["RESEARCH_LOG_FORMAT"] = "text"
			c.env["RESEARCH_POLL_INTERVAL"] = "20ms"
			ctx, cancel := context.WithCancel(context.Background())
			out, errOut := &syncBuffer{}, &syncBuffer{}
			done := make(chan error, 1)
			go func() { done <- run(ctx, []string{"serve"}, c.getenv, out, errOut) }()
			listening := regexp.MustCompile(`researchd listening addr=(\S+) .*docs=(\S+)`)
			var addr string
			waitUntil(t, func() bool {
				m := listening.FindStringSubmatch(errOut.String())
				if m != nil {
					addr = m[1]
				}
				return m != nil
			})
			key := regexp.MustCompile(`rsk-[A-Za-z0-9_-]{43}`).FindString(out.String())
			require.NotEmpty(t, key)
			require.Contains(t, out.String(), "Docs: http://"+addr+"/docs")
			require.Contains(t, out.String(), "Console: http://"+addr+"/console")

			res := call(t, addr, key, "POST", "/api/v2/research", map[string]any{"question": "Why is the sky blue?", "effort": "low"})
			require.Equal(t, http.StatusAccepted, res.status, string(res.body))
			id := res.field(t, "job_id")
			waitUntil(t, func() bool {
				return call(t, addr, key, "GET", "/api/v2/research/"+id, nil).field(t, "status") == "completed"
			})
			waitUntil(t, func() bool { return strings.Contains(errOut.String(), "job completed job_id="+id) })
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(time.Minute):
				t.Fatal("serve did not stop")
			}

			log := errOut.String()
			require.NotContains(t, log, "{", "no JSON on a terminal")
			for _, state := range []string{"queued", "in_progress", "completed"} {
				require.Equal(t, 1, strings.Count(log, "job "+state+" job_id="+id), "%s\n%s", state, log)
			}
			if level == "info" {
				require.NotContains(t, log, " request ")
				require.NotContains(t, log, "Producer job counts")
				require.NotContains(t, out.String()+log, "/api/v2/research/"+id, "no access log line")
			} else {
				require.Contains(t, log, "request method=GET path=/api/v2/research/"+id)
			}
		})
	}
}
