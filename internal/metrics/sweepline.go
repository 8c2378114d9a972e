package metrics

import (
	"encoding/binary"
	"math"
	"sort"
)

// The time-weighted families of AIPerf 0.12 (aiperf-0.12-features f3):
// step functions of time built by a sweep line over every record of the
// phase, failed ones included, and their statistics over a window. Times
// are int64 wall-clock ns (AIPerf holds them as float64 epoch ns, whose
// 256 ns steps llmbench does not copy); rates are tokens per ns, ×1e9 on
// export.

// Time-weighted metric definitions, in AIPerf's order.
var (
	DefEffectiveConcurrency             = Def{"effective_concurrency", "Effective Concurrency", "requests", TimeWeighted, Effective | NoIndividualRecords}
	DefEffectiveDecodeThroughput        = Def{"effective_decode_throughput", "Effective Decode Throughput", "tokens/sec", TimeWeighted, Effective | NoIndividualRecords | LargerIsBetter}
	DefEffectivePrefillThroughput       = Def{"effective_prefill_throughput", "Effective Prefill Throughput", "tokens/sec", TimeWeighted, Effective | NoIndividualRecords | LargerIsBetter}
	DefEffectiveDecodeConcurrency       = Def{"effective_decode_concurrency", "Effective Decode Concurrency", "requests", TimeWeighted, Effective | NoIndividualRecords}
	DefEffectivePrefillConcurrency      = Def{"effective_prefill_concurrency", "Effective Prefill Concurrency", "requests", TimeWeighted, Effective | NoIndividualRecords}
	DefEffectiveTotalThroughput         = Def{"effective_total_throughput", "Effective Total Throughput", "tokens/sec", TimeWeighted, Effective | NoIndividualRecords | LargerIsBetter}
	DefEffectiveDecodeThroughputPerUser = Def{"effective_decode_throughput_per_user", "Effective Decode Throughput Per User", "tokens/sec/user", TimeWeighted, Effective | NoIndividualRecords | LargerIsBetter}
	DefEffectivePrefillThroughputPerUsr = Def{"effective_prefill_throughput_per_user", "Effective Prefill Throughput Per User", "tokens/sec/user", TimeWeighted, Effective | NoIndividualRecords | LargerIsBetter}
	DefTokensInFlight                   = Def{"tokens_in_flight", "Tokens In Flight", "tokens", TimeWeighted, Effective | NoIndividualRecords}

	DefActiveDecodeThroughput        = Def{"active_decode_throughput", "Active Decode Throughput", "tokens/sec", TimeWeighted, Active | NoIndividualRecords | LargerIsBetter}
	DefActivePrefillThroughput       = Def{"active_prefill_throughput", "Active Prefill Throughput", "tokens/sec", TimeWeighted, Active | NoIndividualRecords | LargerIsBetter}
	DefActiveDecodeThroughputPerUser = Def{"active_decode_throughput_per_user", "Active Decode Throughput Per User", "tokens/sec/user", TimeWeighted, Active | NoIndividualRecords | LargerIsBetter}
	DefActivePrefillThroughputPerUsr = Def{"active_prefill_throughput_per_user", "Active Prefill Throughput Per User", "tokens/sec/user", TimeWeighted, Active | NoIndividualRecords | LargerIsBetter}
	DefActiveTotalThroughput         = Def{"active_total_throughput", "Active Total Throughput", "tokens/sec", TimeWeighted, Active | NoIndividualRecords | LargerIsBetter}
)

// noTime marks a record without a first token (no gen).
const noTime = math.MinInt64

// sweepRecord is what one record adds to the curves.
type sweepRecord struct {
	start, gen, end int64 // wall ns; gen = start + TTFT, or noTime
	// isl and osl are NaN when absent (a failed record); float32 holds
	// every count below 2^24 exactly.
	isl, osl float32
	// icl is how many inter-chunk gaps of this record sweep.icl holds.
	icl int32
}

