// Package tracesynth reshapes and measures Mooncake-style trace rows
// (timestamp, input_length, output_length, hash_ids) as AIPerf's trace
// synthesis and analyze-trace do: it scales a trace's schedule, its shared
// prefixes, its unique prompts and its outputs while keeping the radix tree
// the hash_ids form, and it computes the prefix-cache hit rate a trace
// implies. It works on rows, never on prompt text.
package tracesynth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Options are the --synthesis-* settings. The zero value is not valid;
// start from Defaults.
type Options struct {
	// SpeedupRatio divides every timestamp (2: the schedule runs twice as
	// fast).
	SpeedupRatio float64 `json:"speedup_ratio"`
	// PrefixLenMultiplier scales the shared leading blocks of each row.
	PrefixLenMultiplier float64 `json:"prefix_len_multiplier"`
	// PrefixRootMultiplier spreads the rows over this many independent
	// copies of the prefix tree.
	PrefixRootMultiplier int `json:"prefix_root_multiplier"`
	// PromptLenMultiplier scales the unique (unshared) part of each prompt.
	PromptLenMultiplier float64 `json:"prompt_len_multiplier"`
	// OutputLenMultiplier scales output_length.
	OutputLenMultiplier float64 `json:"output_len_multiplier"`
	// MaxISL drops rows whose input_length exceeds it and caps the
	// synthesized lengths at it (0: none).
	MaxISL int `json:"max_isl,omitempty"`
	// MaxOSL caps output_length (0: none).
	MaxOSL int `json:"max_osl,omitempty"`
}

// Defaults are the options that leave a trace as it is.
func Defaults() Options {
	return Options{SpeedupRatio: 1, PrefixLenMultiplier: 1, PrefixRootMultiplier: 1, PromptLenMultiplier: 1, OutputLenMultiplier: 1}
}

// Structural says whether the options rewrite rows (AIPerf runs its
// synthesizer only then); MaxISL and MaxOSL alone only filter and cap.
func (o Options) Structural() bool {
	return o.SpeedupRatio != 1 || o.PrefixLenMultiplier != 1 || o.PrefixRootMultiplier != 1 ||
		o.PromptLenMultiplier != 1 || o.OutputLenMultiplier != 1
}

// Active says whether the options change a trace at all.
func (o Options) Active() bool { return o.Structural() || o.MaxISL > 0 || o.MaxOSL > 0 }

// Validate returns the first option out of range, named as its flag.
func (o Options) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(o.SpeedupRatio) || o.SpeedupRatio <= 0:
		return fmt.Errorf("--synthesis-speedup-ratio %g: it must be positive (2 replays the trace twice as fast)", o.SpeedupRatio)
	case !finite(o.PrefixLenMultiplier) || o.PrefixLenMultiplier <= 0:
		return fmt.Errorf("--synthesis-prefix-len-multiplier %g: it must be positive", o.PrefixLenMultiplier)
	case o.PrefixRootMultiplier < 1:
		return fmt.Errorf("--synthesis-prefix-root-multiplier %d: it must be at least 1", o.PrefixRootMultiplier)
	case !finite(o.PromptLenMultiplier) || o.PromptLenMultiplier <= 0:
		return fmt.Errorf("--synthesis-prompt-len-multiplier %g: it must be positive", o.PromptLenMultiplier)
	case !finite(o.OutputLenMultiplier) || o.OutputLenMultiplier < 0:
		return fmt.Errorf("--synthesis-output-len-multiplier %g: it cannot be negative", o.OutputLenMultiplier)
	case o.MaxISL < 0:
		return fmt.Errorf("--synthesis-max-isl %d: it must be at least 1 token", o.MaxISL)
	case o.MaxOSL < 0:
		return fmt.Errorf("--synthesis-max-osl %d: it must be at least 1 token", o.MaxOSL)
	}
	return nil
}

