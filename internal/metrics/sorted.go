package metrics

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/llmbench/llmbench/internal/stats"
)

// A column's statistics need its values in ascending order, twice (the
// sum, then the deviations from the mean, both summed in that order as
// stats.Summarize sums them). Values that fit the spill's working memory
// are sorted there; more are sorted in runs that fit it, each written to
// a temporary file as the deltas of its sorted keys, and the runs merged,
// each time they are read, a block of each at a time. Either way the
// values come in the same order, floatKey's (a total order), so the
// statistics do not depend on the path.

// sortedKeys are a column's values as floatKeys, in ascending order.
type sortedKeys struct {
	mem  []uint64     // all of them, when they fit
	runs []*blockList // else sorted runs, on disk
	tmp  *spillFile
	sp   *Spill
}

// workLimit is how many entries of size bytes fit the working memory;
// unbounded without a spill.
func workLimit(sp *Spill, size int) int {
	if sp == nil {
		return math.MaxInt
	}
	return max(int(sp.work/int64(size)), 1024)
}

// sortColumn sorts c's values; buf is a buffer to reuse.
func sortColumn(c *column, sp *Spill, buf []uint64) *sortedKeys {
	limit := workLimit(sp, 8)
	s := &sortedKeys{sp: sp}
	if c.n <= limit {
		keys := buf[:0]
		c.each(func(vs []float64) {
			for _, v := range vs {
				keys = append(keys, floatKey(v))
			}
		})
		slices.Sort(keys)
		s.mem = keys
		return s
	}
	s.tmp = sp.tempFile()
	block := runBlock(sp, (c.n+limit-1)/limit)
	chunk := buf[:0]
	if cap(chunk) < limit {
		chunk = make([]uint64, 0, limit)
	}
	c.each(func(vs []float64) {
		for _, v := range vs {
			if len(chunk) == limit {
				s.runs = append(s.runs, writeKeyRun(sp, s.tmp, chunk, block))
				chunk = chunk[:0]
			}
			chunk = append(chunk, floatKey(v))
		}
	})
	if len(chunk) > 0 {
		s.runs = append(s.runs, writeKeyRun(sp, s.tmp, chunk, block))
	}
	s.mem = chunk[:0] // the buffer, for the caller to reuse
	return s
}

// writeKeyRun sorts keys and writes them to f: in each block, the first
// key and then the differences, as uvarints.
func writeKeyRun(sp *Spill, f *spillFile, keys []uint64, block int) *blockList {
	slices.Sort(keys)
	l := &blockList{sp: sp, file: f, disk: true, fixed: block}
	var buf [binary.MaxVarintLen64]byte
	prev := uint64(0)
	for _, k := range keys {
		n := binary.PutUvarint(buf[:], k-prev)
		if l.curN == 0 || cap(l.cur)-len(l.cur) < n {
			l.room(binary.MaxVarintLen64)
			n = binary.PutUvarint(buf[:], k) // a block starts from 0
		}
		l.cur = append(l.cur, buf[:n]...)
		l.added(n)
		prev = k
	}
	l.finish()
	return l
}

// runBlock is the block size of a sort's runs: a merge reads a block of
// each run at a time, decoded (up to 8 times its size), so that many runs
// get smaller blocks.
func runBlock(sp *Spill, runs int) int {
	size := int(sp.work / int64(16*max(runs, 1)))
	return min(max(size, 4<<10), maxBlock)
}

// decodeKeys appends a run block's n keys (the first, then differences)
// to dst.
func decodeKeys(b []byte, n int, dst []uint64) []uint64 {
	prev := uint64(0)
	for range n {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			break // a short read (the error fails the run)
		}
		b = b[k:]
		prev += d
		dst = append(dst, prev)
	}
	return dst
}

// each calls fn with every key in ascending order, in batches.
func (s *sortedKeys) each(fn func(ks []uint64)) {
	if s.runs == nil {
		if len(s.mem) > 0 {
			fn(s.mem)
		}
		return
	}
	mergeRuns(s.runs, decodeKeys, func(x, y *uint64) bool { return *x < *y }, 4096, fn)
}

// runCursor reads one sorted run, a decoded block at a time.
type runCursor[T any] struct {
	r      blockReader
	next   int // block
	items  []T
	pos    int
	decode func(b []byte, n int, dst []T) []T
}

func (c *runCursor[T]) fill() bool {
	for c.pos >= len(c.items) {
		if c.next >= c.r.l.numBlocks() {
			return false
		}
		b, n, _ := c.r.block(c.next)
		c.next++
		c.items, c.pos = c.decode(b, n, c.items[:0]), 0
	}
	return true
}

// mergeRuns calls fn with the items of sorted runs in ascending order by
// less, in batches of up to batch; decode turns a
// run's block of n entries into items.
func mergeRuns[T any](runs []*blockList, decode func(b []byte, n int, dst []T) []T, less func(x, y *T) bool, batch int, fn func([]T)) {
	cs := make([]*runCursor[T], 0, len(runs))
	for _, r := range runs {
		if c := (&runCursor[T]{r: blockReader{l: r}, decode: decode}); c.fill() {
			cs = append(cs, c)
		}
	}
	h := newHeap(len(cs), func(i, j int) bool { return less(&cs[i].items[cs[i].pos], &cs[j].items[cs[j].pos]) })
	out := make([]T, 0, batch)
	for h.len() > 0 {
		c := cs[h.top()]
		out = append(out, c.items[c.pos])
		c.pos++
		if c.fill() {
			h.fix()
		} else {
			h.pop()
		}
		if len(out) == cap(out) {
			fn(out)
			out = out[:0]
		}
	}
	if len(out) > 0 {
		fn(out)
	}
}

