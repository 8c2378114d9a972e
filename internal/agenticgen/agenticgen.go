// Package agenticgen synthesizes agentic-coding sessions as a Mooncake
// trace, after AIPerf's `synthesize agentic-code`: each session starts from
// a context of layered shared prefixes (L1 global tools and system prompt,
// L1.5 per repository group, L2 per session) and grows turn by turn until
// it nears the context limit or resets at random.
package agenticgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

// Lognormal is a length or delay distribution given by its mean, median
// and cap, as AIPerf's configs give them: mu = ln(median) and
// sigma = sqrt(2 ln(mean/median)).
type Lognormal struct {
	Mean   float64  `json:"mean"`
	Median float64  `json:"median"`
	Max    *float64 `json:"max"`
	// Bias scales the median and mean (new tokens: it offsets the samples
	// lost to the context limit).
	Bias float64 `json:"bias,omitempty"`
}

// Delay is the think time between turns: a mixture of agentic (tool) and
// human delays, in milliseconds.
type Delay struct {
	AgenticFraction float64   `json:"agentic_fraction"`
	Agentic         Lognormal `json:"agentic_delay"`
	Human           Lognormal `json:"human_delay"`
	Max             *float64  `json:"max"`
}

// Reset is the chance a session ends after a turn, growing with how full
// its context is: base × (1 + (scaling − 1) × input/max_prompt_tokens).
type Reset struct {
	BaseProbability float64 `json:"base_probability"`
	ContextScaling  float64 `json:"context_scaling"`
}

// Groups are the L1.5 groups, chosen with Zipf weights 1/k^alpha.
type Groups struct {
	NumGroups int     `json:"num_groups"`
	ZipfAlpha float64 `json:"zipf_alpha"`
}

// Cache is the layered prefix model.
type Cache struct {
	Layer1Tokens  int       `json:"layer1_tokens"`
	Layer15Tokens int       `json:"layer1_5_tokens"`
	Layer2        Lognormal `json:"layer2"`
	Layer15Groups Groups    `json:"layer1_5_groups"`
}

// Config is AIPerf's SessionDistributionConfig, the fields of its
// default.json.
type Config struct {
	NewTokensPerTurn Lognormal `json:"new_tokens_per_turn"`
	GenerationLength Lognormal `json:"generation_length"`
	InterTurnDelay   Delay     `json:"inter_turn_delay"`
	Reset            *Reset    `json:"reset"`
	MaxPromptTokens  int       `json:"max_prompt_tokens"`
	BlockSize        int       `json:"block_size"`
	Cache            Cache     `json:"cache"`
}

func fptr(v float64) *float64 { return &v }

// Default is AIPerf's configs/default.json.
func Default() Config {
	return Config{
		NewTokensPerTurn: Lognormal{Mean: 6000, Median: 6000, Max: fptr(10000), Bias: 1.1},
		GenerationLength: Lognormal{Mean: 1000, Median: 1000, Max: fptr(1500)},
		InterTurnDelay: Delay{AgenticFraction: 0.7,
			Agentic: Lognormal{Mean: 1, Median: 1, Max: fptr(1)}, Human: Lognormal{Mean: 1, Median: 1, Max: fptr(1)}},
		Reset:           &Reset{BaseProbability: 0.01, ContextScaling: 1.5},
		MaxPromptTokens: 167000,
		BlockSize:       512,
		Cache: Cache{Layer1Tokens: 32000, Layer2: Lognormal{Mean: 15000, Median: 5000, Max: fptr(30000)},
			Layer15Groups: Groups{NumGroups: 1, ZipfAlpha: 0.6}},
	}
}

// LoadConfig reads a config JSON over the defaults: a file of Config's
// fields, or a manifest.json of an earlier run (its generation_params).
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("--config: %w", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return Config{}, fmt.Errorf("--config %s: not a JSON object: %v", path, err)
	}
	if gp, ok := probe["generation_params"]; ok {
		data = gp
	}
	c := Default()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("--config %s: %v", path, err)
	}
	return c, c.Validate()
}