// Row is one trace request. A nil InputLength is a row that carries its
// prompt text instead: it keeps no hash_ids and is never filtered by length.
type Row struct {
	Timestamp    *float64
	InputLength  *int
	OutputLength *int
	HashIDs      []int64
	// Session groups the turns of one conversation ("" : a conversation of
	// its own). The synthesizer walks sessions in order of first appearance,
	// as AIPerf groups them, which fixes the order new hash ids and prefix
	// trees are handed out in.
	Session string
}

// maxHashID bounds synthesized ids so that the arithmetic below cannot
// overflow int64 on a hostile trace.
const maxHashID = 1 << 52

// Apply transforms rows as AIPerf's trace loader and synthesizer do, in
// their order:
//
//  1. rows whose input_length exceeds MaxISL are dropped;
//  2. when a multiplier or the speedup is set, every row is rebuilt: its
//     leading blocks that occur more than once in the trace (the shared
//     prefix) are stretched or cut by PrefixLenMultiplier, the rest of its
//     tokens scaled by PromptLenMultiplier and given fresh block ids; with
//     PrefixRootMultiplier N each row then moves, at random, to one of N
//     disjoint copies of the id space; input_length is capped at MaxISL,
//     timestamps divided by SpeedupRatio (truncated to whole ms) and
//     output_length scaled (rounded half to even, at least 1);
//  3. output_length is capped at MaxOSL.
//
// keep[i] is the index in rows of out[i]. seed drives the tree choice.
func Apply(rows []Row, o Options, blockSize int, seed uint64) (out []Row, keep []int, err error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("block size %d: it must be at least 1 token", blockSize)
	}
	for i, r := range rows {
		if o.MaxISL > 0 && r.InputLength != nil && *r.InputLength > o.MaxISL {
			continue
		}
		out = append(out, clone(r))
		keep = append(keep, i)
	}
	if o.Structural() {
		if err := synthesize(out, o, blockSize, seed); err != nil {
			return nil, nil, err
		}
	}
	if o.MaxOSL > 0 {
		for i := range out {
			if p := out[i].OutputLength; p != nil && *p > o.MaxOSL {
				*p = o.MaxOSL
			}
		}
	}
	return out, keep, nil
}

func clone(r Row) Row {
	c := r
	if r.Timestamp != nil {
		v := *r.Timestamp
		c.Timestamp = &v
	}
	if r.InputLength != nil {
		v := *r.InputLength
		c.InputLength = &v
	}
	if r.OutputLength != nil {
		v := *r.OutputLength
		c.OutputLength = &v
	}
	c.HashIDs = append([]int64(nil), r.HashIDs...)
	return c
}

// sessionOrder lists row indexes session by session, sessions in order of
// first appearance and rows in file order within one.
func sessionOrder(rows []Row) []int {
	var groups [][]int
	at := map[string]int{}
	for i, r := range rows {
		if r.Session == "" {
			groups = append(groups, []int{i})
			continue
		}
		k, ok := at[r.Session]
		if !ok {
			k = len(groups)
			at[r.Session] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], i)
	}
	order := make([]int, 0, len(rows))
	for _, g := range groups {
		order = append(order, g...)
	}
	return order
}

var errHashRange = errors.New("hash_ids beyond 2^52 cannot be synthesized; renumber the trace")

