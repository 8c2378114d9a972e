//go:build !race

package tokenizer

import "testing"

// raceScale is 1 without the race detector: the tests at full size.
const raceScale = 1

// skipAllocationsUnderRace does nothing without the race detector.
func skipAllocationsUnderRace(*testing.T) {}

// skipWholeTablesUnderRace does nothing without the race detector.
func skipWholeTablesUnderRace(*testing.T) {}