// Validate returns the first setting that cannot generate sessions.
func (c Config) Validate() error {
	for name, l := range map[string]Lognormal{"new_tokens_per_turn": c.NewTokensPerTurn, "generation_length": c.GenerationLength,
		"agentic_delay": c.InterTurnDelay.Agentic, "human_delay": c.InterTurnDelay.Human, "layer2": c.Cache.Layer2} {
		if !(l.Median > 0) || !(l.Mean >= l.Median) || math.IsInf(l.Mean, 0) || (l.Max != nil && !(*l.Max > 0)) || l.Bias < 0 {
			return fmt.Errorf("config %s: want 0 < median <= mean and a positive max", name)
		}
	}
	switch {
	case c.BlockSize < 1:
		return errors.New("config block_size: it must be at least 1 token")
	case c.MaxPromptTokens < 2:
		return errors.New("config max_prompt_tokens (--max-isl): it must be at least 2 tokens")
	case c.Cache.Layer1Tokens < 0 || c.Cache.Layer15Tokens < 0:
		return errors.New("config layer1_tokens and layer1_5_tokens cannot be negative")
	case c.Cache.Layer15Groups.NumGroups < 1 || c.Cache.Layer15Groups.NumGroups > maxGroups:
		return fmt.Errorf("config layer1_5_groups.num_groups: 1 to %d", maxGroups)
	case (c.Cache.Layer15Tokens+c.BlockSize-1)/c.BlockSize > maxGroupBlocks:
		return fmt.Errorf("config layer1_5_tokens: at most %d blocks", maxGroupBlocks)
	case c.MaxPromptTokens/c.BlockSize+1 > maxSessionBlocks+c.Cache.Layer1Tokens/c.BlockSize+maxGroupBlocks:
		return fmt.Errorf("config max_prompt_tokens: at most %d blocks of session context", maxSessionBlocks)
	case c.InterTurnDelay.AgenticFraction < 0 || c.InterTurnDelay.AgenticFraction > 1:
		return errors.New("config inter_turn_delay.agentic_fraction: 0 to 1")
	case c.Reset != nil && (c.Reset.BaseProbability < 0 || c.Reset.ContextScaling < 0):
		return errors.New("config reset: probabilities cannot be negative")
	}
	return nil
}

// The hash id layout of AIPerf's PrefixAllocator: L1 ids first, then a
// region of maxGroupBlocks per group, then maxSessionBlocks per session.
const (
	maxGroupBlocks   = 200
	maxGroups        = 1000
	maxSessionBlocks = 4000
	outputMin        = 30
)

// Turn is one request of a session.
type Turn struct {
	// InputLength is the whole context the turn sends; NewTokens what it
	// adds to the previous turn's input and output.
	InputLength, NewTokens, OutputLength int
	// DelayMs follows the previous turn; TimestampMs is from the session's
	// start.
	DelayMs, TimestampMs float64
	HashIDs              []int64
}

// Session is one synthesized conversation.
type Session struct {
	ID    string
	Group int
	Turns []Turn
	// End is why it stopped: forced_retire (context full) or
	// probabilistic_reset.
	End string
}

// Generator draws sessions from a Config with a seeded PCG.
type Generator struct {
	c       Config
	rng     *rand.Rand
	weights []float64 // cumulative Zipf weights of the groups
	l1, l15 int       // blocks
	next    int       // session index
}