// sweep accumulates the records for the time-weighted curves.
type sweep struct {
	// ins holds the records in the order added, compactly (sweepstore.go);
	// n counts them; lo and hi are the span of their starts and ends.
	ins    blockList
	insW   entryWriter
	n      int64
	lo, hi int64
	// sp, when set, bounds the memory the records and the statistics'
	// work hold (spill.go).
	sp *Spill
	// icl holds every record's inter-chunk gaps in ns, zigzag varints in
	// record order; iclN counts them. Beyond iclLimit gaps (or records)
	// they are dropped and the decode curves use request-level rates, as
	// AIPerf's do when its list backend keeps no per-record chunks.
	icl      []byte
	iclN     int
	iclLimit int
	iclOff   bool
	// noTokens: the API type makes or takes no text, so only the
	// concurrency curve has a meaning (Aggregator.ForTokens).
	noTokens bool
	// idx is what results derives from the records and keeps for the
	// next window (a time slice); add drops it.
	idx *sweepIndex
}

func (s *sweep) add(v *Values) {
	end := v.RequestEndWall
	if end == 0 {
		end = v.EndWall
	}
	r := sweepRecord{start: v.StartWall, gen: noTime, end: end,
		isl: float32(v.V[InputSequenceLength]), osl: float32(v.V[OutputSequenceLength])}
	if ttft := v.V[TimeToFirstToken]; !math.IsNaN(ttft) {
		// TTFT in ms is a whole number of ns divided by 1e6: this
		// rounding gives the ns back exactly (column.go).
		r.gen = v.StartWall + int64(math.Round(ttft*nsPerMs))
	}
	if !s.iclOff && s.n >= int64(s.iclLimit) {
		// The chunk curves' events would grow with the records.
		s.iclOff, s.icl = true, nil
	}
	if n := len(v.ICL); n > 0 && !s.iclOff {
		if s.iclN+n > s.iclLimit {
			s.iclOff, s.icl = true, nil // the records' icl counts are ignored from now on
		} else {
			for _, x := range v.ICL {
				s.icl = binary.AppendUvarint(s.icl, zigzag(int64(math.Round(x*nsPerMs))))
			}
			s.iclN += n
			r.icl = int32(n)
		}
	}
	if s.n == 0 {
		s.lo, s.hi = math.MaxInt64, math.MinInt64
		s.ins.sp, s.insW.l = s.sp, &s.ins
	}
	s.lo, s.hi = min(s.lo, r.start, r.end), max(s.hi, r.start, r.end)
	s.insW.add(&sweepEntry{r, s.n})
	s.n++
	s.idx = nil
}

// The curves are never held in full. Each is a merge of a few lists of
// events, every list the records in one of three orders (by start, by
// gen, by end: 4 bytes a record each) filtered and mapped to an amount,
// read one distinct time at a time by a stream. A statistic runs the
// streams of its curves over the window side by side and keeps only the
// window's segments (16 bytes each, one buffer at a time). The chunk
// curves (decode throughput and tokens in flight with ICL data) are the
// exception: one event per gap, materialised, bounded by iclLimit.
//
// Memory beyond the records: the three orders (as compact as the
// records), their sort (at most the spill's working memory) and one
// segment buffer, at most three segments a record (48 bytes) or, beyond
// the working memory, statistics computed in passes (sweepline_stats.go).

// curveID names a base curve; the per-user curves are quotients of two.
type curveID int8

const (
	cConc curveID = iota
	cDecConc
	cPreConc
	cPreTput
	cDecTput
	cTotTput
	cTokens
	nCurves
	cNone curveID = -1
)

// order is one of the orders of the records a list follows.
type order uint8

const (
	byStart order = iota
	byGen
	byEnd
)

// evKind is what a list adds for a record: at which of its times, how
// much, and whether the record takes part at all.
type evKind uint8

const (
	kConcUp      evKind = iota // +1 at start
	kConcDown                  // −1 at end
	kDecConcUp                 // +1 at gen
	kDecConcDown               // −1 at end, records with a gen
	kPreConcUp                 // +1 at start, records with a gen
	kPreConcDown               // −1 at gen
	kPreUp                     // +ISL/(gen − start) at start, gen > start
	kPreDown                   // its −rate at gen
	kDecUp                     // +(OSL − 1)/(end − gen) at gen, OSL ≥ 1, end > gen
	kDecDown                   // its −rate at end
	kTokISL                    // +ISL at start, with a prefill
	kTokOSL                    // +OSL at gen, end > gen
	kTokEnd                    // all of it back at end
)

