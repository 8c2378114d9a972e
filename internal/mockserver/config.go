// Package mockserver is llmbench's built-in simulated OpenAI-compatible LLM
// server: chat and completions, streaming or not, with configurable latency,
// output length and faults, and a Prometheus /metrics endpoint whose values
// follow the load it really serves.
package mockserver

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Config sets how the simulated server behaves.
type Config struct {
	// TTFT is the time from a request's admission to its first token.
	TTFT       time.Duration
	TTFTJitter time.Duration
	// ITL is the mean time between tokens; ITLJitter its standard deviation.
	ITL       time.Duration
	ITLJitter time.Duration
	// OutputMean and OutputStddev give the output length in tokens when a
	// request has no max_tokens.
	OutputMean, OutputStddev float64
	// MaxNumSeqs is how many requests run at once; the rest wait in a queue
	// (0: no limit).
	MaxNumSeqs int
	// KVCacheTokens is the simulated KV-cache capacity behind kv_cache_usage_perc.
	KVCacheTokens int
	Seed          uint64
	// Faults, each every Nth request (0: never).
	ErrorEvery   int // HTTP 500 with an error body
	DropEvery    int // connection closed halfway through the response
	GarbageEvery int // a malformed chunk (or body) instead of JSON
}

// DefaultConfig is a quick, realistic-looking server.
func DefaultConfig() Config {
	return Config{
		TTFT:          50 * time.Millisecond,
		ITL:           10 * time.Millisecond,
		OutputMean:    100,
		KVCacheTokens: 262144,
		Seed:          1,
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	if c.TTFT < 0 || c.TTFTJitter < 0 || c.ITL < 0 || c.ITLJitter < 0 {
		return errors.New("mock server latencies cannot be negative")
	}
	if c.OutputMean < 1 || c.OutputStddev < 0 {
		return errors.New("mock server output length mean must be at least 1, stddev not negative")
	}
	if c.MaxNumSeqs < 0 || c.ErrorEvery < 0 || c.DropEvery < 0 || c.GarbageEvery < 0 {
		return errors.New("mock server counts cannot be negative")
	}
	if c.KVCacheTokens < 1 {
		return errors.New("mock server kv cache must hold at least 1 token")
	}
	return nil
}

// BindFlags registers the settings on fs, each name prefixed with prefix
// ("" for `llmbench mock-server`, "mock-" inside `llmbench profile`).
func (c *Config) BindFlags(fs *flag.FlagSet, prefix string) {
	fs.Var((*msValue)(&c.TTFT), prefix+"ttft-ms", "simulated time to first token, ms")
	fs.Var((*msValue)(&c.TTFTJitter), prefix+"ttft-jitter-ms", "standard deviation of the time to first token, ms")
	fs.Var((*msValue)(&c.ITL), prefix+"itl-ms", "simulated mean inter-token latency, ms")
	fs.Var((*msValue)(&c.ITLJitter), prefix+"itl-jitter-ms", "standard deviation of the inter-token latency, ms")
	fs.Float64Var(&c.OutputMean, prefix+"output-tokens-mean", c.OutputMean, "output length when a request sets no max_tokens")
	fs.Float64Var(&c.OutputStddev, prefix+"output-tokens-stddev", c.OutputStddev, "standard deviation of that output length")
	fs.IntVar(&c.MaxNumSeqs, prefix+"max-num-seqs", c.MaxNumSeqs, "requests served at once; more wait in a queue (0: unlimited)")
	fs.IntVar(&c.KVCacheTokens, prefix+"kv-cache-tokens", c.KVCacheTokens, "simulated KV-cache capacity in tokens")
	fs.Uint64Var(&c.Seed, prefix+"seed", c.Seed, "seed for simulated lengths, jitter and text")
	fs.IntVar(&c.ErrorEvery, prefix+"error-every", c.ErrorEvery, "answer every Nth request with HTTP 500 (0: never)")
	fs.IntVar(&c.DropEvery, prefix+"drop-every", c.DropEvery, "drop the connection of every Nth request halfway (0: never)")
	fs.IntVar(&c.GarbageEvery, prefix+"garbage-every", c.GarbageEvery, "send a malformed chunk in every Nth response (0: never)")
}

type msValue time.Duration

func (m *msValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number of milliseconds", s)
	}
	*m = msValue(time.Duration(v * float64(time.Millisecond)))
	return nil
}

func (m *msValue) String() string {
	if m == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*m)/float64(time.Millisecond), 'g', -1, 64)
}
