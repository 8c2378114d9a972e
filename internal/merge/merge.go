// Package merge combines the folders of a sharded run's shards into the
// one run's folder: it checks that they are the shards of one plan, every
// one present, then recomputes every client export from all their records
// through the code a single process exports with (benchmark.Replay),
// joins their per-request files, and takes the server metrics and GPU
// telemetry from the shard that scraped them.
package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// Options say what to merge and where.
type Options struct {
	// Dirs are the shards' folders, or folders holding them (shard_NNNN).
	Dirs   []string
	Output string
	// AllowPartial merges what is there when shards are missing or did
	// not finish, and says what is missing.
	AllowPartial bool
	Version      string
	Log          io.Writer
}

// Outcome is what the merge found besides the merged run.
type Outcome struct {
	Result *benchmark.Result
	// Shards are the merged shards' run_info, by index.
	Shards []export.ShardInfo
	// Missing are the indexes of shards not found; Unfinished those whose
	// folder holds no export (the shard failed or was stopped hard).
	Missing, Unfinished []int
	// OffsetBoundNs bounds how far apart the shards' clocks may be (the
	// widest pairwise offset the servers' Date headers allow); -1 when it
	// cannot be bounded.
	OffsetBoundNs int64
}

// shard is one shard folder read.
type shard struct {
	dir    string
	header benchmark.ShardHeader
	info   *export.ShardInfo // nil: the shard did not finish
	files  export.Files
}

// Merge merges the shards of opts.Dirs into opts.Output.
func Merge(opts Options) (*Outcome, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	dirs, err := shardDirs(opts.Dirs)
	if err != nil {
		return nil, err
	}
	shards, err := readShards(dirs)
	if err != nil {
		return nil, err
	}
	out := &Outcome{OffsetBoundNs: -1}
	byIndex, err := checkOnePlan(shards, opts, out)
	if err != nil {
		return nil, err
	}
	ordered := sortedShards(byIndex)
	base := ordered[0]
	p := base.header.Profile
	p.Output.ArtifactDir = opts.Output
	p.Output.Overwrite = true
	p.Shard.Index, p.Shard.IndexFrom = 0, ""
	if err := checkOutput(opts.Output, shards); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Output, 0o755); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	// A merge run twice keeps the first one's files, as a profile does.
	moved, err := export.KeepPrevious(opts.Output, p.Output.ExportPrefix, time.Now())
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if moved != "" {
		fmt.Fprintf(opts.Log, "INFO  %s held a previous merge's results: they are kept in %s\n", opts.Output, moved)
	}

	start, end, profiled, cancelled := int64(math.MaxInt64), int64(math.MinInt64), false, false
	for _, s := range ordered {
		if s.info == nil {
			continue
		}
		out.Shards = append(out.Shards, *s.info)
		cancelled = cancelled || s.info.Cancelled
		if s.info.Profiled {
			profiled = true
			start, end = min(start, s.info.ProfilingStartNs), max(end, s.info.ProfilingEndNs)
		}
	}
	if !profiled {
		start, end = 0, 0
	}
	out.OffsetBoundNs = offsetBound(out.Shards)
	res, err := benchmark.Replay(benchmark.ReplayInput{
		Profile: p, Version: opts.Version, StartNs: start, EndNs: end, Profiled: profiled, Cancelled: cancelled || len(out.Missing)+len(out.Unfinished) > 0,
		Records: func(keep func(*record.Record, *metrics.Values)) error {
			var errs []error
			for _, s := range ordered {
				_, err := benchmark.ShardRecords(s.dir, func(benchmark.ShardHeader) error { return nil }, keep)
				if err != nil && s.info != nil {
					errs = append(errs, err) // a finished shard's file must read whole
				}
			}
			return errors.Join(errs...)
		},
		RunInfo: export.RunInfo{RandomSeed: p.Input.RandomSeed, CLICommand: p.CLICommand, Shards: out.Shards},
		Log:     opts.Log,
	})
	out.Result = res
	if err != nil {
		return out, fmt.Errorf("merge: %w", err)
	}
	names := export.ProfileFiles(p.Output.ExportPrefix)
	// Each shard's per-request lines, and its raw exchanges with
	// --export-level raw, joined.
	for _, pick := range []func(export.Files) string{
		func(f export.Files) string { return f.Records },
		func(f export.Files) string { return f.Raw },
	} {
		if err := joinRecords(ordered, pick, pick(names), opts.Output, res); err != nil {
			return out, err
		}
	}
	if err := copyFile(filepath.Join(base.dir, names.Inputs), filepath.Join(opts.Output, names.Inputs)); err == nil {
		res.Files = append(res.Files, names.Inputs)
	}
	if err := copyScraped(ordered, names, opts.Output, res, opts.Log); err != nil {
		return out, err
	}
	benchmark.WriteReport(opts.Output, p, opts.Version, opts.Log, res)
	warnClocks(out, p.ServerMetrics.SliceSeconds, opts.Log)
	return out, nil
}