// event is the record's event of kind k: when, how much, and whether it
// has one. The arithmetic is AIPerf's, in float64 from float32 counts.
func (k evKind) event(r *sweepRecord) (int64, float64, bool) {
	hasGen := r.gen != noTime
	switch k {
	case kConcUp:
		return r.start, 1, true
	case kConcDown:
		return r.end, -1, true
	case kDecConcUp:
		return r.gen, 1, hasGen
	case kDecConcDown:
		return r.end, -1, hasGen
	case kPreConcUp:
		return r.start, 1, hasGen
	case kPreConcDown:
		return r.gen, -1, hasGen
	case kPreUp, kPreDown:
		if !hasGen || math.IsNaN(float64(r.isl)) || r.gen <= r.start {
			return 0, 0, false
		}
		rate := float64(r.isl) / float64(r.gen-r.start)
		if k == kPreUp {
			return r.start, rate, true
		}
		return r.gen, -rate, true
	case kDecUp, kDecDown:
		if !hasGen || math.IsNaN(float64(r.osl)) || r.osl < 1 || r.end <= r.gen {
			return 0, 0, false
		}
		rate := float64(r.osl-1) / float64(r.end-r.gen)
		if k == kDecUp {
			return r.gen, rate, true
		}
		return r.end, -rate, true
	}
	isl, osl := float64(r.isl), float64(r.osl)
	prefill := hasGen && !math.IsNaN(isl) && r.gen > r.start
	decoding := hasGen && !math.IsNaN(osl) && r.end > r.gen
	switch {
	case k == kTokISL:
		return r.start, isl, prefill
	case k == kTokOSL:
		return r.gen, osl, decoding
	case prefill && decoding:
		return r.end, -(isl + osl), true
	case prefill:
		return r.end, -isl, true
	case decoding:
		return r.end, -osl, true
	}
	return 0, 0, false
}

// evList is one list of a curve's events. Sorting all of a curve's events
// by time, decreases first, stably (stepFunction) is merging its lists by
// (time, down first, seq), seq being the event's place in the order
// AIPerf generates them: seqMul·record + seqOff. Each list is sorted by
// (time, record) and is all increases or all decreases, but for amounts
// of zero (ISL 0, OSL 1), which stepFunction counts as decreases: where
// they fall among their time's events changes no sum, and the time is
// a point of the curve either way.
type evList struct {
	kind           evKind
	order          order
	down           bool
	seqMul, seqOff int64
}

// baseCurve is a step function: the merge of lists, or, for the chunk
// curves, the materialised c.
type baseCurve struct {
	lists []evList
	c     curve
	// largest is the largest |partial sum|, for snapping residue to 0.
	largest float64
	points  int // distinct event times
	// marks are the stream's state every markEvery points, so a window
	// (a time slice) starts reading near its start.
	marks []mark
}

const markEvery = 1024

type mark struct {
	t   int64 // every event before t is read
	pos [4]int
	sum float64
}

// marksEvery is the marks' spacing for n records: markEvery, wider for
// runs of over 16 million records so that the marks stay bounded.
func marksEvery(n int64) int {
	return markEvery * int(max(1, (n+(16<<20)-1)/(16<<20)))
}

// sweepIndex is what results derives from the records, kept for the next
// window.
type sweepIndex struct {
	s      *sweep
	orders [3]*blockList
	curves [nCurves]baseCurve
	every  int // marks' spacing
}

