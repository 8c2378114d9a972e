package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// seen is one request as the server received it.
type seen struct {
	correlation string
	requestID   string
	auth        string
	arrived     time.Time
	ended       time.Time
	body        struct {
		Model    string `json:"model"`
		Prompt   string `json:"prompt"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		MaxTokens int `json:"max_completion_tokens"`
	}
	answer string
}

// captureServer is the built-in server behind a recorder of every request
// it receives and, for non-streaming answers, what it answered.
type captureServer struct {
	mu   sync.Mutex
	reqs []*seen
	url  string
}

func newCaptureServer(t *testing.T, cfg mockserver.Config) *captureServer {
	t.Helper()
	tok, err := tokenizer.O200k()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Language = dataset.NewCorpus(tok)
	srv, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &captureServer{}
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		s := &seen{arrived: time.Now(), correlation: r.Header.Get("X-Correlation-ID"), requestID: r.Header.Get("X-Request-ID"), auth: r.Header.Get("Authorization")}
		raw, _ := readAll(r)
		_ = json.Unmarshal(raw, &s.body)
		r.Body = readCloser{bytes.NewReader(raw)}
		rec := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		s.ended = time.Now()
		var resp struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(rec.buf.Bytes(), &resp) == nil && len(resp.Choices) > 0 {
			s.answer = resp.Choices[0].Message.Content
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, s)
		c.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	c.url = ts.URL
	return c
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// profileFor is a run against url with the builtin tokenizer, its
// artifacts in a temporary directory, adjusted by args (command-line
// flags, as a user gives them).
func profileFor(t *testing.T, url string, args ...string) config.Profile {
	t.Helper()
	p := config.Default()
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	config.BindFlags(fs, &p)
	if err := fs.Parse(append([]string{"-m", "m", "--tokenizer", "builtin", "--url", url, "--artifact-dir", t.TempDir()}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordLine is a JSONL record's fields these tests read.
type recordLine struct {
	Metadata struct {
		ConversationID string `json:"conversation_id"`
		TurnIndex      int    `json:"turn_index"`
		CorrelationID  string `json:"x_correlation_id"`
		RequestID      string `json:"x_request_id"`
		SessionNum     int    `json:"session_num"`
		CreditIssuedNs int64  `json:"credit_issued_ns"`
		WasCancelled   bool   `json:"was_cancelled"`
		Phase          string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func readRecords(t *testing.T, dir string) []recordLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recordLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l recordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

func (l recordLine) number(t *testing.T, tag string) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal(l.Metrics[tag].Value, &v); err != nil {
		t.Fatalf("metric %s: %s", tag, l.Metrics[tag].Value)
	}
	return v
}

// counterSeries is a counter's series in the server-metrics JSON export.
type counterSeries struct {
	Endpoint string            `json:"endpoint_url"`
	Labels   map[string]string `json:"labels"`
	Stats    struct {
		Total float64 `json:"total"`
	} `json:"stats"`
}

func readCounter(t *testing.T, dir, name string) []counterSeries {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "server_metrics_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metrics map[string]struct {
			Series []counterSeries `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	m, ok := doc.Metrics[name]
	if !ok {
		t.Fatalf("no %s in the server metrics export", name)
	}
	return m.Series
}

// counterTotal is a counter's increase in the server-metrics JSON export,
// summed over its series (optionally only those with a label value).
func counterTotal(t *testing.T, dir, name, label, value string) float64 {
	t.Helper()
	sum := 0.0
	for _, s := range readCounter(t, dir, name) {
		if label == "" || s.Labels[label] == value {
			sum += s.Stats.Total
		}
	}
	return sum
}

// TestMultiTurnSessions: synthetic conversations of 3 turns, 2 at a time.
// Each later turn carries the earlier turns and the server's own answers,
// goes out only after the previous answer plus its delay, and the records
// have the turn order and the growing ISL (50, 50+50+8, …) exactly; the
// server-metrics export shows the prefix cache hit by the shared history.
func TestMultiTurnSessions(t *testing.T) {
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = 5*time.Millisecond, time.Millisecond
	srv := newCaptureServer(t, mock)
	p := profileFor(t, srv.url, "--conversation-num", "6", "--conversation-turn-mean", "3", "--conversation-turn-delay-mean", "40",
		"--concurrency", "2", "--isl", "50", "--osl", "8", "--random-seed", "3", "--server-metrics-formats", "json")
	res, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := tokenizer.O200k()
	sessions := map[string][]*seen{}
	for _, s := range srv.reqs {
		sessions[s.correlation] = append(sessions[s.correlation], s)
	}
	if len(srv.reqs) != 18 || len(sessions) != 6 {
		t.Fatalf("%d requests in %d sessions, want 18 in 6", len(srv.reqs), len(sessions))
	}
	type span struct{ from, to time.Time }
	var spans []span
	for id, turns := range sessions {
		sort.Slice(turns, func(i, j int) bool { return turns[i].arrived.Before(turns[j].arrived) })
		if len(turns) != 3 {
			t.Fatalf("session %s: %d turns", id, len(turns))
		}
		for k, s := range turns {
			msgs := s.body.Messages
			if len(msgs) != 2*k+1 {
				t.Fatalf("session %s turn %d: %d messages, want %d", id, k, len(msgs), 2*k+1)
			}
			if n := tok.Count(msgs[2*k].Content); msgs[2*k].Role != "user" || n != 50 {
				t.Fatalf("turn %d's new message: %s of %d tokens, want user of 50", k, msgs[2*k].Role, n)
			}
			for j := range k {
				prev := turns[j]
				if msgs[2*j].Content != prev.body.Messages[2*j].Content || msgs[2*j+1].Role != "assistant" || msgs[2*j+1].Content != prev.answer || prev.answer == "" {
					t.Fatalf("session %s turn %d: message %d/%d is not turn %d's prompt and the server's answer to it", id, k, 2*j, 2*j+1, j)
				}
			}
			if k > 0 {
				if gap := s.arrived.Sub(turns[k-1].ended); gap < 40*time.Millisecond {
					t.Fatalf("session %s turn %d sent %v after turn %d's answer, want at least the 40 ms delay", id, k, gap, k-1)
				}
			}
		}
		spans = append(spans, span{turns[0].arrived, turns[2].ended})
	}
	// Concurrency 2 counts sessions: never 3 open at once.
	for _, a := range spans {
		open := 0
		for _, b := range spans {
			if !b.from.After(a.from) && b.to.After(a.from) {
				open++
			}
		}
		if open > 2 {
			t.Fatalf("%d sessions open at once, want at most 2", open)
		}
	}
	recs := readRecords(t, res.ArtifactDir)
	if len(recs) != 18 {
		t.Fatalf("%d records, want 18", len(recs))
	}
	turnsOf := map[string][]int{}
	for _, r := range recs {
		m := r.Metadata
		turnsOf[m.CorrelationID] = append(turnsOf[m.CorrelationID], m.TurnIndex)
		if want := float64(50 + 58*m.TurnIndex); r.number(t, "input_sequence_length") != want {
			t.Fatalf("turn %d: ISL %v, want %v (history included)", m.TurnIndex, r.number(t, "input_sequence_length"), want)
		}
		if !strings.HasPrefix(m.ConversationID, "session_") {
			t.Fatalf("conversation id %q", m.ConversationID)
		}
	}
	for id, ts := range turnsOf {
		sort.Ints(ts)
		if len(ts) != 3 || ts[0] != 0 || ts[2] != 2 {
			t.Fatalf("records of %s: turns %v", id, ts)
		}
	}
	if hits := counterTotal(t, res.ArtifactDir, "vllm:prefix_cache_hits", "", ""); hits < 12*50 {
		t.Fatalf("prefix cache hits %v tokens, want the repeated history of 12 later turns (at least 600)", hits)
	}
}

// TestTraceReplay replays the example Mooncake trace: every request goes
// out at its timestamp (due exactly there, sent within 30 ms on a quiet
// machine), with exactly its input_length under the tokenizer, and rows
// naming the same first hash block share its text byte for byte; the
// offsets keep only the window asked for.
func TestTraceReplay(t *testing.T) {
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = 5*time.Millisecond, time.Millisecond
	trace := filepath.Join("..", "..", "examples", "mooncake_trace.jsonl")
	tok, _ := tokenizer.O200k()
	stamps := []time.Duration{0, 105, 274, 600, 900, 1200}
	lengths := []int{1200, 1800, 1300, 700, tok.Count("Summarise the trace so far."), 1600}
	reqs := replayOnSchedule(t, mock, stamps, "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--no-server-metrics")
	for i, s := range reqs {
		if n := tok.Count(s.body.Messages[0].Content); n != lengths[i] {
			t.Errorf("row %d: %d prompt tokens, want %d", i+1, n, lengths[i])
		}
		if s.body.MaxTokens == 0 {
			t.Errorf("row %d: no output length sent", i+1)
		}
	}
	prompt := func(i int) string { return reqs[i].body.Messages[0].Content }
	for _, i := range []int{1, 3, 5} {
		common := 0
		for common < len(prompt(0)) && common < len(prompt(i)) && prompt(0)[common] == prompt(i)[common] {
			common++
		}
		if n := tok.Count(prompt(0)[:common]); n < 511 {
			t.Errorf("rows 1 and %d share %d tokens, want block 0's 512", i+1, n)
		}
	}

	// The window 200–1000 ms keeps the rows at 274, 600 and 900, sent
	// 74, 400 and 700 ms after profiling starts.
	reqs = replayOnSchedule(t, mock, []time.Duration{74, 400, 700}, "--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--no-server-metrics",
		"--fixed-schedule-start-offset", "200", "--fixed-schedule-end-offset", "1000")
	for i, s := range reqs {
		if n := tok.Count(s.body.Messages[0].Content); n != []int{1300, 700, lengths[4]}[i] {
			t.Errorf("windowed row %d: %d tokens", i+1, n)
		}
	}
}

// replayOnSchedule replays the trace args name against a fresh capturing
// server and checks its schedule (checkSchedule), at most three times: a
// loaded machine can hold one replay's sends back past the 30 ms
// tolerance, not three in a row, while a scheduler that sends late, or a
// due time that is wrong, fails every attempt. It returns the requests of
// the replay that passed, in arrival order.
func replayOnSchedule(t *testing.T, mock mockserver.Config, offsets []time.Duration, args ...string) []*seen {
	t.Helper()
	for attempt := 1; ; attempt++ {
		srv := newCaptureServer(t, mock)
		p := profileFor(t, srv.url, args...)
		if _, err := Run(context.Background(), Options{Profile: p, Version: "test"}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.reqs
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].arrived.Before(reqs[j].arrived) })
		late := checkSchedule(t, readRecords(t, p.Output.ArtifactDir), reqs, offsets)
		if len(late) == 0 {
			return reqs
		}
		if attempt == 3 {
			t.Fatalf("late in three replays in a row: %v", late)
		}
		t.Logf("replay %d: %v; replaying again (a loaded machine?)", attempt, late)
	}
}

