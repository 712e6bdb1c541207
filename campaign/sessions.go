package campaign

import (
	"context"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/engine"
)

// Answer sessions are shared by the chunks of one stage: opening one loads and indexes the
// engine's sources (for the offline engine, a few hundred milliseconds for a 2,000-passage corpus,
// more than a chunk's hundred answers cost), and a session remembers its searches, which repeat
// from record to record. A session is reused for at most sessionMaxAge, so changes to the corpus
// or to an agent reach a long campaign, and closed once no chunk has used it for sessionIdle.
const (
	sessionMaxAge = 5 * time.Minute
	sessionIdle   = 30 * time.Second
)

// sessionKey names what a session answers for: one stage of one campaign (its plan, and so the
// stage's configuration, is fixed once approved).
type sessionKey struct{ campaignID, stage string }

type sharedSession struct {
	sess     engine.AnswerSession
	sch      *jsonschema.Schema
	opened   time.Time
	lastUsed time.Time
	users    int
	retired  bool // too old to hand out; closed when its last user releases it
}

// sessions holds the open sessions of this process.
type sessions struct {
	mu   sync.Mutex
	open map[sessionKey]*sharedSession
	now  func() time.Time // nil: time.Now
}

func (p *sessions) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// acquire returns the stage's session, opening one with open when there is none fresh enough;
// release must be called when the chunk is done with it.
func (p *sessions) acquire(ctx context.Context, k sessionKey, open func(context.Context) (engine.AnswerSession, *jsonschema.Schema, error)) (engine.AnswerSession, *jsonschema.Schema, func(), error) {
	p.mu.Lock()
	now := p.clock()
	if sh := p.open[k]; sh != nil && now.Sub(sh.opened) < sessionMaxAge {
		sh.users++
		p.mu.Unlock()
		return sh.sess, sh.sch, func() { p.release(k, sh) }, nil
	}
	p.mu.Unlock()
	// Opened outside the lock: two chunks may both open one; the second replaces the first,
	// which closes when its users are done.
	sess, sch, err := open(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	sh := &sharedSession{sess: sess, sch: sch, opened: now, users: 1}
	p.mu.Lock()
	if old := p.open[k]; old != nil {
		p.retire(k, old)
	}
	if p.open == nil {
		p.open = map[sessionKey]*sharedSession{}
	}
	p.open[k] = sh
	p.mu.Unlock()
	return sess, sch, func() { p.release(k, sh) }, nil
}

func (p *sessions) release(k sessionKey, sh *sharedSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sh.users--
	sh.lastUsed = p.clock()
	if sh.users > 0 {
		return
	}
	if sh.retired || sh.lastUsed.Sub(sh.opened) >= sessionMaxAge {
		p.retire(k, sh)
		return
	}
	time.AfterFunc(sessionIdle, p.sweep)
}

// sweep closes the sessions no chunk has used for sessionIdle.
func (p *sessions) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	for k, sh := range p.open {
		if sh.users == 0 && now.Sub(sh.lastUsed) >= sessionIdle {
			p.retire(k, sh)
		}
	}
}

// retire stops handing sh out and closes it once unused. Call with p.mu held.
func (p *sessions) retire(k sessionKey, sh *sharedSession) {
	if p.open[k] == sh {
		delete(p.open, k)
	}
	sh.retired = true
	if sh.users == 0 && sh.sess != nil {
		_ = sh.sess.Close()
		sh.sess = nil
	}
}
