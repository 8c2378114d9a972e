package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shard is this process's part of one run spread over several processes
// (--shard-index, --shard-count): every shard computes the same global
// plan from the seed and sends only its own part of it, so no controller
// is needed and the shards' records merge into the one run's.
type Shard struct {
	// Index is this shard's number, 0 to Count-1; Count 0 or 1 is an
	// ordinary run.
	Index int `json:"shard_index"`
	Count int `json:"shard_count"`
	// IndexFrom and CountFrom say where each came from: the flag or the
	// environment variable (JOB_COMPLETION_INDEX, SLURM_PROCID, …).
	IndexFrom string `json:"-"`
	CountFrom string `json:"-"`
	// StartAt, when set, is the instant the schedule starts (every shard
	// waits for it); StartAtText is it as given.
	StartAt     time.Time `json:"-"`
	StartAtText string    `json:"start_at,omitempty"`
	// ScrapeShards are the shards that scrape the servers' metrics and GPU
	// telemetry (--server-metrics-shards: "0" by default, a list, or all),
	// so a server is not scraped once per shard.
	ScrapeShards    []int  `json:"-"`
	ScrapeShardsAll bool   `json:"-"`
	ScrapeText      string `json:"server_metrics_shards,omitempty"`
	// RunDir is the run's folder, which holds every shard's (set by
	// Finish when sharded).
	RunDir string `json:"-"`
}

// Sharded reports whether this run is one shard of several.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Scrapes reports whether this shard collects server metrics and GPU
// telemetry.
func (s Shard) Scrapes() bool {
	return !s.Sharded() || s.ScrapeShardsAll || slices.Contains(s.ScrapeShards, s.Index)
}

// ShardDir is the folder shard i of a sharded run writes into, under the
// run's --artifact-dir: shards may share one volume and one command line.
func ShardDir(artifactDir string, i int) string {
	return filepath.Join(artifactDir, fmt.Sprintf("shard_%04d", i))
}

// The environment variables a shard's index and count are read from when
// the flags are not given: Kubernetes Indexed Jobs set the index (the
// count is the Job's completions, passed as LLMBENCH_SHARD_COUNT), SLURM
// sets both for each task of an srun.
const (
	EnvShardCount  = "LLMBENCH_SHARD_COUNT"
	EnvShardIndex  = "LLMBENCH_SHARD_INDEX"
	envK8sIndex    = "JOB_COMPLETION_INDEX"
	envSlurmProcID = "SLURM_PROCID"
	envSlurmNTasks = "SLURM_NTASKS"
	maxShards      = 100000
	startAtHorizon = 24 * time.Hour
)

// applyEnv fills the shard's index and count from the environment where
// the flags left them out: LLMBENCH_SHARD_INDEX/COUNT, Kubernetes'
// JOB_COMPLETION_INDEX, SLURM's SLURM_PROCID/SLURM_NTASKS, in that order.
// SLURM's are taken only when --shard-count or SLURM_NTASKS says there is
// more than one task (every srun sets them, even for one).
func (s *Shard) applyEnv(lookup func(string) (string, bool), set map[string]bool) error {
	read := func(names ...string) (int, string, bool, error) {
		for _, n := range names {
			raw, ok := lookup(n)
			if !ok || strings.TrimSpace(raw) == "" {
				continue
			}
			v, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil || v < 0 {
				return 0, n, true, fmt.Errorf("%s=%q: want a whole number, not negative", n, raw)
			}
			return v, n, true, nil
		}
		return 0, "", false, nil
	}
	if !set["shard-count"] {
		v, from, ok, err := read(EnvShardCount, envSlurmNTasks)
		if err != nil {
			return err
		}
		if ok {
			s.Count, s.CountFrom = v, from
		}
	}
	if !set["shard-index"] && s.Count > 1 {
		v, from, ok, err := read(EnvShardIndex, envK8sIndex, envSlurmProcID)
		if err != nil {
			return err
		}
		if ok {
			s.Index, s.IndexFrom = v, from
		}
	}
	return nil
}