// checkSchedule: request i was due (credit_issued_ns) exactly offsets[i]
// ms after the first request's due time plus offsets[0] (the schedule is
// absolute) and never reached the server before it (both fail the test at
// once); it returns the requests that reached the server more than 30 ms
// after their due time (the stated tolerance, on a machine not loaded to
// saturation).
func checkSchedule(t *testing.T, recs []recordLine, reqs []*seen, offsets []time.Duration) (late []string) {
	t.Helper()
	due := map[string]int64{}
	for _, r := range recs {
		due[r.Metadata.RequestID] = r.Metadata.CreditIssuedNs
	}
	if len(reqs) != len(offsets) || len(recs) != len(offsets) {
		t.Fatalf("%d requests, %d records, want %d", len(reqs), len(recs), len(offsets))
	}
	start := due[reqs[0].requestID] - int64(offsets[0]*time.Millisecond)
	for i, s := range reqs {
		d, ok := due[s.requestID]
		if !ok {
			t.Fatalf("request %d has no record", i+1)
		}
		if got := time.Duration(d - start); got < offsets[i]*time.Millisecond-time.Microsecond || got > offsets[i]*time.Millisecond+time.Microsecond {
			t.Fatalf("request %d due %v into the schedule, want %v ms", i+1, got, offsets[i])
		}
		switch lateness := time.Duration(s.arrived.UnixNano() - d); {
		case lateness < -time.Millisecond:
			t.Fatalf("request %d reached the server %v before it was due", i+1, -lateness)
		case lateness > 30*time.Millisecond:
			late = append(late, fmt.Sprintf("request %d reached the server %v after it was due", i+1, lateness))
		}
	}
	return late
}

