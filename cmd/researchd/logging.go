package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/researchd/researchd/server"
)

// Log formats (RESEARCH_LOG_FORMAT).
const (
	logFormatAuto = "auto" // text when stderr is a terminal, else json
	logFormatText = "text"
	logFormatJSON = "json"
)

// newLogger writes JSON lines for a log collector, or, on a terminal (format auto) or when asked for
// text, short lines for a person: below debug, without the access log and the job queue's own
// statistics, so what `make run` shows is the key, where the docs are and what the jobs do.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	if format == logFormatText || (format == logFormatAuto && isTerminal(w)) {
		return slog.New(&consoleHandler{mu: &sync.Mutex{}, w: w, level: l})
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// isTerminal says whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// consoleHandler prints "15:04:05 [LEVEL] message key=value ...". The access log and the job queue
// (River) at info are debug here: a terminal shows them at RESEARCH_LOG_LEVEL=debug only.
type consoleHandler struct {
	mu        *sync.Mutex
	w         io.Writer
	level     slog.Level
	component string // the component attribute, which decides what is chatter
	attrs     string // preformatted " key=value" pairs of WithAttrs
	group     string // key prefix of WithGroup
}

func (h *consoleHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// chatter is what a person at a terminal does not need to see unless debugging.
func (h *consoleHandler) chatter(r slog.Record) bool {
	return r.Level < slog.LevelWarn && (h.component == "river" || r.Message == server.AccessLogMessage)
}

func (h *consoleHandler) Handle(_ context.Context, r slog.Record) error {
	if h.chatter(r) && h.level > slog.LevelDebug {
		return nil
	}
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b.WriteString(t.Format("15:04:05 "))
	if r.Level != slog.LevelInfo {
		b.WriteString(r.Level.String() + " ")
	}
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *consoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	var b strings.Builder
	for _, a := range attrs {
		if a.Key == "component" && h.group == "" {
			c.component = a.Value.String() // said by the message; used to tell chatter
			continue
		}
		writeAttr(&b, h.group, a)
	}
	c.attrs += b.String()
	return &c
}

func (h *consoleHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// writeAttr appends " key=value", quoting values with spaces; groups flatten to dotted keys.
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			writeAttr(b, p, g)
		}
		return
	}
	v := a.Value.String()
	if a.Value.Kind() == slog.KindTime {
		v = a.Value.Time().Format(time.RFC3339)
	}
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == '"' || r == '=' }) {
		v = strconv.Quote(v)
	}
	fmt.Fprintf(b, " %s%s=%s", prefix, a.Key, v)
}

var _ slog.Handler = (*consoleHandler)(nil)

// logFormats are the accepted RESEARCH_LOG_FORMAT values.
var logFormats = []string{logFormatAuto, logFormatText, logFormatJSON}

func validLogFormat(f string) bool { return slices.Contains(logFormats, f) }
