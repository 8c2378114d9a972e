//go:build race

package tokenizer

import "testing"

// raceScale divides the size of the tests that only repeat
// single-goroutine work on more data (memory bounds, random words):
// under the race detector that work is several times slower and finds no
// race, and the suite must stay within CI's time.
const raceScale = 4

// skipAllocationsUnderRace skips a test of how much a call allocates:
// under the race detector sync.Pool drops what is put back at random, so
// the pooled scratch is sometimes made anew and the count is not the
// code's. .ci/run runs these tests once more without -race.
func skipAllocationsUnderRace(t *testing.T) {
	t.Helper()
	t.Skip("allocation counts under -race include sync.Pool's random drops; run without -race (.ci/run does)")
}

// skipWholeTablesUnderRace skips a comparison of whole Unicode tables
// (every code point through several predicates, one goroutine): four times
// slower under the race detector, which has nothing to find there.
// .ci/run runs the package once more without -race, these tests included.
func skipWholeTablesUnderRace(t *testing.T) {
	t.Helper()
	t.Skip("whole Unicode tables, one goroutine: checked without -race (.ci/run does)")
}
