//go:build !unix

package nodetest

// lockFile does not lock where flock is missing; tests there install once
// per process.
func lockFile(string) (func(), error) { return func() {}, nil }
