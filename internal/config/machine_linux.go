package config

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ReadMachine reads the open-file limit and the memory available.
func ReadMachine() Machine {
	var m Machine
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		m.OpenFiles, m.OpenFilesMax = lim.Cur, lim.Max
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "MemAvailable:   20453212 kB"
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			if kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
				m.AvailableMemory = kb * 1024
			}
			break
		}
	}
	return m
}
