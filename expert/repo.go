package expert

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sync"

	"github.com/researchd/researchd/workspace"
)

// contextDir is where context files live in an expert's repository (and in each run's workspace).
const contextDir = "context/"

// repos keeps one git repository per expert under root. The database stays the source of truth
// for context files; the repository is their history, so a failed or missing repository never
// fails a read (in_repository says which files it holds).
type repos struct {
	root string
	// stripes serialise the writers of one expert's repository (go-git is not safe for concurrent
	// writers); a fixed set, so the locks do not grow with the number of experts.
	stripes [64]sync.Mutex
}

func newRepos(root string) *repos { return &repos{root: root} }

// lock holds the expert's repository (and its context file rows) until the returned func runs.
func (r *repos) lock(expertID string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(expertID))
	m := &r.stripes[h.Sum32()%uint32(len(r.stripes))]
	m.Lock()
	return m.Unlock
}

func (r *repos) enabled() bool { return r.root != "" }

// Dir is where an expert's repository lives ("" without a files root).
func (r *repos) dir(expertID string) string {
	if !r.enabled() {
		return ""
	}
	return filepath.Join(r.root, expertID)
}

// change writes a file (Data non-nil) or removes it (Data nil).
type change struct {
	Name string
	Data []byte
}

// commit applies changes under context/ and commits them; the caller holds lock. removed says which
// removals found the file. Without a root nothing is committed (sha "").
func (r *repos) commit(expertID, message string, changes []change) (sha string, removed map[string]bool, err error) {
	if !r.enabled() {
		return "", nil, nil
	}
	repo, err := workspace.Init(r.dir(expertID))
	if err != nil {
		return "", nil, fmt.Errorf("expert repository: %w", err)
	}
	removed = map[string]bool{}
	for _, c := range changes {
		if c.Data == nil {
			ok, err := repo.RemoveFile(contextDir + c.Name)
			if err != nil {
				return "", nil, fmt.Errorf("expert repository: %w", err)
			}
			removed[c.Name] = ok
			continue
		}
		if err := repo.WriteFile(contextDir+c.Name, c.Data); err != nil {
			return "", nil, fmt.Errorf("expert repository: %w", err)
		}
	}
	sha, err = repo.Commit(message, workspace.CheckpointProgress)
	if err != nil {
		return "", nil, fmt.Errorf("expert repository: %w", err)
	}
	return sha, removed, nil
}
