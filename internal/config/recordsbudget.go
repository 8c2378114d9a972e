package config

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// --records-memory-budget: how much memory a run's per-request values
// (every metric's value of every request, kept for exact percentiles) may
// hold; beyond it they go to disk in a folder under the artifact directory.

// MinRecordsMemoryBudget is the smallest budget accepted.
const MinRecordsMemoryBudget = 32 << 20

// maxDefaultRecordsMemoryBudget caps the default. Past it, spilling
// costs a long run little (sequential writes of a few bytes a value), and
// the Go heap may grow to about twice what is live before a collection:
// a 256 MiB budget peaked at 679 MB RSS over 10 million requests, so 512
// MiB keeps 8 hours at 5,000 requests/s (144 million) well within 4 GB.
const maxDefaultRecordsMemoryBudget = 512 << 20

// fallbackMemory is assumed when the machine's memory cannot be read.
const fallbackMemory = 4 << 30

// RecordsMemoryBudgetBytes is the budget: --records-memory-budget, or a
// quarter of the machine's memory (its cgroup's limit when lower), at
// most 512 MiB.
func (o Output) RecordsMemoryBudgetBytes() int64 {
	if o.RecordsMemoryBudget > 0 {
		return o.RecordsMemoryBudget
	}
	return DefaultRecordsMemoryBudget()
}

// DefaultRecordsMemoryBudget is a quarter of the machine's memory, or of
// its cgroup's limit when lower, at most 512 MiB.
func DefaultRecordsMemoryBudget() int64 {
	return min(max(int64(machineMemory()/4), MinRecordsMemoryBudget), maxDefaultRecordsMemoryBudget)
}

// machineMemory is MemTotal, or the cgroup v2 memory.max when lower.
func machineMemory() uint64 {
	total := uint64(0)
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// "MemTotal:       24531552 kB"
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
					total = kb * 1024
				}
				break
			}
		}
		f.Close()
	}
	if limit, ok := cgroupMemoryMax(); ok && (total == 0 || limit < total) {
		total = limit
	}
	if total == 0 {
		return fallbackMemory
	}
	return total
}

// cgroupMemoryMax is the process's cgroup v2 memory.max, when it has one.
func cgroupMemoryMax() (uint64, bool) {
	path := "/sys/fs/cgroup/memory.max"
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		// "0::/user.slice/..." on cgroup v2
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok && rest != "/" && rest != "" {
				if _, err := os.Stat("/sys/fs/cgroup" + rest + "/memory.max"); err == nil {
					path = "/sys/fs/cgroup" + rest + "/memory.max"
				}
			}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n > 0
}

// ParseByteSize reads a size: a number of bytes with an optional unit, k,
// KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB (case ignored; KB = 1000,
// KiB and k = 1024).
func ParseByteSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	num := strings.TrimRight(t, "abcdefghijklmnopqrstuvwxyz ")
	unit := strings.TrimSpace(t[len(num):])
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || x < 0 || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a size (512MiB, 2GB, …)", s)
	}
	mul := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kb": 1e3, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1e12, "tib": 1 << 40}[unit]
	if mul == 0 {
		return 0, fmt.Errorf("%q is not a size: unknown unit %q (use MiB, GiB, MB, GB, …)", s, unit)
	}
	if x*mul >= 1<<62 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(x * mul), nil
}

// FormatByteSize writes n in the largest binary unit it is a whole
// number of tenths of.
func FormatByteSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// byteSizeValue is a flag holding a size in bytes (0: unset).
type byteSizeValue int64

func (v *byteSizeValue) Set(s string) error {
	n, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*v = byteSizeValue(n)
	return nil
}

func (v *byteSizeValue) String() string {
	if v == nil || *v == 0 {
		return "0"
	}
	return FormatByteSize(int64(*v))
}
