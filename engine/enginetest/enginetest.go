// Package enginetest holds what the engine packages' tests share: a recording sink, job
// workspaces, the test inputs, a fixed clock and a scripted wiki (wiki.go). Only tests import it.
package enginetest

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/workspace"
)

// Question asks about the test inputs and the test corpus.
const Question = "What do heat pumps cost, what are their benefits, and how does solar power affect running costs?"

// Sink keeps events and commits checkpoints to the workspace, like the job runner does.
type Sink struct {
	Repo *workspace.Repo

	mu          sync.Mutex
	Events      []engine.Event
	Checkpoints []Checkpoint
}

// Checkpoint is a checkpoint a Sink committed.
type Checkpoint struct{ Message, Type, SHA string }

func (s *Sink) Event(_ context.Context, e engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Events = append(s.Events, e)
	return nil
}

func (s *Sink) Checkpoint(_ context.Context, message, typ string) (string, error) {
	sha, err := s.Repo.Commit(message, typ)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Checkpoints = append(s.Checkpoints, Checkpoint{message, typ, sha})
	return sha, nil
}

// OfKind are the events of kind, in order.
func (s *Sink) OfKind(kind string) []engine.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []engine.Event
	for _, e := range s.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Workspace makes a job workspace with copies of the given files under input_files/.
func Workspace(t testing.TB, inputs map[string][]byte) *workspace.Repo {
	t.Helper()
	repo, err := workspace.Init(filepath.Join(t.TempDir(), "job"))
	require.NoError(t, err)
	for name, data := range inputs {
		require.NoError(t, repo.WriteFile(engine.InputDir+"/"+name, data))
	}
	return repo
}

//go:embed testdata/inputs
var inputs embed.FS

// Inputs are the files of testdata/inputs.
func Inputs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := fs.ReadDir(inputs, "testdata/inputs")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := fs.ReadFile(inputs, "testdata/inputs/"+e.Name())
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Clock is a run's fixed clock (Input.Now).
func Clock() time.Time { return time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC) }

// MustJSON is v as JSON.
func MustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// ReadWorkingFile reads a file of a workspace's working tree (what a run wrote, committed or not).
func ReadWorkingFile(repo *workspace.Repo, p string) (string, error) {
	b, err := os.ReadFile(filepath.Join(repo.Dir(), filepath.FromSlash(p)))
	return string(b), err
}
