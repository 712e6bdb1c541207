package a2aserver

import (
	"fmt"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Default bounds of Limits.
const (
	DefaultMaxTasks           = 100
	DefaultMaxTasksPerAccount = 10
)

// CodeTooManyTasks is the details code of the error a send answers over a limit.
const CodeTooManyTasks = "too_many_tasks"

// Limits bound the tasks one process follows at once (RESEARCH_A2A_MAX_TASKS and
// RESEARCH_A2A_MAX_TASKS_PER_ACCOUNT). Each task started by a send is followed by an execution
// until its job ends, whether or not its client still listens (a send answered at once leaves it
// running), and each execution holds goroutines and a follow of its job. Zero fields take the
// defaults.
type Limits struct {
	MaxTasks           int // in the process
	MaxTasksPerAccount int // of one account in the process
}

func (l Limits) withDefaults() Limits {
	if l.MaxTasks <= 0 {
		l.MaxTasks = DefaultMaxTasks
	}
	if l.MaxTasksPerAccount <= 0 {
		l.MaxTasksPerAccount = DefaultMaxTasksPerAccount
	}
	return l
}

// slots counts the executions in progress, in all and per account.
type slots struct {
	limits    Limits
	mu        sync.Mutex
	total     int
	byAccount map[string]int
}

func newSlots(l Limits) *slots {
	return &slots{limits: l.withDefaults(), byAccount: map[string]int{}}
}

// acquire takes a slot for an execution of account's, or answers the protocol error of a send over
// a limit (the account's is checked first: it is the one its caller can act on). release gives the
// slot back; calling it more than once is harmless.
func (s *slots) acquire(account string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.byAccount[account]; n >= s.limits.MaxTasksPerAccount {
		return nil, tooMany("this account has", s.limits.MaxTasksPerAccount, "account")
	}
	if s.total >= s.limits.MaxTasks {
		return nil, tooMany("this server has", s.limits.MaxTasks, "server")
	}
	s.total++
	s.byAccount[account]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.total--
			if s.byAccount[account]--; s.byAccount[account] == 0 {
				delete(s.byAccount, account)
			}
		})
	}, nil
}

// tooMany is JSON-RPC -32000 (the protocol's implementation-defined server error, as for
// insufficient credits): A2A has no error of its own for a concurrency limit.
func tooMany(who string, limit int, scope string) error {
	return a2a.NewError(a2a.ErrServerError, fmt.Sprintf("too many tasks in progress: %s %d A2A tasks running, the most allowed; wait for one to end (or cancel one) and send again", who, limit)).
		WithDetails(map[string]any{"code": CodeTooManyTasks, "scope": scope, "limit": limit})
}
