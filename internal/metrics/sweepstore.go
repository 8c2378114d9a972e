package metrics

import (
	"encoding/binary"
	"math"
)

// The sweep's records are kept as a list of compactly encoded entries
// (spill.go), in the order added, some 12 to 20 bytes each; at the end
// they are sorted into the three orders the curves' lists read (by start,
// by gen, by end), each a list of its own, sorted in memory when the
// records fit the spill's working memory, else in runs merged into it.
// A stream reads an order through a cursor that decodes a block at a time.

// sweepEntry is a record and its number, the order it was added in.
type sweepEntry struct {
	sweepRecord
	idx int64
}

// Flags of an encoded entry.
const (
	eGen    = 1 << iota // gen follows
	eISLNaN             // isl is NaN (nothing follows)
	eISLRaw             // isl's 4 bytes follow (else a uvarint)
	eOSLNaN
	eOSLRaw
	eICL // icl follows
)

// maxEntry bounds an encoded entry.
const maxEntry = 1 + 4*binary.MaxVarintLen64 + 2*binary.MaxVarintLen32 + binary.MaxVarintLen32

// encodeEntry appends e to dst, its number and start as differences from
// prev's, its other times from its start.
func encodeEntry(dst []byte, prev, e *sweepEntry) []byte {
	flags := byte(0)
	if e.gen != noTime {
		flags |= eGen
	}
	islWhole, islOK := wholeFloat32(e.isl)
	oslWhole, oslOK := wholeFloat32(e.osl)
	switch {
	case math.IsNaN(float64(e.isl)):
		flags |= eISLNaN
	case !islOK:
		flags |= eISLRaw
	}
	switch {
	case math.IsNaN(float64(e.osl)):
		flags |= eOSLNaN
	case !oslOK:
		flags |= eOSLRaw
	}
	if e.icl != 0 {
		flags |= eICL
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, zigzag(e.idx-prev.idx))
	dst = binary.AppendUvarint(dst, zigzag(e.start-prev.start))
	if e.gen != noTime {
		dst = binary.AppendUvarint(dst, zigzag(e.gen-e.start))
	}
	dst = binary.AppendUvarint(dst, zigzag(e.end-e.start))
	switch {
	case flags&eISLNaN != 0:
	case flags&eISLRaw != 0:
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(e.isl))
	default:
		dst = binary.AppendUvarint(dst, islWhole)
	}
	switch {
	case flags&eOSLNaN != 0:
	case flags&eOSLRaw != 0:
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(e.osl))
	default:
		dst = binary.AppendUvarint(dst, oslWhole)
	}
	if e.icl != 0 {
		dst = binary.AppendUvarint(dst, uint64(uint32(e.icl)))
	}
	return dst
}

// wholeFloat32 returns x as a whole number when it is one, bit for bit.
func wholeFloat32(x float32) (uint64, bool) {
	if !(x >= 0 && x < 1<<63) {
		return 0, false
	}
	u := uint64(x)
	return u, math.Float32bits(float32(u)) == math.Float32bits(x)
}

// decodeEntry reads an entry from b after prev; false on a short block.
func decodeEntry(b []byte, prev, e *sweepEntry) ([]byte, bool) {
	if len(b) == 0 {
		return b, false
	}
	flags := b[0]
	b = b[1:]
	next := func() uint64 {
		u, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return u
	}
	e.idx = prev.idx + unzigzag(next())
	e.start = prev.start + unzigzag(next())
	e.gen = noTime
	if flags&eGen != 0 {
		e.gen = e.start + unzigzag(next())
	}
	e.end = e.start + unzigzag(next())
	f32 := func(nan, raw byte) float32 {
		switch {
		case flags&nan != 0:
			return float32(math.NaN())
		case flags&raw != 0:
			if len(b) < 4 {
				b = nil
				return 0
			}
			x := math.Float32frombits(binary.LittleEndian.Uint32(b))
			b = b[4:]
			return x
		}
		return float32(next())
	}
	e.isl = f32(eISLNaN, eISLRaw)
	e.osl = f32(eOSLNaN, eOSLRaw)
	e.icl = 0
	if flags&eICL != 0 {
		e.icl = int32(uint32(next()))
	}
	return b, b != nil
}

// entryWriter appends entries to a list.
type entryWriter struct {
	l    *blockList
	prev sweepEntry
}

func (w *entryWriter) add(e *sweepEntry) {
	l := w.l
	if l.curN == 0 {
		w.prev = sweepEntry{}
	}
	var buf [maxEntry]byte
	b := encodeEntry(buf[:0], &w.prev, e)
	if cap(l.cur)-len(l.cur) < len(b) {
		l.room(maxEntry)
		if l.curN == 0 {
			w.prev = sweepEntry{}
			b = encodeEntry(buf[:0], &w.prev, e)
		}
	}
	l.cur = append(l.cur, b...)
	l.added(len(b))
	w.prev = *e
}

