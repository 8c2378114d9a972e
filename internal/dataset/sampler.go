package dataset

import (
	"fmt"
	"math/rand/v2"
	"sync"
)

// Sampling strategies (--dataset-sampling-strategy).
const (
	SampleSequential = "sequential"
	SampleRandom     = "random"
	SampleShuffle    = "shuffle"
)

// Sampler picks which conversation the next session sends. It is safe for
// concurrent use; the sequence it gives depends only on its seed.
type Sampler struct {
	mu       sync.Mutex
	strategy string
	n, next  int
	rng      *rand.Rand
	order    []int
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
	return &Sampler{strategy: strategy, n: n, rng: rand.New(rand.NewPCG(seed, 0x73616d706c657273))}, nil // "samplers"
}

// Next returns the index of the next conversation.
func (s *Sampler) Next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.strategy {
	case SampleRandom:
		return s.rng.IntN(s.n)
	case SampleShuffle:
		if s.next == 0 {
			s.order = s.rng.Perm(s.n)
		}
		i := s.order[s.next]
		s.next = (s.next + 1) % s.n
		return i
	}
	i := s.next
	s.next = (s.next + 1) % s.n
	return i
}
