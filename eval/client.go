package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"strings"
	"sync"
	"time"
)

// Client calls a research server's public API with an API key.
type Client struct {
	Base string // http://127.0.0.1:8080
	Key  string
	HTTP *http.Client
	Poll time.Duration // between job status reads; 100ms when zero

	mu          sync.Mutex
	attachments map[string]*upload // by file name and content hash
}

type upload struct {
	done chan struct{}
	id   string
	err  error
}

// Job is a finished research job as the evaluation reads it.
type Job struct {
	ID         string
	Status     string // completed, failed, blocked, cancelled
	Markdown   string
	Structured map[string]any
	ErrorCode  string
	ErrorMsg   string
	Elapsed    time.Duration
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends a request and decodes a JSON answer into out; a status outside 2xx is an error with
// the problem's detail. Too Many Requests is retried after the advertised delay.
func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.Key)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := c.http().Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			return err
		}
		if (res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable) && attempt < 20 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt+1) * 250 * time.Millisecond):
			}
			continue
		}
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, strings.TrimSpace(string(b)))
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(b, out)
	}
}

// Upload stores a text file as an attachment and returns its id. The same name and text are
// uploaded once: later calls (also concurrent ones) get the first upload's id.
func (c *Client) Upload(ctx context.Context, name, text string) (string, error) {
	sum := sha256.Sum256([]byte(text))
	key := name + "\x00" + hex.EncodeToString(sum[:])
	c.mu.Lock()
	if c.attachments == nil {
		c.attachments = map[string]*upload{}
	}
	u, ok := c.attachments[key]
	if !ok {
		u = &upload{done: make(chan struct{})}
		c.attachments[key] = u
	}
	c.mu.Unlock()
	if ok {
		select {
		case <-u.done:
			return u.id, u.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	defer close(u.done)
	u.id, u.err = c.upload(ctx, name, text)
	if u.err != nil {
		c.mu.Lock()
		delete(c.attachments, key) // a later call tries again
		c.mu.Unlock()
	}
	return u.id, u.err
}

func (c *Client) upload(ctx context.Context, name, text string) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="files"; filename=%q`, name))
	h.Set("Content-Type", partType(name))
	part, err := w.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(part, text); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	var out struct {
		AttachmentID string `json:"attachment_id"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v2/attachments", w.FormDataContentType(), body.Bytes(), &out); err != nil {
		return "", err
	}
	return out.AttachmentID, nil
}

// Research creates a job and waits until it ends.
func (c *Client) Research(ctx context.Context, question, effort string, attachmentIDs []string, schema map[string]any) (Job, error) {
	start := time.Now()
	req := map[string]any{"question": question, "effort": effort}
	if len(attachmentIDs) > 0 {
		req["attachment_ids"] = attachmentIDs
	}
	if schema != nil {
		req["json_schema"] = schema
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Job{}, err
	}
	var created struct {
		JobID string `json:"job_id"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v2/research", "application/json", body, &created); err != nil {
		return Job{}, err
	}
	poll := c.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		var d struct {
			Status string `json:"status"`
			Report *struct {
				Markdown string `json:"markdown"`
			} `json:"report"`
			Structured map[string]any `json:"structured_output"`
			Error      *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := c.do(ctx, http.MethodGet, "/api/v2/research/"+created.JobID, "", nil, &d); err != nil {
			return Job{}, err
		}
		switch d.Status {
		case "completed", "failed", "blocked", "cancelled":
			j := Job{ID: created.JobID, Status: d.Status, Structured: d.Structured, Elapsed: time.Since(start)}
			if d.Report != nil {
				j.Markdown = d.Report.Markdown
			}
			if d.Error != nil {
				j.ErrorCode, j.ErrorMsg = d.Error.Code, d.Error.Message
			}
			return j, nil
		}
		select {
		case <-ctx.Done():
			return Job{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// partType is the media type a client would send for a file of this name: a Word or PDF file is
// sent as what it is, any other file as UTF-8 text.
func partType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md":
		return "text/markdown; charset=utf-8"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	case ".pdf":
		return "application/pdf"
	case ".docx":
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	}
	return "text/plain; charset=utf-8"
}
