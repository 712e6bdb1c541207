package accounts

import (
	"sync"
	"time"

	"github.com/researchd/researchd/auth"
)

// keyCacheTTL is how long a verified API key is trusted without reading its row again. A key
// revoked through this process stops working at once (RevokeKey); one revoked through another
// process of the deployment, or an account whose tier changed there, takes effect here within
// this long.
const keyCacheTTL = 2 * time.Second

// keyCacheMax bounds the cache; past it the cache starts over (it only saves reads).
const keyCacheMax = 10000

// keyCache remembers API keys that verified recently, by the hash of the secret, so that a client
// making many requests costs one key read per keyCacheTTL instead of one per request.
type keyCache struct {
	mu   sync.Mutex
	keys map[string]cachedKey // by auth.HashKey(secret)
	// gen counts revocations: a key read before one is not cached after it (the read may predate it).
	gen uint64
}

type cachedKey struct {
	principal auth.Principal
	lastUsed  *time.Time // the row's last_used_at as last read or written, for TouchAPIKey
	expires   time.Time
}

func newKeyCache() *keyCache { return &keyCache{keys: map[string]cachedKey{}} }

// get returns the cached key of a secret's hash while it is fresh, and the generation to hand to
// put after reading the key from the store instead. Freshness is wall-clock time, whatever clock
// the server runs its business on.
func (c *keyCache) get(hash string) (cachedKey, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[hash]
	if !ok || !time.Now().Before(k.expires) {
		return cachedKey{}, c.gen, false
	}
	return k, c.gen, true
}

// put remembers a verified key (never a revoked one) for keyCacheTTL, unless a key was revoked since
// gen was read.
func (c *keyCache) put(hash string, gen uint64, p auth.Principal, lastUsed *time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.keys) >= keyCacheMax {
		clear(c.keys)
	}
	c.keys[hash] = cachedKey{principal: p, lastUsed: lastUsed, expires: time.Now().Add(keyCacheTTL)}
}

// touched records the last_used_at just written for a cached key.
func (c *keyCache) touched(hash string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.keys[hash]; ok {
		k.lastUsed = &at
		c.keys[hash] = k
	}
}

// forget drops a key by id (it was revoked).
func (c *keyCache) forget(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, k := range c.keys {
		if k.principal.KeyID == keyID {
			delete(c.keys, h)
		}
	}
}
