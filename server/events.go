package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
)

const (
	eventHeartbeat = 15 * time.Second
	eventsRoute    = "/api/v2/research/:job_id_or_slug/events"
)

// StreamResearchEvents streams a job's timeline as Server-Sent Events, oldest first, after the
// Last-Event-ID header or ?after=. A pipe connects the producer to the generated response, which
// flushes every chunk and closes the reader when the client goes away.
func (s *Server) StreamResearchEvents(ctx context.Context, req gen.StreamResearchEventsRequestObject) (gen.StreamResearchEventsResponseObject, error) {
	j, _, err := s.readableJob(ctx, req.JobIdOrSlug)
	if err != nil {
		return nil, err
	}
	var after int64
	if req.Params.After != nil {
		after = int64(*req.Params.After)
	}
	if h := req.Params.LastEventID; h != nil {
		if after, err = strconv.ParseInt(*h, 10, 64); err != nil || after < 0 {
			return nil, errValidation("Last-Event-ID must be an event seq", gen.FieldError{Field: "Last-Event-ID", Message: "not an event seq"})
		}
	}
	if isHead(ctx) {
		// The stream's headers without the stream: it would run until the job ends.
		return gen.StreamResearchEvents200TexteventStreamResponse{Body: http.NoBody}, nil
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(s.pumpEvents(ctx, j.ID, after, pw))
	}()
	return gen.StreamResearchEvents200TexteventStreamResponse{Body: pr}, nil
}

// pumpEvents writes the stream until the job is terminal and drained, the client leaves (ctx) or a
// write fails (the reader was closed).
func (s *Server) pumpEvents(ctx context.Context, jobID string, after int64, out io.Writer) error {
	w := bufio.NewWriter(out)
	lastWrite := time.Now()
	// The process's follower wakes the stream on each change (the worker only writes rows, so a
	// slow reader never holds it up); the idle steps send the heartbeat.
	return s.research.Follow(ctx, jobID, after, eventHeartbeat/5, func(p jobs.Progress) error {
		for _, e := range p.Events {
			if err := writeSSE(w, strconv.FormatInt(e.Seq, 10), "timeline", timelineEvent(e)); err != nil {
				return err
			}
		}
		if p.Changed {
			if err := writeSSE(w, "", "status", map[string]string{"status": p.Job.Status}); err != nil {
				return err
			}
		}
		if p.Final {
			if err := writeSSE(w, "", "end", map[string]string{"status": p.Job.Status}); err != nil {
				return err
			}
			return w.Flush()
		}
		if w.Buffered() > 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			lastWrite = time.Now()
		} else if time.Since(lastWrite) >= eventHeartbeat {
			if _, err := io.WriteString(out, ": heartbeat\n\n"); err != nil {
				return err
			}
			lastWrite = time.Now()
		}
		return nil
	})
}

func writeSSE(w io.Writer, id, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", event, err)
	}
	if id != "" {
		if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return err
}

// unlimitedWrites clears the server's write deadline for streaming routes (the event stream and the
// A2A endpoint, whose streams and blocking sends last as long as their job), far past the
// WriteTimeout meant for ordinary responses.
func (s *Server) unlimitedWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == eventsRoute || c.Path() == a2aPath {
			if err := http.NewResponseController(c.Response()).SetWriteDeadline(time.Time{}); err != nil {
				s.log.DebugContext(c.Request().Context(), "stream write deadline", "error", err)
			}
		}
		return next(c)
	}
}
