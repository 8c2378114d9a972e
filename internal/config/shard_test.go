package config

import (
	"encoding/gob"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// parseEnv parses args with env as the environment.
func parseEnv(t *testing.T, env map[string]string, args ...string) (Profile, error) {
	t.Helper()
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Default()
	BindFlags(fs, &p)
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	if err := p.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		return p, err
	}
	return p, p.Finish()
}

var shardBase = []string{"-m", "m", "--mock", "--concurrency", "8", "--request-count", "80", "--random-seed", "5", "--artifact-dir", "/tmp/run"}

func TestShardFromFlagsAndEnvironment(t *testing.T) {
	for _, c := range []struct {
		name       string
		env        map[string]string
		args       []string
		index, cnt int
		from       string
	}{
		{"flags", nil, []string{"--shard-count", "4", "--shard-index", "3"}, 3, 4, "--shard-index"},
		{"kubernetes indexed job", map[string]string{"JOB_COMPLETION_INDEX": "2", "LLMBENCH_SHARD_COUNT": "4"}, nil, 2, 4, "JOB_COMPLETION_INDEX"},
		{"kubernetes, count by flag", map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"--shard-count", "3"}, 1, 3, "JOB_COMPLETION_INDEX"},
		{"slurm", map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "3"}, nil, 1, 3, "SLURM_PROCID"},
		{"own variables first", map[string]string{"LLMBENCH_SHARD_INDEX": "0", "SLURM_PROCID": "1", "SLURM_NTASKS": "3"}, nil, 0, 3, "LLMBENCH_SHARD_INDEX"},
		{"flag beats the environment", map[string]string{"JOB_COMPLETION_INDEX": "2", "LLMBENCH_SHARD_COUNT": "4"}, []string{"--shard-index", "0"}, 0, 4, "--shard-index"},
		{"one slurm task is no shard", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, nil, 0, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := parseEnv(t, c.env, append(append([]string{}, shardBase...), c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			s := p.Shard
			if s.Index != c.index || s.Count != c.cnt || s.IndexFrom != c.from {
				t.Fatalf("shard %d of %d from %q; want %d of %d from %q", s.Index, s.Count, s.IndexFrom, c.index, c.cnt, c.from)
			}
			wantDir := "/tmp/run"
			if c.cnt > 1 {
				wantDir = ShardDir("/tmp/run", c.index)
			}
			if p.Output.ArtifactDir != wantDir || (c.cnt > 1) != strings.HasSuffix(p.Output.ArtifactDir, "shard_000"+string(rune('0'+c.index))) {
				t.Errorf("artifact dir %q, want %q", p.Output.ArtifactDir, wantDir)
			}
			if s.Scrapes() != (c.index == 0 || c.cnt <= 1) {
				t.Errorf("shard %d scrapes: %v (shard 0 only, by default)", c.index, s.Scrapes())
			}
		})
	}
}

func TestShardRefusals(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--shard-count", "3", "--shard-index", "3"}, "is not below the shard count 3"},
		{nil, []string{"--shard-count", "3"}, "needs this shard's index"},
		{nil, []string{"--shard-index", "2"}, "needs --shard-count"},
		{map[string]string{"JOB_COMPLETION_INDEX": "x", "LLMBENCH_SHARD_COUNT": "2"}, nil, `JOB_COMPLETION_INDEX="x"`},
		{nil, []string{"--shard-count", "2", "--shard-index", "0", "--start-at", "1700000000"}, "looks like seconds"},
		{nil, []string{"--shard-count", "2", "--shard-index", "0", "--start-at", "tomorrow"}, "RFC 3339"},
		{nil, []string{"--shard-count", "2", "--shard-index", "0", "--start-at", time.Now().Add(48 * time.Hour).Format(time.RFC3339)}, "more than 24h"},
		{nil, []string{"--shard-count", "2", "--shard-index", "0", "--server-metrics-shards", "0,5"}, "--server-metrics-shards"},
		{nil, []string{"--shard-count", "2", "--shard-index", "0", "--num-profile-runs", "3"}, "splits one run"},
	} {
		_, err := parseEnv(t, c.env, append(append([]string{}, shardBase...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v; want %q", c.env, c.args, err, c.want)
		}
	}
	// Without --random-seed every shard would draw its own plan.
	if _, err := parseEnv(t, nil, "-m", "m", "--mock", "--concurrency", "4", "--request-count", "8", "--shard-count", "2", "--shard-index", "1"); err == nil || !strings.Contains(err.Error(), "--random-seed") {
		t.Errorf("no seed: %v", err)
	}
}

func TestStartAtForms(t *testing.T) {
	for in, want := range map[string]int64{
		"2026-11-24T10:00:00Z":             1795514400000000000,
		"2026-11-24T11:00:00.5+01:00":      1795514400500000000,
		"1795514400000000123":              1795514400000000123,
		" 2026-11-24T10:00:00.000000001Z ": 1795514400000000001,
	} {
		got, err := ParseStartAt(in)
		if err != nil || got.UnixNano() != want {
			t.Errorf("%q: %v (%v), want %d", in, got.UnixNano(), err, want)
		}
	}
}

// TestPlanHash: the shards of one command line share a plan hash
// whatever their index and folder; another seed, shard count or load is
// another plan. The configuration a shard records for the merge holds no
// credentials.
func TestPlanHash(t *testing.T) {
	hash := func(args ...string) string {
		p, err := parseEnv(t, nil, append(append([]string{}, shardBase...), args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return p.PlanHash()
	}
	h0 := hash("--shard-count", "3", "--shard-index", "0")
	if h1 := hash("--shard-count", "3", "--shard-index", "2"); h1 != h0 {
		t.Errorf("shards 0 and 2 of one run: %s, %s", h0, h1)
	}
	for _, other := range [][]string{
		{"--shard-count", "4", "--shard-index", "0"},
		{"--shard-count", "3", "--shard-index", "0", "--random-seed", "6"},
		{"--shard-count", "3", "--shard-index", "0", "--concurrency", "9"},
	} {
		if hash(other...) == h0 {
			t.Errorf("%v has the plan hash of another run", other)
		}
	}
	p, err := parseEnv(t, nil, "-m", "m", "--url", "http://bob:hunter2@h:8000", "--concurrency", "4", "--request-count", "8", "--random-seed", "1")
	if err != nil || len(p.Endpoint.Users) != 1 || p.Endpoint.Users[0] == nil {
		t.Fatalf("credentials not read: %v", err)
	}
	var buf strings.Builder
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "hunter2") || strings.Contains(buf.String(), "bob") {
		t.Error("an encoded Profile holds the URL's credentials")
	}
	var back Profile
	if err := gob.NewDecoder(strings.NewReader(buf.String())).Decode(&back); err != nil || back.Endpoint.URLs[0] != "http://h:8000" || back.Endpoint.Users != nil {
		t.Errorf("decoded: %v, %v, %v", err, back.Endpoint.URLs, back.Endpoint.Users)
	}
}