// index builds the orders and the curves' lists, and reads every curve
// once for its largest value, its marks and its size.
func (s *sweep) index() *sweepIndex {
	if s.idx != nil {
		return s.idx
	}
	s.ins.finish()
	x := &sweepIndex{s: s, every: marksEvery(s.n)}
	for o := range x.orders {
		x.orders[o] = s.sortOrder(order(o))
	}
	up := func(k evKind, o order, mul, off int64) evList { return evList{k, o, false, mul, off} }
	down := func(k evKind, o order, mul, off int64) evList { return evList{k, o, true, mul, off} }
	n := 2 * s.n
	x.curves[cConc].lists = []evList{up(kConcUp, byStart, 2, 0), down(kConcDown, byEnd, 2, 1)}
	x.curves[cDecConc].lists = []evList{up(kDecConcUp, byGen, 2, 0), down(kDecConcDown, byEnd, 2, 1)}
	x.curves[cPreConc].lists = []evList{up(kPreConcUp, byStart, 2, 0), down(kPreConcDown, byGen, 2, 1)}
	x.curves[cPreTput].lists = []evList{up(kPreUp, byStart, 2, 0), down(kPreDown, byGen, 2, 1)}
	// AIPerf's total throughput sums the request-level decode rates even
	// when the decode curve itself follows the chunks; its prefill events
	// come first.
	x.curves[cTotTput].lists = []evList{up(kPreUp, byStart, 2, 0), down(kPreDown, byGen, 2, 1),
		up(kDecUp, byGen, 2, n), down(kDecDown, byEnd, 2, n+1)}
	if s.iclN > 0 && !s.iclOff {
		x.curves[cDecTput].c = stepFunction(s.decodeByChunk(nil))
		x.curves[cTokens].c = stepFunction(s.tokenEvents(nil))
	} else {
		x.curves[cDecTput].lists = []evList{up(kDecUp, byGen, 2, 0), down(kDecDown, byEnd, 2, 1)}
		x.curves[cTokens].lists = []evList{up(kTokISL, byStart, 3, 0), up(kTokOSL, byGen, 3, 1), down(kTokEnd, byEnd, 3, 2)}
	}
	for id := range x.curves {
		c := &x.curves[id]
		if c.lists == nil {
			for i, t := range c.c.t {
				if i == 0 || t != c.c.t[i-1] {
					c.points++
				}
			}
			continue
		}
		var st stream
		st.start(x, curveID(id))
		for st.next != math.MaxInt64 {
			if c.points%x.every == 0 {
				c.marks = append(c.marks, mark{st.next, st.pos, st.sum})
			}
			c.largest = max(c.largest, st.advance())
			c.points++
		}
	}
	s.idx = x
	return x
}

// stream reads a curve one distinct event time at a time: v is its value
// (snapped) after every event before next.
type stream struct {
	x    *sweepIndex
	c    *baseCurve
	pos  [4]int // per list, the next entry of its order; or the next event of c.c
	cur  [4]entryCursor
	head [4]head
	sum  float64
	next int64 // math.MaxInt64 past the last event
	v    float64
}

type head struct {
	t   int64
	d   float64
	seq int64
}

// start sets s at the start of curve id.
func (s *stream) start(x *sweepIndex, id curveID) {
	*s = stream{x: x, c: &x.curves[id]}
	s.restart()
}

// restart reads the heads at pos.
func (s *stream) restart() {
	if s.c.lists == nil {
		i := s.pos[0]
		s.next, s.v = math.MaxInt64, 0
		if i < len(s.c.c.t) {
			s.next = s.c.c.t[i]
		}
		if i > 0 {
			s.v = s.c.c.v[i-1]
		}
		return
	}
	s.next = math.MaxInt64
	for l := range s.c.lists {
		s.fill(l)
		s.next = min(s.next, s.head[l].t)
	}
	s.v = s.snap(s.sum)
}

// seek sets s to the value in force at t, every event at or before t
// read, starting from the last mark before it.
func (s *stream) seek(x *sweepIndex, id curveID, t int64) {
	*s = stream{x: x, c: &x.curves[id]}
	if s.c.lists == nil {
		s.pos[0] = sort.Search(len(s.c.c.t), func(i int) bool { return s.c.c.t[i] > t })
		s.restart()
		return
	}
	if k := sort.Search(len(s.c.marks), func(i int) bool { return s.c.marks[i].t > t }); k > 0 {
		m := &s.c.marks[k-1]
		s.pos, s.sum = m.pos, m.sum
	}
	s.restart()
	for s.next <= t {
		s.advance()
	}
}

// fill reads list l's next event from pos[l] on.
func (s *stream) fill(l int) {
	list := &s.c.lists[l]
	ord := s.x.orders[list.order]
	cur := &s.cur[l]
	if cur.r.l != ord {
		*cur = newEntryCursor(ord)
	}
	n := int(ord.n)
	for p := s.pos[l]; p < n; p++ {
		e := cur.at(int64(p))
		if t, d, ok := list.kind.event(&e.sweepRecord); ok {
			s.pos[l], s.head[l] = p, head{t, d, list.seqMul*e.idx + list.seqOff}
			return
		}
	}
	s.pos[l], s.head[l] = n, head{t: math.MaxInt64}
}