// finish checks the shard settings and parses --start-at and
// --server-metrics-shards.
func (s *Shard) finish(set map[string]bool, now time.Time) error {
	if s.CountFrom == "" && set["shard-count"] {
		s.CountFrom = "--shard-count"
	}
	if s.IndexFrom == "" && set["shard-index"] {
		s.IndexFrom = "--shard-index"
	}
	switch {
	case s.Count < 0 || s.Count > maxShards:
		return fmt.Errorf("--shard-count %d: give 1 to %d shards", s.Count, maxShards)
	case s.Count <= 1 && set["shard-index"] && s.Index != 0:
		return fmt.Errorf("--shard-index %d needs --shard-count (or %s) above 1: the number of shards the run is split into", s.Index, EnvShardCount)
	case s.Count > 1 && (s.Index < 0 || s.Index >= s.Count):
		return fmt.Errorf("shard index %d (from %s) is not below the shard count %d (from %s): shards are numbered 0 to %d", s.Index, orFlag(s.IndexFrom, "--shard-index"), s.Count, orFlag(s.CountFrom, "--shard-count"), s.Count-1)
	}
	if s.Count > 1 && s.IndexFrom == "" {
		return fmt.Errorf("--shard-count %d needs this shard's index: --shard-index, or %s, %s (Kubernetes Indexed Jobs) or %s (SLURM)", s.Count, EnvShardIndex, envK8sIndex, envSlurmProcID)
	}
	if s.StartAtText != "" {
		t, err := ParseStartAt(s.StartAtText)
		if err != nil {
			return err
		}
		if t.Sub(now) > startAtHorizon {
			return fmt.Errorf("--start-at %s is %s away: more than %s; check the time and its zone", s.StartAtText, t.Sub(now).Round(time.Second), startAtHorizon)
		}
		s.StartAt = t
	}
	s.ScrapeShards, s.ScrapeShardsAll = nil, false
	switch txt := strings.TrimSpace(s.ScrapeText); txt {
	case "", "0":
		s.ScrapeShards = []int{0}
	case "all":
		s.ScrapeShardsAll = true
	default:
		for _, part := range strings.Split(txt, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || i < 0 || s.Count > 1 && i >= s.Count {
				return fmt.Errorf("--server-metrics-shards %q: give shard indexes (0 to %d) separated by commas, or all", s.ScrapeText, max(s.Count-1, 0))
			}
			s.ScrapeShards = append(s.ScrapeShards, i)
		}
	}
	return nil
}

func orFlag(from, flag string) string {
	if from == "" {
		return flag
	}
	return from
}

// ParseStartAt reads --start-at: RFC 3339 (2026-11-24T10:00:00Z, with
// fractions of a second if wanted) or Unix time in nanoseconds.
func ParseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1e17 { // before 1973 in ns: seconds or ms were meant
			return time.Time{}, fmt.Errorf("--start-at %s: a Unix time is read in nanoseconds (19 digits); this looks like seconds or milliseconds", s)
		}
		return time.Unix(0, n), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: give RFC 3339 (2026-11-24T10:00:00Z) or Unix nanoseconds", s)
	}
	return t, nil
}

// PlanHash identifies the global plan a shard belongs to: the hash of
// the redacted configuration with what legitimately differs between the
// shards of one run left out (the shard's index, where it writes, how its
// index was found). Shards whose hashes differ were not started from one
// command line and cannot be merged.
func (p Profile) PlanHash() string {
	q := p.Redacted()
	q.Output.ArtifactDir = ""
	q.CLICommand = ""
	b, err := json.Marshal(struct {
		Profile    Profile `json:"profile"`
		ShardCount int     `json:"shard_count"`
		StartAt    string  `json:"start_at"`
		Scrape     string  `json:"server_metrics_shards"`
	}{q, q.Shard.Count, q.Shard.StartAtText, q.Shard.ScrapeText})
	if err != nil {
		// A Profile always encodes (tested); a failure must not pass as
		// a match.
		return "unhashable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// errShardSweep refuses what cannot yet be sharded.
var errShardSweep = errors.New("--shard-count splits one run; a sweep, search or --num-profile-runs runs many: run them unsharded, or shard each run on its own")
