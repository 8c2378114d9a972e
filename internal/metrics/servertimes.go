package metrics

import (
	"cmp"
	"math"
	"slices"

	"github.com/llmbench/llmbench/internal/record"
)

// Where a request's time went. A server that gives per-request timings
// (--server-timings) says how long the request waited in its queue, how
// long its prefill took and how long it decoded; the client knows when the
// request was due, when it went out, when it was fully sent and when the
// first token arrived. Together they split the time from due to first
// token into parts that add up to it exactly:
//
//	schedule lateness    due → handed to the transport (the client's delay)
//	connect and send     handed over → request fully written
//	server queue         the server's account
//	server prefill       the server's account
//	delivery             the rest: the first token's way back, through the
//	                     network and the client's reading of it
//
// The server's clock starts after the request reached it and stops before
// the token left it, so its time to first token fits inside the client's
// TTFT less the send; where the two overlap (a server that starts its
// clock before the client's write returns) the overlap is counted as
// send, so no part is negative. A server whose account is longer than
// the client's own time (its TTFT beyond the client's TTFT, its whole
// time beyond the request latency) is impossible: a clock or attribution
// error. Such a record gets server_timing_conflict = 1, keeps the server's
// values in its own row, and is left out of every statistic of them.

// serverTimes sets the server-timing metrics of a successful record.
func serverTimes(r *record.Record, v *Values) {
	st := r.ServerTimings
	if st == nil {
		return
	}
	v.V[ServerQueueTime] = st.Queue
	v.V[ServerPrefillTime] = st.Prefill
	v.V[ServerDecodeTime] = st.Decode
	serverTTFT := st.Queue + st.Prefill // NaN unless both are known
	v.V[ServerTimeToFirstToken] = serverTTFT
	serverAll := st.Total
	if math.IsNaN(serverAll) {
		serverAll = serverTTFT + st.Decode
	}
	ttft := v.V[TimeToFirstToken]
	conflict := serverTTFT > ttft+timingSlackMs || serverAll > v.V[RequestLatency]+timingSlackMs
	if conflict {
		v.V[ServerTimingConflict] = 1
		return
	}
	v.V[ServerTimingConflict] = 0
	if math.IsNaN(ttft) || math.IsNaN(serverTTFT) || r.Trace.WroteRequest == 0 {
		return
	}
	rest := max(ttft-serverTTFT, 0) // within timingSlackMs of 0 when negative
	send := min(ms(r.Trace.WroteRequest-r.StartPerf), rest)
	v.V[RequestSendTime] = send
	v.V[TTFTDelivery] = rest - send
}

// timingSlackMs is how far a server's time may exceed the client's before
// it counts as a conflict: a microsecond, the rounding of servers that
// print milliseconds to three decimals.
const timingSlackMs = 0.001

// serverPart reports whether id is one of a server's values, which a
// record in conflict keeps out of the statistics.
func serverPart(id ID) bool {
	switch id {
	case ServerQueueTime, ServerPrefillTime, ServerTimeToFirstToken, ServerDecodeTime, RequestSendTime, TTFTDelivery:
		return true
	}
	return false
}

// The parts of a breakdown, in the order a request lives them.
var breakdownParts = [...]string{"schedule_lateness", "connect_and_send", "server_queue", "server_prefill", "delivery"}

// breakdownRow is one record's parts (ms) and their total.
type breakdownRow struct {
	total float64
	parts [len(breakdownParts)]float32
}

// breakdownRowOf returns a record's row, if it has every part.
func breakdownRowOf(v *Values) (breakdownRow, bool) {
	lateness := v.V[ScheduleLateness]
	if math.IsNaN(lateness) {
		lateness = 0 // no due instant: the request went out when made
	}
	parts := [...]float64{max(lateness, 0), v.V[RequestSendTime], v.V[ServerQueueTime], v.V[ServerPrefillTime], v.V[TTFTDelivery]}
	var row breakdownRow
	for i, p := range parts {
		if math.IsNaN(p) {
			return breakdownRow{}, false
		}
		row.parts[i] = float32(p)
		row.total += p
	}
	return row, true
}

// Breakdown is where the time from due to first token went, for the
// typical request and for the slowest.
type Breakdown struct {
	// Records is how many records had every part; Conflicts how many had
	// a server account longer than the client's own time (left out).
	Records   int `json:"records"`
	Conflicts int `json:"conflicts"`
	// Rejected is how many records' servers sent timing values that
	// cannot be times (negative, not numbers, absurdly large): left out,
	// not guessed.
	Rejected int             `json:"records_with_rejected_values"`
	Bands    []BreakdownBand `json:"bands"`
}

// BreakdownBand is the mean of each part over the records whose time from
// due to first token ranks in [FromPct, ToPct] percent.
type BreakdownBand struct {
	Band    string          `json:"band"`
	FromPct float64         `json:"from_percentile"`
	ToPct   float64         `json:"to_percentile"`
	Records int             `json:"records"`
	TotalMs float64         `json:"total_ms"`
	Parts   []BreakdownPart `json:"parts"`
	// Dominant is the part with the largest share.
	Dominant string `json:"dominant"`
}

// BreakdownPart is one part's mean and its share of the band's total.
type BreakdownPart struct {
	Part  string  `json:"part"`
	Ms    float64 `json:"ms"`
	Share float64 `json:"share"`
}

// The bands reported: the typical request (ranks 45–55 %) and the tail at
// p99 (the slowest 1 %); each has at least one record.
var breakdownBands = []struct {
	name     string
	from, to float64
}{{"p50", 45, 55}, {"p99", 99, 100}}

// breakdown computes the bands of rows (sorting them).
func breakdown(rows []breakdownRow, conflicts, rejected int) *Breakdown {
	if len(rows) == 0 && conflicts == 0 && rejected == 0 {
		return nil
	}
	b := &Breakdown{Records: len(rows), Conflicts: conflicts, Rejected: rejected}
	if len(rows) == 0 {
		return b
	}
	slices.SortFunc(rows, func(x, y breakdownRow) int { return cmp.Compare(x.total, y.total) })
	n := len(rows)
	for _, band := range breakdownBands {
		// Ranks [from·n, to·n), rounded away from float noise (0.55·100
		// is 55.000000000000007).
		lo := min(int(math.Floor(band.from*float64(n)/100+1e-9)), n-1)
		hi := max(int(math.Ceil(band.to*float64(n)/100-1e-9)), lo+1)
		hi = min(hi, n)
		var sums [len(breakdownParts)]float64
		total := 0.0
		for _, r := range rows[lo:hi] {
			for i, p := range r.parts {
				sums[i] += float64(p)
			}
			total += r.total
		}
		k := float64(hi - lo)
		bb := BreakdownBand{Band: band.name, FromPct: band.from, ToPct: band.to, Records: hi - lo, TotalMs: total / k}
		best := -1.0
		for i, name := range breakdownParts {
			p := BreakdownPart{Part: name, Ms: sums[i] / k}
			if bb.TotalMs > 0 {
				p.Share = p.Ms / bb.TotalMs
			}
			if p.Ms > best {
				best, bb.Dominant = p.Ms, name
			}
			bb.Parts = append(bb.Parts, p)
		}
		b.Bands = append(b.Bands, bb)
	}
	return b
}
