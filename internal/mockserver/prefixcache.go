package mockserver

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// prefixBlockTokens is the simulated KV-cache block, vLLM's default 16
// tokens (the block_size of vllm:cache_config_info).
const prefixBlockTokens = 16

// prefixCache simulates automatic prefix caching as vLLM does it: a
// prompt's full blocks of tokens are hashed each with everything before
// it, so a block hits only when the whole prefix up to it was seen; hits
// count from the start until the first miss. It holds at most capacity
// blocks, evicting the least recently used. Safe for concurrent use.
type prefixCache struct {
	mu       sync.Mutex
	seed     maphash.Seed
	capacity int
	blocks   map[uint64]*list.Element
	lru      list.List // of uint64 hashes, most recent first
}

func newPrefixCache(capacityTokens int) *prefixCache {
	return &prefixCache{seed: maphash.MakeSeed(), capacity: max(1, capacityTokens/prefixBlockTokens), blocks: map[uint64]*list.Element{}}
}

// lookup returns how many of the prompt's leading tokens were cached, and
// caches all its full blocks.
func (c *prefixCache) lookup(ids []int) (cachedTokens int) {
	n := len(ids) / prefixBlockTokens
	if n == 0 {
		return 0
	}
	hashes := make([]uint64, n)
	var h maphash.Hash
	h.SetSeed(c.seed)
	var buf [8]byte
	for b := range n {
		for _, id := range ids[b*prefixBlockTokens : (b+1)*prefixBlockTokens] {
			for i := range buf {
				buf[i] = byte(uint64(id) >> (8 * i))
			}
			_, _ = h.Write(buf[:])
		}
		hashes[b] = h.Sum64() // the hash chains: it covers every block before
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hits, missed := 0, false
	for _, x := range hashes {
		if e, ok := c.blocks[x]; ok {
			c.lru.MoveToFront(e)
			if !missed {
				hits++
			}
			continue
		}
		missed = true
		c.blocks[x] = c.lru.PushFront(x)
		if c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.blocks, old.Value.(uint64))
		}
	}
	// A prompt wholly cached still computes its last token, as vLLM does.
	return min(hits*prefixBlockTokens, len(ids)-1)
}

// reset forgets every cached block.
func (c *prefixCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks = map[uint64]*list.Element{}
	c.lru.Init()
}
