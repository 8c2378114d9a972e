package metrics

import (
	"encoding/binary"
	"math"
)

// column holds one record metric's values for the run's statistics,
// compactly and exactly. Most values are whole numbers of a unit: a time in
// ms is a whole number of nanoseconds (ms = ns / 1e6), a count a whole
// number of tokens. Such a value is kept as a varint of that number (3 to 5
// bytes for latencies, 1 or 2 for token counts) and decoded by the same
// division, so it comes back bit for bit; any other value (a throughput, a
// ratio) is kept as its 8 bytes. Values fill blocks (spill.go) that grow
// with the column, so it never holds more than one block of slack; with a
// Spill, blocks beyond its budget are on disk.
type column struct {
	// scale: value = whole / scale.
	scale float64
	list  blockList
	n     int
}

// columnBlock is the largest block of a column.
const columnBlock = maxBlock

// newColumn keeps values in units of 1/scale: 1e6 for ms measured in ns,
// 1 for counts.
func newColumn(scale float64) column { return column{scale: scale} }

// add appends v.
func (c *column) add(v float64) {
	var buf [binary.MaxVarintLen64 + 8]byte
	n := 0
	if k, ok := c.whole(v); ok {
		n = binary.PutUvarint(buf[:], zigzag(k)<<1)
	} else {
		n = binary.PutUvarint(buf[:], 1)
		binary.LittleEndian.PutUint64(buf[n:], math.Float64bits(v))
		n += 8
	}
	l := &c.list
	l.room(n)
	l.cur = append(l.cur, buf[:n]...)
	l.added(n)
	c.n++
}

// whole returns k with v == float64(k)/scale bit for bit, if there is one
// (|k| < 2^53).
func (c *column) whole(v float64) (int64, bool) {
	x := math.Round(v * c.scale)
	if math.IsNaN(x) || math.Abs(x) >= 1<<53 {
		return 0, false
	}
	k := int64(x)
	return k, math.Float64bits(float64(k)/c.scale) == math.Float64bits(v)
}

// decode appends block b's values to out.
func (c *column) decode(b []byte, out []float64) []float64 {
	for len(b) > 0 {
		h, n := binary.Uvarint(b)
		if n <= 0 {
			return out // a short read (the error fails the run)
		}
		b = b[n:]
		if h&1 == 0 {
			out = append(out, float64(unzigzag(h>>1))/c.scale)
			continue
		}
		if len(b) < 8 {
			return out
		}
		out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		b = b[8:]
	}
	return out
}

// each calls fn with every value, in the order added, a block at a time.
func (c *column) each(fn func(vs []float64)) {
	r := blockReader{l: &c.list}
	var vs []float64
	for i := range c.list.numBlocks() {
		b, _, _ := r.block(i)
		vs = c.decode(b, vs[:0])
		fn(vs)
	}
}

// values decodes every value, in the order added.
func (c *column) values() []float64 { return c.appendValues(make([]float64, 0, c.n)) }

// appendValues appends every value to out, in the order added.
func (c *column) appendValues(out []float64) []float64 {
	c.each(func(vs []float64) { out = append(out, vs...) })
	return out
}

// bytes is the memory the column holds.
func (c *column) bytes() int { return c.list.memBytes() }

// reset empties the column (its memory back to the budget).
func (c *column) reset() {
	c.list.release()
	c.n = 0
}

func zigzag(k int64) uint64   { return uint64(k<<1) ^ uint64(k>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