// TestRequestCancellation: about half the requests are cancelled 50 ms
// after they were sent (a binomial 20 ± 3.2 of 40: 10 to 30 allowed),
// each recorded as AIPerf records it (was_cancelled, code 499), kept out
// of the latency statistics, and counted by the server as aborts.
func TestRequestCancellation(t *testing.T) {
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = 5*time.Millisecond, 5*time.Millisecond
	srv := newCaptureServer(t, mock)
	p := profileFor(t, srv.url, "--request-count", "40", "--concurrency", "8", "--osl", "40", "--isl", "20", "--streaming",
		"--request-cancellation-rate", "50", "--request-cancellation-delay", "0.05", "--random-seed", "5", "--server-metrics-formats", "json")
	res, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for _, r := range readRecords(t, res.ArtifactDir) {
		if r.Metadata.WasCancelled {
			cancelled++
			if r.Error == nil || r.Error.Code != 499 {
				t.Fatalf("a cancelled record without code 499: %+v", r.Error)
			}
		} else if r.Error != nil {
			t.Fatalf("an error other than the cancellations: %+v", r.Error)
		}
	}
	if cancelled < 10 || cancelled > 30 {
		t.Fatalf("%d of 40 cancelled, want about 20", cancelled)
	}
	latency, ok := res.Summary.Results.Get("request_latency")
	if !ok || latency.Dist == nil || latency.Dist.Count != 40-cancelled {
		t.Fatalf("request_latency over %+v, want the %d requests not cancelled", latency.Dist, 40-cancelled)
	}
	if aborts := counterTotal(t, res.ArtifactDir, "vllm:request_success", "finished_reason", "abort"); int(aborts) != cancelled {
		t.Fatalf("the server counted %v aborts, want %d", aborts, cancelled)
	}
}

