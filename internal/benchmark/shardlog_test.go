package benchmark

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// TestShardRecordsRoundTrip: what a shard keeps reads back bit for bit
// (NaN for absent metrics, the error, usage, flags), texts left out; a
// file cut short gives its whole records and says so.
func TestShardRecordsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	log, err := newShardLog(dir, ShardHeader{Version: "v", PlanHash: "abc", Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	var want []metrics.Values
	for i := range 3 {
		v := metrics.Values{ICL: []float64{1.5, 2.25}, Good: i == 1, StartWall: 1e18 + int64(i), EndWall: 2e18}
		for k := range v.V {
			v.V[k] = math.NaN()
		}
		v.V[metrics.TimeToFirstToken] = 12.345678901234567 * float64(i+1)
		r := &record.Record{SessionNum: i, Phase: record.PhaseProfiling, OutputText: "long text", Usage: &record.Usage{PromptTokens: 7}}
		if i == 2 {
			r.Err = &record.Error{Type: "HTTPError", Code: 500, Message: "boom"}
		}
		log.add(r, &v)
		want = append(want, v)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	var got []metrics.Values
	var recs []*record.Record
	n, err := ShardRecords(dir, func(h ShardHeader) error {
		if h.PlanHash != "abc" || h.Profile.Endpoint.ModelNames[0] != "m" {
			t.Errorf("header %+v", h)
		}
		return nil
	}, func(r *record.Record, v *metrics.Values) { recs, got = append(recs, r), append(got, *v) })
	if err != nil || n != 3 {
		t.Fatalf("read %d: %v", n, err)
	}
	for i := range want {
		for k := range want[i].V {
			if math.Float64bits(got[i].V[k]) != math.Float64bits(want[i].V[k]) {
				t.Fatalf("record %d metric %d: %v, want %v", i, k, got[i].V[k], want[i].V[k])
			}
		}
		got[i].V, want[i].V = [len(got[i].V)]float64{}, [len(want[i].V)]float64{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d values %+v, want %+v", i, got[i], want[i])
		}
		if recs[i].OutputText != "" || recs[i].SessionNum != i || recs[i].Usage.PromptTokens != 7 {
			t.Errorf("record %d: %+v", i, recs[i])
		}
	}
	if recs[2].Err == nil || recs[2].Err.Message != "boom" {
		t.Errorf("error lost: %+v", recs[2].Err)
	}

	// Cut the file in the middle of its last record.
	path := filepath.Join(dir, ShardRecordsFile)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	n, err = ShardRecords(dir, func(ShardHeader) error { return nil }, func(*record.Record, *metrics.Values) {})
	if n != 2 || err == nil {
		t.Errorf("a cut file: %d records, %v", n, err)
	}
}

// TestClockBound: the Date headers' seconds pin the server's clock
// against the client's: hand-computed intervals, and a contradiction
// (a server clock that jumped) gives no bound.
func TestClockBound(t *testing.T) {
	at := func(startWall, ttfb, date int64) (*record.Record, *metrics.Values) {
		return &record.Record{StartPerf: 100, Trace: record.HTTPTrace{FirstByte: 100 + ttfb}, ServerDate: date}, &metrics.Values{StartWall: startWall}
	}
	var b clockBound
	// Sent at 9.95 s, first byte at 10.05 s, stamped second 10:
	// offset in [10 - 10.05, 11 - 9.95] = [-0.05, 1.05] s.
	b.add(at(9_950_000_000, 100_000_000, 10))
	// Sent at 10.97 s, first byte 11.02 s, stamped 10: [-1.02, 0.03] s.
	b.add(at(10_970_000_000, 50_000_000, 10))
	// No Date header: ignored.
	b.add(at(5, 1, 0))
	got := b.bound()
	if got == nil || got.LowNs != -50_000_000 || got.HighNs != 30_000_000 || got.Samples != 2 {
		t.Fatalf("bound %+v, want [-50, 30] ms from 2 responses", got)
	}
	// Stamped second 20 a second later: the server's clock jumped.
	b.add(at(12_000_000_000, 10_000_000, 20))
	if got := b.bound(); got != nil {
		t.Errorf("contradicting Date headers gave %+v", got)
	}
	var none clockBound
	if none.bound() != nil {
		t.Error("no response, yet a bound")
	}
}

// BenchmarkShardLogAdd is a shard's cost per record kept for the merge
// (under the collector's lock).
func BenchmarkShardLogAdd(b *testing.B) {
	p := config.Default()
	log, err := newShardLog(b.TempDir(), ShardHeader{Profile: p})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	var v metrics.Values
	for k := range v.V {
		v.V[k] = float64(k) * 1.5
	}
	v.ICL = make([]float64, 64)
	r := &record.Record{Phase: record.PhaseProfiling, OutputText: "x", Usage: &record.Usage{PromptTokens: 100, CompletionTokens: 64}, ServerDate: 1, StartPerf: 1, Trace: record.HTTPTrace{FirstByte: 5}}
	b.ReportAllocs()
	for b.Loop() {
		log.add(r, &v)
	}
	b.StopTimer()
	_ = log.w.Flush()
	st, _ := log.f.Stat()
	b.ReportMetric(float64(st.Size())/float64(b.N), "bytes/record")
}
