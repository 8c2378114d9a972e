//go:build !race

package benchmark

// raceScale is 1 without the race detector: the tests at full size.
const raceScale = 1