// shardDirs expands each folder holding shard_NNNN folders into them.
func shardDirs(dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: name the shards' folders (or the run's folder holding shard_NNNN)")
	}
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, benchmark.ShardRecordsFile)); err == nil {
			out = append(out, d)
			continue
		}
		inner, _ := filepath.Glob(filepath.Join(d, "shard_[0-9]*"))
		var found []string
		for _, in := range inner {
			if st, err := os.Stat(in); err == nil && st.IsDir() {
				found = append(found, in)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("merge: %s is not a shard's folder (no %s) and holds no shard_NNNN folder", d, benchmark.ShardRecordsFile)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// readShards reads each folder's header and, when the shard finished,
// its run_info.
func readShards(dirs []string) ([]*shard, error) {
	var out []*shard
	for _, d := range dirs {
		h, err := benchmark.ReadShardHeader(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		s := &shard{dir: d, header: h, files: export.ProfileFiles(h.Profile.Output.ExportPrefix)}
		b, err := os.ReadFile(filepath.Join(d, s.files.ProfileJSON))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// No export: the shard never finished.
		case err != nil:
			return nil, fmt.Errorf("merge: %w", err)
		default:
			var doc struct {
				RunInfo export.RunInfo `json:"run_info"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				return nil, fmt.Errorf("merge: %s: %w", filepath.Join(d, s.files.ProfileJSON), err)
			}
			if doc.RunInfo.Shard == nil {
				return nil, fmt.Errorf("merge: %s is not a shard's export (no run_info.shard)", d)
			}
			s.info = doc.RunInfo.Shard
		}
		out = append(out, s)
	}
	return out, nil
}

// checkOnePlan refuses folders of different plans, seeds or shard counts
// and a shard given twice; it fills in what is missing and returns the
// shards by index.
func checkOnePlan(shards []*shard, opts Options, out *Outcome) (map[int]*shard, error) {
	first := shards[0]
	count := first.header.Profile.Shard.Count
	byIndex := map[int]*shard{}
	for _, s := range shards {
		hp := s.header.Profile
		switch {
		case s.header.PlanHash != first.header.PlanHash:
			return nil, fmt.Errorf("merge: %s and %s are shards of different runs (plan %s against %s: another command line, seed or shard count)", s.dir, first.dir, s.header.PlanHash, first.header.PlanHash)
		case hp.Shard.Count != count:
			return nil, fmt.Errorf("merge: %s is one of %d shards, %s one of %d", s.dir, hp.Shard.Count, first.dir, count)
		}
		if prev, dup := byIndex[hp.Shard.Index]; dup {
			return nil, fmt.Errorf("merge: %s and %s are both shard %d", prev.dir, s.dir, hp.Shard.Index)
		}
		byIndex[hp.Shard.Index] = s
		if s.info == nil {
			out.Unfinished = append(out.Unfinished, hp.Shard.Index)
		}
	}
	for i := range count {
		if _, ok := byIndex[i]; !ok {
			out.Missing = append(out.Missing, i)
		}
	}
	slices.Sort(out.Unfinished)
	if len(out.Missing)+len(out.Unfinished) > 0 {
		what := describeGaps(out.Missing, out.Unfinished, count)
		if !opts.AllowPartial {
			return nil, fmt.Errorf("merge: %s; --allow-partial merges what is there", what)
		}
		fmt.Fprintf(opts.Log, "WARNING  partial merge: %s; the merged run covers only the rest of the plan\n", what)
	}
	return byIndex, nil
}

func describeGaps(missing, unfinished []int, count int) string {
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("shard %s of %d missing", joinInts(missing), count))
	}
	if len(unfinished) > 0 {
		parts = append(parts, fmt.Sprintf("shard %s did not finish (no export: failed or stopped hard)", joinInts(unfinished)))
	}
	return strings.Join(parts, "; ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// checkOutput refuses to write into a shard's own folder.
func checkOutput(output string, shards []*shard) error {
	o, err := filepath.Abs(output)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, s := range shards {
		if d, err := filepath.Abs(s.dir); err == nil && d == o {
			return fmt.Errorf("merge: --output %s is shard %s's own folder; give a new one", output, s.dir)
		}
	}
	return nil
}

func sortedShards(m map[int]*shard) []*shard {
	out := make([]*shard, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].header.Profile.Shard.Index < out[j].header.Profile.Shard.Index })
	return out
}

// joinRecords writes a merged per-request file, name (profile_export.jsonl,
// profile_export_raw.jsonl): each shard's lines, pick of its files, as it
// wrote them (session_num is unique across shards), shard by shard. A
// level that wrote none (--export-level summary) writes none.
func joinRecords(shards []*shard, pick func(export.Files) string, name, output string, res *benchmark.Result) error {
	var srcs []string
	for _, s := range shards {
		path := filepath.Join(s.dir, pick(s.files))
		if _, err := os.Stat(path); err == nil {
			srcs = append(srcs, path)
		}
	}
	if len(srcs) == 0 {
		return nil
	}
	dst, err := os.Create(filepath.Join(output, name))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, src := range srcs {
		if err := appendFile(dst, src); err != nil {
			dst.Close()
			return err
		}
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	res.Files = append(res.Files, name)
	return nil
}

func appendFile(dst *os.File, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(dst, f); err != nil {
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := appendFile(f, src); err != nil {
		f.Close()
		os.Remove(dst)
		return err
	}
	return f.Close()
}

// copyScraped copies the server metrics and GPU telemetry files of the
// first shard that scraped: every file of its folder the merge does not
// write itself.
func copyScraped(shards []*shard, names export.Files, output string, res *benchmark.Result, log io.Writer) error {
	ours := map[string]bool{
		names.ProfileJSON: true, names.ProfileCSV: true, names.Records: true, names.Raw: true, names.Inputs: true, names.Report: true,
		names.TimeslicesJSON: true, names.TimeslicesCSV: true, benchmark.ShardRecordsFile: true,
	}
	for _, s := range shards {
		if s.info == nil || !s.info.ScrapedServerMetrics {
			continue
		}
		entries, err := os.ReadDir(s.dir)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() || ours[e.Name()] {
				continue
			}
			if err := copyFile(filepath.Join(s.dir, e.Name()), filepath.Join(output, e.Name())); err != nil {
				return err
			}
			res.Files = append(res.Files, e.Name())
		}
		return nil
	}
	fmt.Fprintln(log, "INFO  no merged shard scraped server metrics (--server-metrics-shards): the merged run has none")
	return nil
}

// offsetBound is the widest the shards' clocks can be apart, pair by
// pair: shards on one host read one clock, and the difference of their
// anchors (wall minus monotonic, read at one instant) is how far their
// wall clocks were apart; shards that each bounded the servers' clock
// minus their own (ServerClockOffset) differ by at most
// max(hi_i-lo_j, hi_j-lo_i). -1 when a pair has neither (nothing bounds
// it).
func offsetBound(shards []export.ShardInfo) int64 {
	var worst int64
	for i, a := range shards {
		for _, b := range shards[i+1:] {
			d, ok := pairBound(a, b)
			if !ok {
				return -1
			}
			worst = max(worst, d)
		}
	}
	return worst
}

func pairBound(a, b export.ShardInfo) (int64, bool) {
	if a.Host != "" && a.Host == b.Host && a.Clock.MonotonicNs > 0 && b.Clock.MonotonicNs > 0 {
		d := (a.Clock.WallNs - a.Clock.MonotonicNs) - (b.Clock.WallNs - b.Clock.MonotonicNs)
		return max(d, -d), true
	}
	if a.ServerClockOffset == nil || b.ServerClockOffset == nil {
		return 0, false
	}
	lo := a.ServerClockOffset.LowNs - b.ServerClockOffset.HighNs
	hi := a.ServerClockOffset.HighNs - b.ServerClockOffset.LowNs
	return max(-lo, hi), true
}

// warnClocks says how late each shard started and whether the clocks may
// be further apart than a time slice.
func warnClocks(out *Outcome, sliceSeconds float64, log io.Writer) {
	for _, s := range out.Shards {
		if s.StartAt != "" && s.LateNs > int64(benchmark.LateWarning) {
			fmt.Fprintf(log, "WARNING  shard %d started %.1f ms after --start-at\n", s.Index, float64(s.LateNs)/1e6)
		}
	}
	switch width := int64(sliceSeconds * 1e9); {
	case out.OffsetBoundNs < 0:
		fmt.Fprintln(log, "INFO  the shards ran on different hosts, whose clocks llmbench cannot compare: time slices assume they agree (keep them in sync with NTP or PTP)")
	case width > 0 && out.OffsetBoundNs > width:
		fmt.Fprintf(log, "WARNING  the shards' clocks may be up to %.1f ms apart, more than the %.3g s time slice: a request may sit in a neighbouring slice\n", float64(out.OffsetBoundNs)/1e6, sliceSeconds)
	}
}
