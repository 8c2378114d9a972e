package metrics

import (
	"cmp"
	"encoding/binary"
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

// breakdownRow is one record's parts (ms) and their total; idx is its
// number, which orders rows of equal totals.
type breakdownRow struct {
	total float64
	parts [len(breakdownParts)]float32
	idx   int64
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

// compareRows orders rows by total, then number.
func compareRows(x, y *breakdownRow) int {
	if c := cmp.Compare(x.total, y.total); c != 0 {
		return c
	}
	return cmp.Compare(x.idx, y.idx)
}

// rowBytes is a row's encoding: its total, its parts and its number.
const rowBytes = 8 + 4*len(breakdownParts) + 8

func appendRow(dst []byte, r *breakdownRow) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.total))
	for _, p := range r.parts {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(p))
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(r.idx))
}

func decodeRows(b []byte, out []breakdownRow) []breakdownRow {
	for len(b) >= rowBytes {
		var r breakdownRow
		r.total = math.Float64frombits(binary.LittleEndian.Uint64(b))
		for i := range r.parts {
			r.parts[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[8+4*i:]))
		}
		r.idx = int64(binary.LittleEndian.Uint64(b[8+4*len(breakdownParts):]))
		out = append(out, r)
		b = b[rowBytes:]
	}
	return out
}

// rowList keeps the rows compactly (spill.go).
type rowList struct{ l blockList }

func (rl *rowList) add(r breakdownRow) {
	r.idx = rl.l.n
	rl.l.room(rowBytes)
	rl.l.cur = appendRow(rl.l.cur, &r)
	rl.l.added(rowBytes)
}

// each calls fn with the rows in the order of list l, a block at a time.
func eachRow(l *blockList, fn func(rows []breakdownRow)) {
	r := blockReader{l: l}
	var rows []breakdownRow
	for i := range l.numBlocks() {
		b, _, _ := r.block(i)
		rows = decodeRows(b, rows[:0])
		fn(rows)
	}
}

// sortedRows calls fn with the rows in ascending order (compareRows), in
// batches: sorted in memory when they fit the working memory, else in
// runs merged.
func (rl *rowList) sortedRows(sp *Spill, fn func(rows []breakdownRow)) {
	n := int(rl.l.n)
	limit := workLimit(sp, 2*rowBytes)
	if n <= limit {
		rows := make([]breakdownRow, 0, n)
		eachRow(&rl.l, func(rs []breakdownRow) { rows = append(rows, rs...) })
		slices.SortFunc(rows, func(x, y breakdownRow) int { return compareRows(&x, &y) })
		fn(rows)
		return
	}
	file := sp.tempFile()
	defer sp.release(file)
	block := max(runBlock(sp, n/limit+1), 4*rowBytes)
	var runs []*blockList
	chunk := make([]breakdownRow, 0, limit)
	flush := func() {
		slices.SortFunc(chunk, func(x, y breakdownRow) int { return compareRows(&x, &y) })
		run := &blockList{sp: sp, file: file, disk: true, fixed: block}
		for i := range chunk {
			run.room(rowBytes)
			run.cur = appendRow(run.cur, &chunk[i])
			run.added(rowBytes)
		}
		run.finish()
		runs = append(runs, run)
		chunk = chunk[:0]
	}
	eachRow(&rl.l, func(rs []breakdownRow) {
		for _, r := range rs {
			if len(chunk) == limit {
				flush()
			}
			chunk = append(chunk, r)
		}
	})
	flush()
	chunk = nil
	mergeRuns(runs, func(b []byte, _ int, dst []breakdownRow) []breakdownRow { return decodeRows(b, dst) },
		func(x, y *breakdownRow) bool { return compareRows(x, y) < 0 }, 1024, fn)
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
	for i := range rows {
		rows[i].idx = int64(i)
	}
	slices.SortFunc(rows, func(x, y breakdownRow) int { return compareRows(&x, &y) })
	return breakdownSorted(len(rows), func(fn func([]breakdownRow)) { fn(rows) }, conflicts, rejected)
}

// breakdownSorted computes the bands of n rows that each calls fn with,
// in ascending order (compareRows), in batches.
func breakdownSorted(n int, each func(fn func([]breakdownRow)), conflicts, rejected int) *Breakdown {
	if n == 0 && conflicts == 0 && rejected == 0 {
		return nil
	}
	b := &Breakdown{Records: n, Conflicts: conflicts, Rejected: rejected}
	if n == 0 {
		return b
	}
	type band struct {
		lo, hi int
		sums   [len(breakdownParts)]float64
		total  float64
	}
	bands := make([]band, len(breakdownBands))
	for i, bb := range breakdownBands {
		// Ranks [from·n, to·n), rounded away from float noise (0.55·100
		// is 55.000000000000007).
		lo := min(int(math.Floor(bb.from*float64(n)/100+1e-9)), n-1)
		hi := max(int(math.Ceil(bb.to*float64(n)/100-1e-9)), lo+1)
		bands[i].lo, bands[i].hi = lo, min(hi, n)
	}
	rank := 0
	each(func(rows []breakdownRow) {
		for _, r := range rows {
			for i := range bands {
				if bd := &bands[i]; rank >= bd.lo && rank < bd.hi {
					for k, p := range r.parts {
						bd.sums[k] += float64(p)
					}
					bd.total += r.total
				}
			}
			rank++
		}
	})
	for i, band := range breakdownBands {
		bd := &bands[i]
		k := float64(bd.hi - bd.lo)
		bb := BreakdownBand{Band: band.name, FromPct: band.from, ToPct: band.to, Records: bd.hi - bd.lo, TotalMs: bd.total / k}
		best := -1.0
		for i, name := range breakdownParts {
			p := BreakdownPart{Part: name, Ms: bd.sums[i] / k}
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