// New returns a generator; the same config and seed give the same sessions.
func New(c Config, seed uint64) (*Generator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{c: c, rng: rand.New(rand.NewPCG(seed, 0x6167656e74)), // "agent"
		l1: ceilDiv(c.Cache.Layer1Tokens, c.BlockSize), l15: ceilDiv(c.Cache.Layer15Tokens, c.BlockSize)}
	var sum float64
	for k := 1; k <= c.Cache.Layer15Groups.NumGroups; k++ {
		sum += 1 / math.Pow(float64(k), c.Cache.Layer15Groups.ZipfAlpha)
		g.weights = append(g.weights, sum)
	}
	for i := range g.weights {
		g.weights[i] /= sum
	}
	return g, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// sample draws from l, clipped to [lo, l.Max].
func (g *Generator) sample(l Lognormal, lo float64) float64 {
	median, mean := l.Median, l.Mean
	if l.Bias > 0 && l.Bias != 1 {
		median, mean = median*l.Bias, mean*l.Bias
	}
	sigma := math.Sqrt(2 * math.Log(mean/median))
	x := math.Exp(math.Log(median) + sigma*g.rng.NormFloat64())
	if l.Max != nil {
		x = min(x, *l.Max)
	}
	return max(x, lo)
}

func (g *Generator) outputLength() int {
	lo := float64(outputMin)
	if m := g.c.GenerationLength.Max; m != nil {
		lo = min(lo, math.Floor(*m))
	}
	return int(g.sample(g.c.GenerationLength, lo))
}

func (g *Generator) delay(prevInput int) float64 {
	d := g.c.InterTurnDelay
	l := d.Human
	if g.rng.Float64() < d.AgenticFraction {
		l = d.Agentic
	}
	ms := g.sample(l, 0) * max(0.2, 1-0.8*float64(prevInput)/float64(g.c.MaxPromptTokens))
	if d.Max != nil {
		ms = min(ms, *d.Max)
	}
	return ms
}

// hashIDs is L1 ++ L1.5 ++ the session's blocks for a context of n tokens;
// the session's blocks extend the previous turn's.
func (g *Generator) hashIDs(session, group, n int, prev []int64) []int64 {
	total := ceilDiv(n, g.c.BlockSize)
	ids := make([]int64, 0, total)
	for i := 0; i < min(g.l1, total); i++ {
		ids = append(ids, int64(i))
	}
	base15 := int64(g.l1 + group*maxGroupBlocks)
	for i := 0; i < min(g.l15, total-len(ids)); i++ {
		ids = append(ids, base15+int64(i))
	}
	need := total - len(ids)
	if need <= 0 {
		return ids
	}
	next := int64(g.l1+maxGroups*maxGroupBlocks) + int64(session)*maxSessionBlocks
	if len(prev) >= need {
		return append(ids, prev[:need]...)
	}
	ids = append(ids, prev...)
	if len(prev) > 0 {
		next = prev[len(prev)-1] + 1
	}
	for len(ids) < total {
		ids = append(ids, next)
		next++
	}
	return ids
}

func (g *Generator) sessionIDs(ids []int64) []int64 {
	if p := g.l1 + g.l15; len(ids) > p {
		return ids[p:]
	}
	return nil
}

// Session draws the next session.
func (g *Generator) Session() Session {
	c := g.c
	index := g.next
	g.next++
	s := Session{ID: fmt.Sprintf("sess-%012x", g.rng.Uint64()>>16)}
	u := g.rng.Float64()
	for s.Group < len(g.weights)-1 && u >= g.weights[s.Group] {
		s.Group++
	}
	fixed := c.Cache.Layer1Tokens + c.Cache.Layer15Tokens
	ctx := min(fixed+max(int(g.sample(c.Cache.Layer2, 0)), 1), c.MaxPromptTokens-1)
	out := g.outputLength()
	ids := g.hashIDs(index, s.Group, ctx, nil)
	s.Turns = append(s.Turns, Turn{InputLength: ctx, NewTokens: ctx, OutputLength: out, HashIDs: ids})
	var at float64
	for {
		d := g.delay(ctx)
		at += d
		added := max(int(g.sample(c.NewTokensPerTurn, 0)), 1)
		n := ctx + out + added
		if n >= c.MaxPromptTokens {
			s.End = "forced_retire"
			return s
		}
		if r := c.Reset; r != nil {
			p := r.BaseProbability * (1 + (r.ContextScaling-1)*float64(n)/float64(c.MaxPromptTokens))
			if g.rng.Float64() < p {
				s.End = "probabilistic_reset"
				return s
			}
		}
		out = g.outputLength()
		ids = g.hashIDs(index, s.Group, n, g.sessionIDs(s.Turns[len(s.Turns)-1].HashIDs))
		s.Turns = append(s.Turns, Turn{InputLength: n, NewTokens: added, OutputLength: out, DelayMs: d, TimestampMs: at, HashIDs: ids})
		ctx = n
	}
}