// entryCursor reads a list's entries at any position, a block at a time.
type entryCursor struct {
	r     blockReader
	blk   int
	first int64
	ents  []sweepEntry
}

func newEntryCursor(l *blockList) entryCursor { return entryCursor{r: blockReader{l: l}, blk: -1} }

// at is entry p (< the list's length).
func (c *entryCursor) at(p int64) *sweepEntry {
	if k := p - c.first; c.blk >= 0 && k >= 0 && k < int64(len(c.ents)) {
		return &c.ents[k]
	}
	i := c.blk + 1
	if c.blk < 0 || p != c.first+int64(len(c.ents)) {
		i = c.r.l.blockOf(p)
	}
	c.load(i)
	k := p - c.first
	if k < 0 || k >= int64(len(c.ents)) {
		return &sweepEntry{} // a short read: the error fails the run
	}
	return &c.ents[k]
}

func (c *entryCursor) load(i int) {
	b, n, first := c.r.block(i)
	c.blk, c.first, c.ents = i, first, c.ents[:0]
	var prev sweepEntry
	for range n {
		var e sweepEntry
		var ok bool
		if b, ok = decodeEntry(b, &prev, &e); !ok {
			break
		}
		c.ents = append(c.ents, e)
		prev = e
	}
}

// timeOf is an entry's time in order o, noTime when it has none.
func timeOf(o order, r *sweepRecord) int64 {
	switch o {
	case byStart:
		return r.start
	case byGen:
		return r.gen
	}
	return r.end
}

// sortOrder is the records having a time in order o, sorted by it and
// then by their number (a stable sort): in memory when they fit the
// working memory, else by runs merged.
func (s *sweep) sortOrder(o order) *blockList {
	const size = 48 + 16 + 16 // an entry, its key and the sort's copy
	limit := workLimit(s.sp, size)
	out := &blockList{sp: s.sp}
	var chunk []sweepEntry
	var keys, tmp []keyed
	var runs []*blockList
	var file *spillFile
	block := 0
	flush := func(dst *blockList) {
		if len(chunk) == 0 {
			return
		}
		first := int64(math.MaxInt64)
		for i := range chunk {
			first = min(first, timeOf(o, &chunk[i].sweepRecord))
		}
		keys = keys[:0]
		for i := range chunk {
			keys = append(keys, keyed{uint64(timeOf(o, &chunk[i].sweepRecord) - first), float64(i)})
		}
		sorted := radixSort(keys, tmp[:len(chunk)]) // keys or tmp
		w := entryWriter{l: dst}
		for _, k := range sorted {
			w.add(&chunk[int(k.x)])
		}
		dst.finish()
		chunk = chunk[:0]
	}
	cur := newEntryCursor(&s.ins)
	for p := range s.ins.n {
		e := cur.at(p)
		if timeOf(o, &e.sweepRecord) == noTime {
			continue
		}
		if chunk == nil {
			n := int(min(s.ins.n, int64(limit)))
			chunk, keys, tmp = make([]sweepEntry, 0, n), make([]keyed, 0, n), make([]keyed, n)
		}
		if len(chunk) == limit {
			if file == nil {
				file = s.sp.tempFile()
				block = runBlock(s.sp, int(s.ins.n/int64(limit))+1)
			}
			run := &blockList{sp: s.sp, file: file, disk: true, fixed: block}
			flush(run)
			runs = append(runs, run)
		}
		chunk = append(chunk, *e)
	}
	if runs == nil {
		flush(out)
		return out
	}
	run := &blockList{sp: s.sp, file: file, disk: true, fixed: block}
	flush(run)
	runs = append(runs, run)
	chunk, keys, tmp = nil, nil, nil
	mergeEntries(runs, o, out)
	s.sp.release(file)
	return out
}

// mergeEntries merges sorted runs into out, by time in order o and then
// number.
func mergeEntries(runs []*blockList, o order, out *blockList) {
	type cursor struct {
		c   entryCursor
		p   int64
		n   int64
		cur *sweepEntry
	}
	cs := make([]*cursor, 0, len(runs))
	for _, r := range runs {
		if r.n > 0 {
			c := &cursor{c: newEntryCursor(r), n: r.n}
			c.cur = c.c.at(0)
			cs = append(cs, c)
		}
	}
	less := func(i, j int) bool {
		a, b := cs[i].cur, cs[j].cur
		ta, tb := timeOf(o, &a.sweepRecord), timeOf(o, &b.sweepRecord)
		return ta < tb || ta == tb && a.idx < b.idx
	}
	h := newHeap(len(cs), less)
	w := entryWriter{l: out}
	for h.len() > 0 {
		c := cs[h.top()]
		w.add(c.cur)
		c.p++
		if c.p < c.n {
			c.cur = c.c.at(c.p)
			h.fix()
		} else {
			h.pop()
		}
	}
	out.finish()
}