// advance reads every event at next, in stepFunction's order, and
// returns the largest |partial sum| on the way.
func (s *stream) advance() (peak float64) {
	t := s.next
	if s.c.lists == nil {
		c := &s.c.c
		for s.pos[0] < len(c.t) && c.t[s.pos[0]] == t {
			s.pos[0]++
		}
		s.restart()
		return 0
	}
	lists := s.c.lists
	for {
		best := -1
		for l := range lists {
			if s.head[l].t != t {
				continue
			}
			if best < 0 || lists[l].down && !lists[best].down ||
				lists[l].down == lists[best].down && s.head[l].seq < s.head[best].seq {
				best = l
			}
		}
		if best < 0 {
			break
		}
		s.sum += s.head[best].d
		peak = max(peak, math.Abs(s.sum))
		s.pos[best]++
		s.fill(best)
	}
	s.next = math.MaxInt64
	for l := range lists {
		s.next = min(s.next, s.head[l].t)
	}
	s.v = s.snap(s.sum)
	return peak
}

// snap is stepFunction's: sums below 1e-9 of the largest are 0.
func (s *stream) snap(sum float64) float64 {
	if s.c.largest > 0 && math.Abs(sum) < 1e-9*s.c.largest {
		return 0
	}
	return sum
}

// decodeByChunk spreads each record's OSL - 1 tokens evenly over its
// non-zero inter-chunk gaps, each gap at its own rate.
func (s *sweep) decodeByChunk(ev []event) []event {
	buf, gaps := s.icl, make([]int64, 0, 64)
	cur := newEntryCursor(&s.ins)
	for i := range s.n {
		r := &cur.at(i).sweepRecord
		gaps, buf = readGaps(gaps[:0], buf, int(r.icl))
		nonZero := 0
		for _, g := range gaps {
			if g > 0 {
				nonZero++
			}
		}
		if r.gen == noTime || math.IsNaN(float64(r.osl)) || r.osl < 1 || nonZero == 0 {
			continue
		}
		tokens := float64(r.osl-1) / float64(nonZero)
		at := r.gen
		for _, g := range gaps {
			at += g
			if g > 0 {
				rate := tokens / float64(g)
				ev = append(ev, event{at - g, rate}, event{at, -rate})
			}
		}
	}
	return ev
}

// tokenEvents are tokens_in_flight's with chunks: +ISL at start when
// there is a prefill, +1 at gen and (OSL - 1)/gaps at each chunk, kept
// before the end, all of it freed at end. A record without chunks adds
// no output tokens.
func (s *sweep) tokenEvents(ev []event) []event {
	buf, gaps := s.icl, make([]int64, 0, 64)
	cur := newEntryCursor(&s.ins)
	for i := range s.n {
		r := &cur.at(i).sweepRecord
		isl, osl := float64(r.isl), float64(r.osl)
		hasGen := r.gen != noTime
		prefill := hasGen && !math.IsNaN(isl) && r.gen > r.start
		if prefill {
			ev = append(ev, event{r.start, isl})
		}
		gaps, buf = readGaps(gaps[:0], buf, int(r.icl))
		decoding := len(gaps) > 0
		if decoding && hasGen && !math.IsNaN(osl) {
			if osl >= 1 {
				ev = append(ev, event{r.gen, 1})
			}
			perChunk := (osl - 1) / float64(len(gaps))
			at := r.gen
			for _, g := range gaps {
				at += g
				if g < 0 {
					continue
				}
				// A chunk at or past the end would be freed before it
				// is added and leave the curve below zero for good.
				ev = append(ev, event{min(at, r.end-1), perChunk})
			}
		}
		switch {
		case prefill && decoding:
			ev = append(ev, event{r.end, -(isl + osl)})
		case prefill:
			ev = append(ev, event{r.end, -isl})
		case decoding:
			ev = append(ev, event{r.end, -osl})
		}
	}
	return ev
}

func readGaps(gaps []int64, buf []byte, n int) ([]int64, []byte) {
	for range n {
		u, k := binary.Uvarint(buf)
		buf = buf[k:]
		gaps = append(gaps, unzigzag(u))
	}
	return gaps, buf
}