// TestSeveralURLs: with two --url values, request n goes to server n mod 2
// (AIPerf's round_robin, per request), with the second URL's own
// credentials; both servers' /metrics are scraped, and each one's success
// counter in the export is exactly what it was sent.
func TestSeveralURLs(t *testing.T) {
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = 2*time.Millisecond, time.Millisecond
	a, b := newCaptureServer(t, mock), newCaptureServer(t, mock)
	withUser := strings.Replace(b.url, "http://", "http://bob:pw-9876@", 1)
	p := profileFor(t, a.url, "--url", withUser, "--request-count", "21", "--concurrency", "3", "--osl", "4", "--isl", "20",
		"--random-seed", "5", "--server-metrics-formats", "json")
	res, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.reqs) != 11 || len(b.reqs) != 10 {
		t.Fatalf("servers received %d and %d requests, want 11 and 10", len(a.reqs), len(b.reqs))
	}
	server := map[string]string{}
	for name, s := range map[string]*captureServer{"a": a, "b": b} {
		for _, r := range s.reqs {
			server[r.requestID] = name
		}
	}
	for _, r := range b.reqs {
		if r.auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("bob:pw-9876")) {
			t.Fatalf("server b got Authorization %q, want the second URL's credentials", r.auth)
		}
	}
	for _, r := range a.reqs {
		if r.auth != "" {
			t.Fatalf("server a got Authorization %q, want none (its URL has no credentials)", r.auth)
		}
	}
	recs := readRecords(t, res.ArtifactDir)
	if len(recs) != 21 {
		t.Fatalf("%d records, want 21", len(recs))
	}
	for _, r := range recs {
		want := "ab"[r.Metadata.SessionNum%2 : r.Metadata.SessionNum%2+1]
		if got := server[r.Metadata.RequestID]; got != want {
			t.Fatalf("request %d went to server %q, want %q (round robin)", r.Metadata.SessionNum, got, want)
		}
	}
	per := counterByEndpoint(t, res.ArtifactDir, "vllm:request_success")
	if len(per) != 2 || per[a.url+"/metrics"] != 11 || per[b.url+"/metrics"] != 10 {
		t.Fatalf("vllm:request_success by endpoint %v, want %s/metrics 11 and %s/metrics 10", per, a.url, b.url)
	}
	raw, _ := os.ReadFile(filepath.Join(res.ArtifactDir, "server_metrics_export.json"))
	if strings.Contains(string(raw), "pw-9876") {
		t.Fatal("the server metrics export holds the second URL's password")
	}
}

// counterByEndpoint is a counter's increase in the server-metrics JSON
// export, by endpoint URL.
func counterByEndpoint(t *testing.T, dir, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range readCounter(t, dir, name) {
		out[s.Endpoint] += s.Stats.Total
	}
	return out
}

// TestTraceBuildsOnlyWhatIsSent: a trace's prompts are built after its
// offsets leave rows out, and only if the machine can hold them. Beyond
// its two small rows, this trace has 100,000 rows of 2,000,000 tokens
// (4.6 TB of prompts): replaying its first 500 ms sends the two, building
// nothing else; replaying all of it is refused before anything is built.
func TestTraceBuildsOnlyWhatIsSent(t *testing.T) {
	if config.ReadMachine().AvailableMemory == 0 {
		t.Skip("the available memory is unknown here")
	}
	var b strings.Builder
	b.WriteString(`{"timestamp": 0, "input_length": 40, "output_length": 4}` + "\n")
	b.WriteString(`{"timestamp": 100, "input_length": 60, "output_length": 4}` + "\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 2000000, "output_length": 4}`+"\n", 10_000+i)
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = time.Millisecond, time.Millisecond
	srv := newCaptureServer(t, mock)
	args := []string{"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--no-server-metrics"}
	p := profileFor(t, srv.url, append(args, "--fixed-schedule-end-offset", "500")...)
	if _, err := Run(context.Background(), Options{Profile: p, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if recs := readRecords(t, p.Output.ArtifactDir); len(recs) != 2 {
		t.Fatalf("%d requests sent, want the window's 2", len(recs))
	}
	p = profileFor(t, srv.url, args...)
	_, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	var input *InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), "would need about") || !strings.Contains(err.Error(), "--fixed-schedule-end-offset") {
		t.Fatalf("the whole trace: %v; want an input error about its memory naming the offsets", err)
	}
}
