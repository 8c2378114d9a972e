//go:build race

package metrics

// raceScale divides the size of the tests that only repeat
// single-goroutine work on more data (the spill's bit-for-bit
// comparisons): under the race detector that work is several times slower
// and finds no race, and the suite must stay within CI's time.
const raceScale = 4
