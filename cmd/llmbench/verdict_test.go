package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The end-to-end verdict tests run llmbench in a child process (this test
// binary, re-executed) pinned to core 0 with GOMAXPROCS=1, as bench/
// pins its clients with taskset: the child's load is then the test's to
// decide, whatever else the machine runs.

// childArgsEnv holds the child's llmbench arguments, \x1f-separated.
const childArgsEnv = "LLMBENCH_TEST_CHILD_ARGS"

// TestChildProcess is llmbench when re-executed by the tests below; on
// its own it does nothing.
func TestChildProcess(t *testing.T) {
	args := os.Getenv(childArgsEnv)
	if args == "" {
		t.Skip("a child of TestVerdictSaturated and TestVerdictNoisyHost")
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// onCore0 is a command pinned to core 0 with taskset.
func onCore0(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("pins cores with taskset (Linux)")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not found")
	}
	return exec.Command(taskset, append([]string{"-c", "0"}, args...)...)
}

// runPinned runs llmbench profile with args in a child on core 0 with
// GOMAXPROCS=1, at the nice level given, calls onLoad (unless nil) once
// the first record is on disk, and returns the child's exit code, its
// output and its profile_export_aiperf.json.
func runPinned(t *testing.T, nice string, onLoad func(), args ...string) (int, string, map[string]json.RawMessage) {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{"llmbench", "profile", "-m", "m", "--mock", "--tokenizer", "builtin", "--no-server-metrics", "--artifact-dir", dir}, args...)
	cmd := onCore0(t, "nice", "-n", nice, os.Args[0], "-test.run=^TestChildProcess$")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", childArgsEnv+"="+strings.Join(args, "\x1f"))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if onLoad != nil {
		// Start-up (the tokenizer, the prompts) is not what is measured:
		// it runs unhindered, so the test stays short.
		waitFor(t, 30*time.Second, "first record", func() bool {
			st, err := os.Stat(filepath.Join(dir, "profile_export.jsonl"))
			return err == nil && st.Size() > 0
		})
		onLoad()
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = exit.ExitCode()
	}
	raw, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatalf("exit %d, no profile export: %v\n%s", code, err, out.String())
	}
	var agg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &agg); err != nil {
		t.Fatal(err)
	}
	return code, out.String(), agg
}

type verdictJSON struct {
	Verdict string `json:"verdict"`
	Reasons []struct {
		Code, Level, Message string
	} `json:"reasons"`
	Checked []string `json:"checked"`
}

type clientLoadJSON struct {
	CPUUtilization  float64  `json:"cpu_utilization"`
	CPUWait         *float64 `json:"cpu_wait"`
	TimerDelayP99Ms float64  `json:"timer_delay_p99_ms"`
	Samples         int      `json:"samples"`
	Saturated       bool     `json:"saturated"`
	NoisyHost       bool     `json:"noisy_host"`
}

func decode[T any](t *testing.T, agg map[string]json.RawMessage, key string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(agg[key], &v); err != nil {
		t.Fatalf("%s: %v in %s", key, err, agg[key])
	}
	return v
}

// TestVerdictSaturated: 1,024 streams on one core, the simulated server
// in the same process: the client needs far more than its core, and the
// verdict says SUSPECT for its CPU, on the console, in the export and in
// the exit code with --fail-on-verdict suspect. On a loaded machine the
// child gets less of its core but waits for the rest: still saturated.
func TestVerdictSaturated(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4-second load")
	}
	code, out, agg := runPinned(t, "0", nil, "--streaming", "--concurrency", "1024", "--osl", "10", "--mock-ttft-ms", "20", "--mock-itl-ms", "5",
		"--benchmark-duration", "4", "--fail-on-verdict", "suspect")
	v, load := decode[verdictJSON](t, agg, "run_verdict"), decode[clientLoadJSON](t, agg, "client_load")
	t.Logf("client_load %s, verdict %s", agg["client_load"], agg["run_verdict"])
	if !load.Saturated || load.NoisyHost {
		t.Errorf("client_load %s: want saturated, not a noisy host", agg["client_load"])
	}
	found := false
	for _, r := range v.Reasons {
		found = found || r.Code == "client_cpu_saturated" && r.Level == "SUSPECT" && strings.Contains(r.Message, "client CPU saturated")
	}
	if v.Verdict != "SUSPECT" || !found {
		t.Errorf("run_verdict %s: want SUSPECT with client CPU saturated", agg["run_verdict"])
	}
	if code != exitVerdict || !strings.Contains(out, "Run verdict: SUSPECT\n") || !strings.Contains(out, "SUSPECT  client CPU saturated") ||
		!strings.Contains(out, "--fail-on-verdict is suspect: exit code 3") || !strings.Contains(out, "The client was saturated") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// TestVerdictNoisyHost: one request at a time on core 0, with a busy-loop
// child process on the same core and the client at nice 5, so that the
// busy loop delays its wake-ups (at equal priority Linux's scheduler lets
// a waking task in at once). The client is nearly idle, so it is not
// saturated; its timers, some ms late, are small against the 500 ms
// latencies measured, so no warning, and the verdict is PASS.
func TestVerdictNoisyHost(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-second load")
	}
	burner := onCore0(t, "sh", "-c", "while :; do :; done")
	defer func() {
		if burner.Process != nil {
			_ = burner.Process.Kill()
			_ = burner.Wait()
		}
	}()
	start := func() {
		if err := burner.Start(); err != nil {
			t.Fatal(err)
		}
	}
	code, out, agg := runPinned(t, "5", start, "--concurrency", "1", "--osl", "4", "--mock-ttft-ms", "400", "--mock-itl-ms", "25",
		"--benchmark-duration", "3", "--fail-on-verdict", "suspect")
	v, load := decode[verdictJSON](t, agg, "run_verdict"), decode[clientLoadJSON](t, agg, "client_load")
	t.Logf("client_load %s, verdict %s", agg["client_load"], agg["run_verdict"])
	if load.Saturated || load.Samples < 100 || load.CPUUtilization > 0.5 {
		t.Errorf("client_load %s: an idle client, not saturated", agg["client_load"])
	}
	if !load.NoisyHost {
		// The busy loops should have made the timers late; the verdict
		// below is still checked.
		t.Logf("timers were not late (p99 %.2f ms): this host's scheduler kept up with the busy loop", load.TimerDelayP99Ms)
	}
	if v.Verdict != "PASS" || len(v.Reasons) != 0 || len(v.Checked) < 4 {
		t.Errorf("run_verdict %s: want PASS", agg["run_verdict"])
	}
	if code != exitOK || !strings.Contains(out, "Run verdict: PASS\n") || strings.Contains(out, "saturated") || strings.Contains(out, "WARNING") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// TestFailOnVerdictValue: a bad --fail-on-verdict is one line and exit 2.
func TestFailOnVerdictValue(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--fail-on-verdict", "pass"}, &stdout, &stderr)
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); code != exitUsage || len(lines) != 1 ||
		!strings.Contains(lines[0], `--fail-on-verdict "pass": use suspect or invalid`) {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