// curve is a materialised step function: value v[i] holds from t[i] to
// t[i+1], 0 before t[0].
type curve struct {
	t []int64
	v []float64
}

type event struct {
	t int64
	d float64
}

// stepFunction sorts the events by time, decreases before increases at
// equal times, and sums them up; like AIPerf's lexsort the sort is stable,
// so events tied on both keep the order they were added in. Sums below
// 1e-9 of the largest are float residue of cancelled pairs and snap to 0.
func stepFunction(ev []event) curve {
	if len(ev) == 0 {
		return curve{}
	}
	first := ev[0].t
	for _, e := range ev {
		first = min(first, e.t)
	}
	keys := make([]keyed, len(ev))
	for i, e := range ev {
		up := uint64(0)
		if e.d > 0 {
			up = 1
		}
		keys[i] = keyed{uint64(e.t-first)<<1 | up, e.d}
	}
	keys = radixSort(keys, make([]keyed, len(ev)))
	c := curve{t: make([]int64, len(ev)), v: make([]float64, len(ev))}
	sum, largest := 0.0, 0.0
	for i, e := range keys {
		sum += e.x
		c.t[i], c.v[i] = first+int64(e.k>>1), sum
		largest = max(largest, math.Abs(sum))
	}
	if largest > 0 {
		for i, x := range c.v {
			if math.Abs(x) < 1e-9*largest {
				c.v[i] = 0
			}
		}
	}
	return c
}

// results are the Effective and Active families over [w0, w1]; none
// without records.
func (s *sweep) results(w0, w1 int64) []Result {
	if s.n == 0 {
		return nil
	}
	x := s.index()
	const perSec = 1e9
	type metric struct {
		def            Def
		num, den, mask curveID
		scale          float64
	}
	ms := [...]metric{
		{DefEffectiveConcurrency, cConc, cNone, cNone, 1},
		{DefEffectiveDecodeThroughput, cDecTput, cNone, cNone, perSec},
		{DefEffectivePrefillThroughput, cPreTput, cNone, cNone, perSec},
		{DefEffectiveDecodeConcurrency, cDecConc, cNone, cNone, 1},
		{DefEffectivePrefillConcurrency, cPreConc, cNone, cNone, 1},
		{DefEffectiveTotalThroughput, cTotTput, cNone, cNone, perSec},
		{DefEffectiveDecodeThroughputPerUser, cDecTput, cDecConc, cNone, perSec},
		{DefEffectivePrefillThroughputPerUsr, cPreTput, cPreConc, cNone, perSec},
		{DefTokensInFlight, cTokens, cNone, cNone, 1},
		{DefActiveDecodeThroughput, cDecTput, cNone, cDecConc, perSec},
		{DefActivePrefillThroughput, cPreTput, cNone, cPreConc, perSec},
		{DefActiveDecodeThroughputPerUser, cDecTput, cDecConc, cDecConc, perSec},
		{DefActivePrefillThroughputPerUsr, cPreTput, cPreConc, cPreConc, perSec},
		{DefActiveTotalThroughput, cTotTput, cNone, cConc, perSec},
	}
	// One buffer, as large as the largest statistic needs.
	size := 0
	for _, m := range ms {
		ids := []curveID{m.num}
		for _, id := range []curveID{m.den, m.mask} {
			if id != cNone {
				ids = append(ids, id)
			}
		}
		size = max(size, x.segmentsAtMost(w0, w1, ids...))
	}
	if s.sp != nil {
		size = min(size, workLimit(s.sp, 16)) // beyond it, in passes
	}
	segs := make([]segment, 0, size)
	out := make([]Result, 0, len(ms))
	for _, m := range ms {
		if s.noTokens && m.def != DefEffectiveConcurrency {
			continue // a token rate of an API type without tokens
		}
		out = append(out, Result{Def: m.def, Dist: x.timeWeighted(m.num, m.den, m.mask, w0, w1, &segs).summary(m.scale)})
	}
	return out
}

// span is the first and last event of the concurrency curve (every
// record's start and end): the window when none was set.
func (s *sweep) span() (int64, int64) {
	if s.n == 0 {
		return 0, 0
	}
	return s.lo, s.hi
}
