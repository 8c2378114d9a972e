// Command arrivals measures how faithfully the scheduler's sends follow the
// arrival process asked for. It runs schedule.Run in rate mode with a
// sender that only notes the time, then reports, for Poisson mode, the
// Kolmogorov–Smirnov distance between the realised gaps and the
// exponential distribution of the rate (and the share of gaps under 100 µs
// against the exponential's), and for constant mode the send lateness
// (actual − due) percentiles.
//
//	go run ./bench/arrivals -rate 500 -n 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/schedule"
)

func main() {
	rate := flag.Float64("rate", 500, "requests per second")
	n := flag.Int("n", 20000, "requests per mode")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	for _, poisson := range []bool{true, false} {
		cpu0 := cpuTime()
		sent, due, err := run(*rate, *n, poisson, *seed)
		cpu := cpuTime() - cpu0
		if err != nil {
			fmt.Fprintln(os.Stderr, "arrivals:", err)
			os.Exit(1)
		}
		late := make([]float64, len(sent))
		for i := range sent {
			late[i] = float64(sent[i].Sub(due[i])) / 1e3 // µs
		}
		slices.Sort(late)
		mode := "constant"
		if poisson {
			mode = "poisson"
		}
		fmt.Printf("%-8s rate %6.0f/s n %d: CPU %5.1f µs/request  lateness p50 %7.1f µs p99 %7.1f µs max %8.1f µs", mode, *rate, len(sent),
			float64(cpu.Microseconds())/float64(len(sent)), quantile(late, 0.5), quantile(late, 0.99), late[len(late)-1])
		if poisson {
			gaps := make([]float64, 0, len(sent)-1)
			for i := 1; i < len(sent); i++ {
				gaps = append(gaps, sent[i].Sub(sent[i-1]).Seconds())
			}
			slices.Sort(gaps)
			short := 0
			for _, g := range gaps {
				if g < 100e-6 {
					short++
				}
			}
			fmt.Printf("  KS distance %.4f  gaps < 100 µs %.1f%% (exponential %.1f%%)",
				ksExponential(gaps, *rate), 100*float64(short)/float64(len(gaps)), 100*(1-math.Exp(-*rate*100e-6)))
		}
		fmt.Println()
	}
}

// run sends n requests at rate and returns when each went out and was due,
// in send order.
func run(rate float64, n int, poisson bool, seed uint64) (sent, due []time.Time, err error) {
	sent, due = make([]time.Time, n), make([]time.Time, n)
	var mu sync.Mutex
	count := 0
	pattern := schedule.PatternConstant
	if poisson {
		pattern = schedule.PatternPoisson
	}
	arrivals, err := schedule.NewArrivals(pattern, 0)
	if err != nil {
		return nil, nil, err
	}
	_, err = schedule.Run(context.Background(), schedule.Plan{Rate: rate, Arrivals: arrivals, Count: n, Seed: seed},
		func(_ context.Context, j schedule.Job) {
			now := time.Now()
			mu.Lock()
			sent[j.Index], due[j.Index] = now, j.Due
			count++
			mu.Unlock()
		}, schedule.Observer{})
	if err == nil && count != n {
		err = fmt.Errorf("%d of %d requests sent", count, n)
	}
	// Jobs are numbered in schedule order; sends of neighbours may race, so
	// sort by the time they went out.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return sent[a].Compare(sent[b]) })
	s2, d2 := make([]time.Time, n), make([]time.Time, n)
	for k, i := range idx {
		s2[k], d2[k] = sent[i], due[i]
	}
	return s2, d2, err
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ksExponential is sup |F_n(x) − (1 − e^{−rate·x})| over sorted gaps.
func ksExponential(sorted []float64, rate float64) float64 {
	n := float64(len(sorted))
	d := 0.0
	for i, x := range sorted {
		f := 1 - math.Exp(-rate*x)
		d = math.Max(d, math.Max(math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n)))
	}
	return d
}

func quantile(sorted []float64, p float64) float64 {
	return sorted[min(int(math.Ceil(p*float64(len(sorted))))-1, len(sorted)-1)]
}
