//go:build race

package tokenizer

// raceScale divides the size of the tests that only repeat
// single-goroutine work on more data (memory bounds, random words):
// under the race detector that work is several times slower and finds no
// race, and the suite must stay within CI's time.
const raceScale = 4
