package export

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// TestRawWriter writes three records with --export-level raw: a stream
// (an event with a name, data events, [DONE]), a response read whole, and
// a failed multipart request, and reads the file back as AIPerf's
// RawRecordInfo lines. The payload's secret is redacted; every raw
// exchange is dropped from its record once written.
func TestRawWriter(t *testing.T) {
	dir := t.TempDir()
	clock := record.ClockAt(1_763_700_000_000_000_000)
	names := ProfileFiles("")
	rw, err := NewRecordWriter(dir, names.Records, clock)
	if err != nil {
		t.Fatal(err)
	}
	redact := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("sk-secret"), []byte("<redacted>")) }
	raw, err := NewRawWriter(dir, names.Raw, clock, redact)
	if err != nil {
		t.Fatal(err)
	}
	rw = rw.WithRaw(raw)
	var v metrics.Values
	for i := range v.V {
		v.V[i] = math.NaN()
	}
	recs := []*record.Record{
		{SessionNum: 0, XRequestID: "a", Phase: record.PhaseProfiling, Streaming: true, StartPerf: 1000, EndPerf: 9000,
			Raw: &record.RawExchange{Payload: []byte(`{"model":"m","api_key":"sk-secret","stream":true}`), Status: 200, Responses: []record.RawResponse{
				{Perf: 2000, Event: "message_start", Data: `{"type":"message_start"}`},
				{Perf: 3000, Data: `{"choices":[{"delta":{"content":"hi \"there\""}}]}`},
				{Perf: 4000, Data: "[DONE]"},
			}}},
		{SessionNum: 1, XRequestID: "b", Phase: record.PhaseWarmup, StartPerf: 5000, EndPerf: 7000,
			Raw: &record.RawExchange{Payload: []byte(`{"input":["x"]}`), Status: 200, Responses: []record.RawResponse{
				{Perf: 6500, Body: `{"data":[{"embedding":[0.5]}]}`, ContentType: "application/json", Whole: true},
			}}},
		{SessionNum: 2, XRequestID: "c", Phase: record.PhaseProfiling, StartPerf: 8000, EndPerf: 8500,
			Err: &record.Error{Code: 500, Type: "InternalServerError", Message: "boom"},
			Raw: &record.RawExchange{Payload: []byte("--b\r\nform\r\n--b--\r\n"), Status: 500, Responses: []record.RawResponse{{Perf: 8400, Body: "boom", Whole: true}}}},
	}
	for _, r := range recs {
		if err := rw.Write(r, &v); err != nil {
			t.Fatal(err)
		}
		if r.Raw != nil {
			t.Errorf("record %d keeps its raw exchange after it was written", r.SessionNum)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "profile_export_raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "sk-secret") {
		t.Errorf("the secret reached the raw file:\n%s", got)
	}
	type packet struct{ Name, Value string }
	type response struct {
		PerfNs      int64    `json:"perf_ns"`
		Packets     []packet `json:"packets"`
		Text        *string  `json:"text"`
		ContentType string   `json:"content_type"`
	}
	type metadata struct {
		XRequestID string `json:"x_request_id"`
		Phase      string `json:"benchmark_phase"`
		StartNs    int64  `json:"request_start_ns"`
	}
	type line struct {
		RawMetadata json.RawMessage `json:"metadata"`
		Metadata    metadata        `json:"-"`
		StartPerfNs int64           `json:"start_perf_ns"`
		Payload     json.RawMessage `json:"payload"`
		Status      int             `json:"status"`
		Responses   []response      `json:"responses"`
		Error       *record.Error   `json:"error"`
	}
	var lines []line
	for _, l := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
		var x line
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&x); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if err := json.Unmarshal(x.RawMetadata, &x.Metadata); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, x)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	s := lines[0]
	if s.Metadata.XRequestID != "a" || s.StartPerfNs != 1000 || s.Metadata.StartNs != clock.Wall(1000) || s.Status != 200 ||
		string(s.Payload) != `{"model":"m","api_key":"<redacted>","stream":true}` {
		t.Errorf("stream line %+v payload %s", s, s.Payload)
	}
	wantPackets := [][]packet{
		{{"event", "message_start"}, {"data", `{"type":"message_start"}`}},
		{{"data", `{"choices":[{"delta":{"content":"hi \"there\""}}]}`}},
		{{"data", "[DONE]"}},
	}
	for i, resp := range s.Responses {
		if resp.PerfNs != int64(2000+1000*i) || !reflect.DeepEqual(resp.Packets, wantPackets[i]) || resp.Text != nil {
			t.Errorf("stream response %d: %+v, want packets %v", i, resp, wantPackets[i])
		}
	}
	w := lines[1]
	if w.Metadata.Phase != "warmup" || len(w.Responses) != 1 || w.Responses[0].Text == nil || *w.Responses[0].Text != `{"data":[{"embedding":[0.5]}]}` ||
		w.Responses[0].ContentType != "application/json" || w.Responses[0].Packets != nil {
		t.Errorf("whole line %+v", w)
	}
	f := lines[2]
	var form string
	if err := json.Unmarshal(f.Payload, &form); err != nil || form != "--b\r\nform\r\n--b--\r\n" || f.Status != 500 || f.Error == nil || f.Error.Code != 500 {
		t.Errorf("failed multipart line %+v (payload %s: %v)", f, f.Payload, err)
	}
}
