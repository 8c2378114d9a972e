package mockserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

func seq(from, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = from + i
	}
	return ids
}

// TestPrefixCacheByHand: blocks of 16 tokens, hashed with what precedes
// them; hits count from the start to the first miss.
func TestPrefixCacheByHand(t *testing.T) {
	c := newPrefixCache(1 << 20)
	steps := []struct {
		name string
		ids  []int
		want int
	}{
		{"cold, 40 tokens", seq(0, 40), 0},
		{"the same 40: two full blocks", seq(0, 40), 32},
		{"first 20 the same, then others: one block", append(seq(0, 20), seq(500, 30)...), 16},
		{"a 32-token prompt wholly cached still computes its last token", seq(0, 32), 31},
		{"block 2 the same but block 1 differs: nothing (the hash chains)", append(seq(900, 16), seq(16, 16)...), 0},
		{"shorter than a block", seq(0, 10), 0},
	}
	for _, s := range steps {
		if got := c.lookup(s.ids); got != s.want {
			t.Errorf("%s: %d cached, want %d", s.name, got, s.want)
		}
	}
	// Capacity 2 blocks: a third evicts the least recently used.
	small := newPrefixCache(32)
	small.lookup(seq(0, 16))   // A
	small.lookup(seq(100, 16)) // B
	small.lookup(seq(0, 16))   // A again: B is now the oldest
	small.lookup(seq(200, 16)) // C evicts B
	if got := small.lookup(seq(0, 17)); got != 16 {
		t.Errorf("A evicted: %d cached, want 16", got)
	}
	if got := small.lookup(seq(100, 17)); got != 0 {
		t.Errorf("B still cached (%d), want it evicted", got)
	}
}

// TestPrefixCacheMetricsAndTTFT: the second request of the same long
// prompt is mostly a cache hit: vllm's prefix-cache counters move by the
// hand-computed token counts, and its time to first token shrinks to the
// uncached share (0.1 + 0.9 × uncached/prompt of the configured TTFT).
func TestPrefixCacheMetricsAndTTFT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 200*time.Millisecond, 0
	_, url := start(t, cfg)
	prompt := strings.Repeat("w ", 1000) // 1000 words: 1000 tokens (words language)
	first := do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, prompt, 2, true))
	second := do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, prompt, 2, true))
	if !first.Valid() || !second.Valid() {
		t.Fatalf("errors %+v %+v", first.Err, second.Err)
	}
	fams := scrape(t, url)
	// 1000 tokens = 62 full blocks; the second request hits all 992.
	if q, h, c := value(t, fams, "vllm:prefix_cache_queries_total"), value(t, fams, "vllm:prefix_cache_hits_total"), value(t, fams, "vllm:prompt_tokens_cached_total"); q != 2000 || h != 992 || c != 992 {
		t.Fatalf("queries %g hits %g cached %g, want 2000, 992, 992", q, h, c)
	}
	ttft := func(r *record.Record) time.Duration { return time.Duration(r.ResponsePerfs[0] - r.StartPerf) }
	// Expected: cold 200 ms; cached 200 ms × (0.1 + 0.9 × 8/1000) ≈ 21.4 ms.
	// A loaded machine only adds lateness: each attempt uses a new prompt.
	attempt := 0
	bestOfFive(t, "TTFT not about 200 ms cold and 21 ms cached", func() string {
		attempt++
		p := strings.Repeat(fmt.Sprintf("a%d ", attempt), 1000)
		cold := do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, p, 2, true))
		warm := do(t, url, endpoint.Chat, true, body(t, endpoint.Chat, p, 2, true))
		if a, b := ttft(cold), ttft(warm); a < 195*time.Millisecond || b > 60*time.Millisecond || b < 21*time.Millisecond {
			return fmt.Sprintf("cold %v, cached %v", a, b)
		}
		return ""
	})
	if a, b := ttft(first), ttft(second); a < 195*time.Millisecond || b < 21*time.Millisecond {
		t.Fatalf("TTFT cold %v, cached %v: faster than the simulation allows", a, b)
	}
}

// TestAbortCounted: a client that disconnects mid-answer is counted as
// vLLM counts it, finished_reason="abort", and no success is recorded.
func TestAbortCounted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 20*time.Millisecond
	_, url := start(t, cfg)
	c := client.New(client.Options{URL: url + endpoint.Chat.Path(true), Kind: endpoint.Chat, Streaming: true, Timeout: 10 * time.Second, MaxConns: 2, Clock: record.NewClock()})
	defer c.Close()
	rec := &record.Record{}
	c.DoCancelAfter(context.Background(), rec, body(t, endpoint.Chat, "hello there", 100, true), 100*time.Millisecond)
	if !rec.Cancelled {
		t.Fatalf("not cancelled: %+v", rec.Err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		fams := scrape(t, url)
		if f, ok := fams["vllm:request_success_total"]; ok && len(f.Metric) > 0 {
			if got := value(t, fams, "vllm:request_success_total", "finished_reason", "abort"); got == 1 {
				for _, m := range f.Metric {
					for _, l := range m.Label {
						if l.GetName() == "finished_reason" && l.GetValue() != "abort" && m.Counter.GetValue() != 0 {
							t.Fatalf("a success counted besides the abort: %v", m)
						}
					}
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no finished_reason=abort counted within 2 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPrefixCacheReset(t *testing.T) {
	c := newPrefixCache(1 << 20)
	ids := make([]int, 4*prefixBlockTokens)
	for i := range ids {
		ids[i] = i
	}
	if got := c.lookup(ids); got != 0 {
		t.Fatalf("first lookup hit %d tokens", got)
	}
	if got := c.lookup(ids); got < len(ids)-prefixBlockTokens {
		t.Fatalf("second lookup hit %d tokens of %d", got, len(ids))
	}
	c.reset()
	if got := c.lookup(ids); got != 0 {
		t.Errorf("after reset %d tokens hit", got)
	}
}
