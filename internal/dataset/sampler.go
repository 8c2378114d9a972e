package dataset

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// Sampling strategies (--dataset-sampling-strategy).
const (
	SampleSequential = "sequential"
	SampleRandom     = "random"
	SampleShuffle    = "shuffle"
)

// Sampler says which conversation the k-th session of a run sends. The
// sequence depends only on its seed, and any draw can be read on its own:
// At(k) is the same whichever draws were read before, so the shards of a
// run spread over several processes, each reading only its own sessions'
// draws, send exactly what one process would. It is safe for concurrent
// use.
type Sampler struct {
	strategy string
	n        int
	seed     uint64

	mu sync.Mutex
	// epoch and order cache shuffle's permutation of the epoch last read
	// (sessions are read nearly in order: one permutation is made per n
	// draws).
	epoch int
	order []int
}

// NewSampler samples n conversations by strategy: sequential (0, 1, …,
// n-1, 0, …), random (uniform, with replacement) or shuffle (every one
// once in a random order, then a new order).
func NewSampler(strategy string, n int, seed uint64) (*Sampler, error) {
	if n <= 0 {
		return nil, fmt.Errorf("sampling: the dataset has no conversations")
	}
	switch strategy {
	case SampleSequential, SampleRandom, SampleShuffle:
	default:
		return nil, fmt.Errorf("--dataset-sampling-strategy %q: use sequential, random or shuffle", strategy)
	}
	return &Sampler{strategy: strategy, n: n, seed: seed, epoch: -1}, nil
}

// samplerStream separates the sampler's random numbers from the other
// users of the seed ("samplers").
const samplerStream = 0x73616d706c657273

// At returns the index of the conversation of draw k (k ≥ 0).
func (s *Sampler) At(k int) int {
	switch s.strategy {
	case SampleRandom:
		// Draw k has a generator of its own, keyed by k.
		pcg := rand.NewPCG(s.seed^samplerStream, uint64(k))
		return boundedDraw(pcg, s.n)
	case SampleShuffle:
		s.mu.Lock()
		defer s.mu.Unlock()
		if e := k / s.n; e != s.epoch {
			s.order = rand.New(rand.NewPCG(s.seed^samplerStream, uint64(e)|1<<63)).Perm(s.n)
			s.epoch = e
		}
		return s.order[k%s.n]
	}
	return k % s.n
}

// boundedDraw is a uniform integer in [0, n) from src (Lemire's
// multiply-and-reject, as math/rand/v2 draws it).
func boundedDraw(src rand.Source, n int) int {
	hi, lo := bits.Mul64(src.Uint64(), uint64(n))
	if lo < uint64(n) {
		thresh := -uint64(n) % uint64(n)
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), uint64(n))
		}
	}
	return int(hi)
}
