package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/workspace"
)

// recordingSink keeps events and commits checkpoints to the workspace, like the job runner does.
type recordingSink struct {
	repo *workspace.Repo

	mu          sync.Mutex
	events      []engine.Event
	checkpoints []checkpoint
}

type checkpoint struct{ Message, Type, SHA string }

func (s *recordingSink) Event(_ context.Context, e engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	return nil
}

func (s *recordingSink) Checkpoint(_ context.Context, message, typ string) (string, error) {
	sha, err := s.repo.Commit(message, typ)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkpoints = append(s.checkpoints, checkpoint{message, typ, sha})
	return sha, nil
}

func (s *recordingSink) ofKind(kind string) []engine.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []engine.Event
	for _, e := range s.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// newWorkspace makes a job workspace with copies of the given files under input_files/.
func newWorkspace(t testing.TB, inputs map[string][]byte) *workspace.Repo {
	t.Helper()
	repo, err := workspace.Init(filepath.Join(t.TempDir(), "job"))
	require.NoError(t, err)
	for name, data := range inputs {
		require.NoError(t, repo.WriteFile(engine.InputDir+"/"+name, data))
	}
	return repo
}

// testInputs are the files of testdata/inputs.
func testInputs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir("testdata/inputs")
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata/inputs", e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

const corpusDir = "testdata/corpus"
