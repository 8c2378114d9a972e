//go:build linux

package clientload

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// runQueueWait is how long the process's threads have waited, ready to
// run, for a core (the second field of each thread's
// /proc/self/task/*/schedstat); ok is false when the kernel does not say.
// Threads that have exited take their share with them: Go keeps its
// threads, so little is lost.
func runQueueWait() (wait time.Duration, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	var buf [128]byte
	for _, t := range tasks {
		f, err := os.Open("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // a thread gone since the listing
		}
		n, _ := f.Read(buf[:])
		f.Close()
		fields := bytes.Fields(buf[:n])
		if len(fields) < 2 {
			return 0, false
		}
		ns, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err != nil {
			return 0, false
		}
		wait += time.Duration(ns)
		ok = true
	}
	return wait, ok
}