// close removes the runs' file.
func (s *sortedKeys) close() {
	if s.tmp != nil {
		s.sp.release(s.tmp)
		s.tmp = nil
	}
}

// mergeHeap is a binary min-heap of the indexes 0..n-1 by less: the
// merge of sorted runs.
type mergeHeap struct {
	h    []int
	less func(i, j int) bool
}

func newHeap(n int, less func(i, j int) bool) *mergeHeap {
	m := &mergeHeap{h: make([]int, n), less: less}
	for i := range m.h {
		m.h[i] = i
	}
	for i := n/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

func (m *mergeHeap) len() int { return len(m.h) }
func (m *mergeHeap) top() int { return m.h[0] }

// fix restores the heap after the top's key grew.
func (m *mergeHeap) fix() { m.down(0) }

// pop removes the top.
func (m *mergeHeap) pop() {
	last := len(m.h) - 1
	m.h[0] = m.h[last]
	m.h = m.h[:last]
	if last > 0 {
		m.down(0)
	}
}

func (m *mergeHeap) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// summarizeColumn is stats.Summarize of c's values, and, with errors > 0,
// the error-adjusted summary (adjustedSummary); buf is a buffer to reuse,
// returned grown.
func summarizeColumn(c *column, sp *Spill, errors int, adjusted bool, buf []uint64) (stats.Summary, *stats.Summary, []uint64) {
	s := sortColumn(c, sp, buf)
	defer s.close()
	sum, adj := summarizeSorted(s, c.n, errors, adjusted)
	return sum, adj, s.mem[:0]
}

// summarizeSorted computes, from n sorted values, what stats.Summarize
// computes from them, the same operations in the same order: Kahan sums
// of the values and of their squared deviations from the mean, ascending;
// numpy's linear percentiles. With adjusted and errors > 0 it also
// returns adjustedSummary's figures.
func summarizeSorted(s *sortedKeys, n, errors int, adjusted bool) (stats.Summary, *stats.Summary) {
	if n == 0 {
		return stats.Summary{}, nil
	}
	// The ranks whose values the percentiles need.
	type pct struct {
		lo, hi int
		frac   float64
		single bool
	}
	var ps [len(stats.Percentiles)]pct
	var ranks []int
	for i, p := range stats.Percentiles {
		switch {
		case n == 1 || p <= 0:
			ps[i] = pct{lo: 0, single: true}
		case p >= 100:
			ps[i] = pct{lo: n - 1, single: true}
		default:
			h := float64(n-1) * p / 100
			lo := int(math.Floor(h))
			if lo+1 >= n {
				ps[i] = pct{lo: n - 1, single: true}
			} else {
				ps[i] = pct{lo: lo, hi: lo + 1, frac: h - float64(lo)}
				ranks = append(ranks, lo+1)
			}
		}
		ranks = append(ranks, ps[i].lo)
	}
	var adjRanks [len(stats.Percentiles)]int
	withAdj := adjusted && errors > 0
	if withAdj {
		for i, p := range stats.Percentiles {
			adjRanks[i] = nearestIndex(n+errors, p/100)
			if adjRanks[i] < n {
				ranks = append(ranks, adjRanks[i])
			}
		}
	}
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	at := make(map[int]float64, len(ranks))

	var sum, comp, lo, hi float64
	i, next := 0, 0
	s.each(func(ks []uint64) {
		for _, k := range ks {
			v := keyFloat(k)
			if i == 0 {
				lo = v
			}
			for next < len(ranks) && ranks[next] == i {
				at[i] = v
				next++
			}
			y := v - comp
			t := sum + y
			comp = (t - sum) - y
			sum = t
			i++
		}
		hi = keyFloat(ks[len(ks)-1])
	})
	out := stats.Summary{Count: n, Min: lo, Max: hi, Sum: sum, Avg: sum / float64(n)}
	m := sum / float64(n)
	var dev, dcomp float64
	s.each(func(ks []uint64) {
		for _, k := range ks {
			d := keyFloat(k) - m
			y := d*d - dcomp
			t := dev + y
			dcomp = (t - dev) - y
			dev = t
		}
	})
	out.Std = math.Sqrt(dev / float64(n))
	for i, p := range ps {
		if p.single {
			out.P[i] = at[p.lo]
			continue
		}
		a, b := at[p.lo], at[p.hi]
		out.P[i] = a + p.frac*(b-a)
	}
	if !withAdj {
		return out, nil
	}
	inf := math.Inf(1)
	adj := stats.Summary{Count: n + errors, Sum: inf, Avg: inf, Min: lo, Max: inf, Std: math.NaN()}
	for i, k := range adjRanks {
		adj.P[i] = inf
		if k < n {
			adj.P[i] = at[k]
		}
	}
	return out, &adj
}