func synthesize(rows []Row, o Options, blockSize int, seed uint64) error {
	order := sessionOrder(rows)
	bs := int64(blockSize)
	count := map[int64]int{}
	for _, r := range rows {
		if r.InputLength == nil {
			continue
		}
		for _, h := range r.HashIDs {
			if h < 0 || h > maxHashID {
				return errHashRange
			}
			count[h]++
		}
	}
	var maxShared int64
	for h, n := range count {
		if n > 1 && h > maxShared {
			maxShared = h
		}
	}
	// Stretching by an integer m maps shared block h to h*m … h*m+m-1, so
	// fresh ids start past (maxShared+1)*m.
	m := int64(1)
	if o.PrefixLenMultiplier > 1 {
		m = int64(o.PrefixLenMultiplier)
		if m > 1<<10 {
			return fmt.Errorf("--synthesis-prefix-len-multiplier %g: at most %d", o.PrefixLenMultiplier, 1<<10)
		}
	}
	next := (maxShared + 1) * m // the last id handed out
	fresh := func(n int64) []int64 {
		ids := make([]int64, n)
		for i := range ids {
			next++
			ids[i] = next
		}
		return ids
	}
	for _, i := range order {
		r := &rows[i]
		if r.InputLength == nil || len(r.HashIDs) == 0 {
			continue
		}
		isl := int64(*r.InputLength)
		var prefix []int64
		for _, h := range r.HashIDs {
			if count[h] < 2 {
				break
			}
			prefix = append(prefix, h)
		}
		k := int64(len(prefix))
		prompt := isl - k*bs
		// short is how much the shared prefix's last block falls short of a
		// whole one, when the row is nothing but shared blocks with a partial
		// last one (AIPerf refuses such a row; here that block stays partial).
		var short int64
		if prompt < 0 {
			short, prompt = -prompt, 0
		}
		var ids []int64
		var prefixLen int64
		switch {
		case o.PrefixLenMultiplier > 1:
			for _, h := range prefix {
				for j := int64(0); j < m; j++ {
					ids = append(ids, h*m+j)
				}
			}
			target := int64(math.Ceil(float64(k) * o.PrefixLenMultiplier))
			if extra := target - int64(len(ids)); extra > 0 {
				ids = append(ids, fresh(extra)...)
			}
			prefixLen = int64(len(ids))*bs - short
		case o.PrefixLenMultiplier < 1:
			n := max(int64(float64(k)*o.PrefixLenMultiplier), 1)
			n = min(n, k)
			ids = append(ids, prefix[:n]...)
			prefixLen = n * bs
			if n == k {
				prefixLen -= short
			}
		default:
			ids = append(ids, prefix...)
			prefixLen = k*bs - short
		}
		newPrompt := int64(float64(prompt) * o.PromptLenMultiplier)
		ids = append(ids, fresh((newPrompt+bs-1)/bs)...)
		if next > maxHashID || prefixLen+newPrompt > math.MaxInt32 {
			return errHashRange
		}
		r.HashIDs = ids
		*r.InputLength = int(prefixLen + newPrompt)
	}
	if o.PrefixRootMultiplier > 1 {
		rng := rand.New(rand.NewPCG(seed, 0x726f6f7473)) // "roots"
		base := next + 1
		if base > maxHashID/int64(o.PrefixRootMultiplier) {
			return errHashRange
		}
		for _, i := range order {
			r := &rows[i]
			if r.InputLength == nil || len(r.HashIDs) == 0 {
				continue
			}
			if tree := int64(rng.IntN(o.PrefixRootMultiplier)); tree > 0 {
				for j := range r.HashIDs {
					r.HashIDs[j] += tree * base
				}
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.InputLength != nil && o.MaxISL > 0 && *r.InputLength > o.MaxISL {
			*r.InputLength = o.MaxISL
			// The blocks past the cap would name text the prompt no longer
			// has; llmbench builds prompts from them, so they go.
			if n := (o.MaxISL + blockSize - 1) / blockSize; len(r.HashIDs) > n {
				r.HashIDs = r.HashIDs[:n]
			}
		}
		if r.Timestamp != nil {
			*r.Timestamp = math.Trunc(*r.Timestamp / o.SpeedupRatio)
		}
		if r.OutputLength != nil {
			v := math.RoundToEven(float64(*r.OutputLength) * o.OutputLenMultiplier)
			*r.OutputLength = int(max(1, min(v, math.MaxInt32)))
			if o.MaxOSL > 0 && *r.OutputLength > o.MaxOSL {
				*r.OutputLength = o.MaxOSL
			}
		}
	}
	return nil
}
