package dataset

import (
	"slices"
	"testing"
)

// TestSamplerDraws: sequential cycles; shuffle sends every conversation
// once per epoch; random covers the dataset about evenly; and any draw
// read alone, in any order, is the draw read in sequence (what lets
// shards read only their own).
func TestSamplerDraws(t *testing.T) {
	const n, draws = 7, 7 * 400
	for _, strategy := range []string{SampleSequential, SampleRandom, SampleShuffle} {
		t.Run(strategy, func(t *testing.T) {
			s, err := NewSampler(strategy, n, 42)
			if err != nil {
				t.Fatal(err)
			}
			inOrder := make([]int, draws)
			counts := make([]int, n)
			for k := range inOrder {
				inOrder[k] = s.At(k)
				counts[inOrder[k]]++
			}
			// Read backwards, and strided as a shard would, by another
			// sampler of the same seed.
			other, _ := NewSampler(strategy, n, 42)
			for k := draws - 1; k >= 0; k -= 3 {
				if got := other.At(k); got != inOrder[k] {
					t.Fatalf("draw %d read alone = %d, in order %d", k, got, inOrder[k])
				}
			}
			switch strategy {
			case SampleSequential:
				for k, c := range inOrder {
					if c != k%n {
						t.Fatalf("draw %d = %d", k, c)
					}
				}
			case SampleShuffle:
				for e := 0; e < draws/n; e++ {
					epoch := slices.Clone(inOrder[e*n : (e+1)*n])
					slices.Sort(epoch)
					if !slices.Equal(epoch, []int{0, 1, 2, 3, 4, 5, 6}) {
						t.Fatalf("epoch %d is not a permutation: %v", e, inOrder[e*n:(e+1)*n])
					}
				}
				if slices.Equal(inOrder[:n], inOrder[n:2*n]) && slices.Equal(inOrder[n:2*n], inOrder[2*n:3*n]) {
					t.Fatalf("every epoch has the same order %v", inOrder[:n])
				}
			case SampleRandom:
				// 400 expected each; a binomial sd is about 18.5.
				for c, k := range counts {
					if k < 300 || k > 500 {
						t.Fatalf("conversation %d drawn %d times of %d: %v", c, k, draws, counts)
					}
				}
			}
			seeded, _ := NewSampler(strategy, n, 43)
			same := 0
			for k := range 50 {
				if seeded.At(k) == inOrder[k] {
					same++
				}
			}
			if strategy != SampleSequential && same == 50 {
				t.Fatal("another seed gives the same draws")
			}
		})
	}
}

func TestSamplerRefuses(t *testing.T) {
	if _, err := NewSampler(SampleRandom, 0, 1); err == nil {
		t.Error("an empty dataset was accepted")
	}
	if _, err := NewSampler("backwards", 3, 1); err == nil {
		t.Error("an unknown strategy was accepted")
	}
}
