package servermetrics

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The store keeps samples compressed, the way Prometheus' TSDB keeps its
// chunks (Gorilla, Pelkonen et al., VLDB 2015): each float as its XOR with
// the previous one, which costs a bit when a value did not change and a few
// bytes when it moved a little, and whole numbers as bit-packed deltas, a
// bit when they did not move and a byte for a small step. Timestamps are
// shared by all the series of one scrape (store.go). Series are decoded
// one at a time, only to aggregate or export, so a long run holds a bit or
// a few bytes per value instead of eight.

// bitWriter appends bits, most significant first.
type bitWriter struct {
	buf  []byte
	free uint8 // unused low bits of the last byte
}

func (w *bitWriter) writeBit(one bool) {
	if w.free == 0 {
		w.buf = append(w.buf, 0)
		w.free = 8
	}
	w.free--
	if one {
		w.buf[len(w.buf)-1] |= 1 << w.free
	}
}

// writeBits writes the n low bits of v.
func (w *bitWriter) writeBits(v uint64, n int) {
	for n > 0 {
		if w.free == 0 {
			w.buf = append(w.buf, 0)
			w.free = 8
		}
		take := min(n, int(w.free))
		chunk := (v >> uint(n-take)) & (1<<uint(take) - 1)
		w.free -= uint8(take)
		w.buf[len(w.buf)-1] |= byte(chunk << w.free)
		n -= take
	}
}

// bitReader reads what a bitWriter wrote.
type bitReader struct {
	buf []byte
	pos int // in bits
}

func (r *bitReader) readBit() bool {
	b := r.buf[r.pos>>3]>>(7-uint(r.pos&7))&1 == 1
	r.pos++
	return b
}

func (r *bitReader) readBits(n int) uint64 {
	if n == 0 {
		return 0
	}
	if n > 56 { // a word read covers at most 57 bits past a byte boundary
		hi := r.readBits(n - 32)
		return hi<<32 | r.readBits(32)
	}
	// Load the 8 bytes from the current one (zero past the end), keep the
	// n bits after the bit offset.
	i := r.pos >> 3
	var word uint64
	if i+8 <= len(r.buf) {
		word = binary.BigEndian.Uint64(r.buf[i:])
	} else {
		for k := range 8 {
			word <<= 8
			if i+k < len(r.buf) {
				word |= uint64(r.buf[i+k])
			}
		}
	}
	v := word << uint(r.pos&7) >> uint(64-n)
	r.pos += n
	return v
}

// xorStream is a compressed sequence of float64 values.
type xorStream struct {
	w                 bitWriter
	n                 int
	prev              uint64
	leading, trailing uint8
}

func (s *xorStream) add(v float64) {
	x := math.Float64bits(v)
	defer func() { s.prev, s.n = x, s.n+1 }()
	if s.n == 0 {
		s.w.writeBits(x, 64)
		return
	}
	d := x ^ s.prev
	if d == 0 {
		s.w.writeBit(false)
		return
	}
	s.w.writeBit(true)
	lead, trail := uint8(min(bits.LeadingZeros64(d), 31)), uint8(bits.TrailingZeros64(d))
	if s.n > 1 && lead >= s.leading && trail >= s.trailing {
		// Inside the previous window: its meaningful bits only.
		s.w.writeBit(false)
		s.w.writeBits(d>>s.trailing, 64-int(s.leading)-int(s.trailing))
		return
	}
	s.leading, s.trailing = lead, trail
	sig := 64 - int(lead) - int(trail)
	s.w.writeBit(true)
	s.w.writeBits(uint64(lead), 5)
	s.w.writeBits(uint64(sig&63), 6) // 64 is written as 0
	s.w.writeBits(d>>trail, sig)
}

// xorDecoder reads a stream value by value, so several streams can be
// read in lockstep.
type xorDecoder struct {
	r                 bitReader
	started           bool
	prev              uint64
	leading, trailing int
}

func (s *xorStream) decoder() xorDecoder { return xorDecoder{r: bitReader{buf: s.w.buf}} }

func (d *xorDecoder) next() float64 {
	if !d.started {
		d.started = true
		d.prev = d.r.readBits(64)
		return math.Float64frombits(d.prev)
	}
	if d.r.readBit() {
		if d.r.readBit() {
			d.leading = int(d.r.readBits(5))
			sig := int(d.r.readBits(6))
			if sig == 0 {
				sig = 64
			}
			d.trailing = 64 - d.leading - sig
		}
		d.prev ^= d.r.readBits(64-d.leading-d.trailing) << uint(d.trailing)
	}
	return math.Float64frombits(d.prev)
}

// numStream holds a series' values: as bit-packed deltas while they are
// whole numbers (counts, bucket counts, most counters and gauges: one bit
// for a value that did not move, a byte for a small step), switching for
// good to an xorStream at the first value that is not (a fraction, NaN,
// ±Inf, beyond 2^53).
//
// A delta d is zig-zagged to z (0, -1, 1, -2, … → 0, 1, 2, 3, …) and
// written as '0' when z is 0, '10' and 6 bits below 64, '110' and 13 bits
// below 8192, else '111' and all 64 bits.
type numStream struct {
	w    bitWriter
	n    int
	last int64
	xor  *xorStream
}

// maxExactInt is the largest magnitude float64 holds every integer up to.
const maxExactInt = 1 << 53

// wholeNumber reports whether v is an integer the delta code holds exactly.
func wholeNumber(v float64) bool {
	return v > -maxExactInt && v < maxExactInt && float64(int64(v)) == v && !(v == 0 && math.Signbit(v))
}

func (s *numStream) add(v float64) {
	if s.xor == nil {
		if wholeNumber(v) {
			s.addWhole(int64(v))
			return
		}
		x := &xorStream{}
		d := s.decoder()
		for range s.n {
			x.add(d.next())
		}
		s.xor, s.w = x, bitWriter{}
	}
	s.xor.add(v)
	s.n++
}

// addWhole appends a value the caller knows is a whole number below 2^53
// in magnitude, to a stream that holds only such values so far.
func (s *numStream) addWhole(iv int64) {
	d := iv - s.last
	z := uint64(d<<1) ^ uint64(d>>63)
	switch {
	case z == 0:
		s.w.writeBit(false)
	case z < 1<<6:
		s.w.writeBits(0b10<<6|z, 8)
	case z < 1<<13:
		s.w.writeBits(0b110<<13|z, 16)
	default:
		s.w.writeBits(0b111, 3)
		s.w.writeBits(z, 64)
	}
	s.last = iv
	s.n++
}

// decode appends the stream's values to dst.
func (s *numStream) decode(dst []float64) []float64 {
	d := s.decoder()
	for range s.n {
		dst = append(dst, d.next())
	}
	return dst
}

// numDecoder reads a numStream value by value.
type numDecoder struct {
	r    bitReader
	last int64
	xor  *xorDecoder
}

func (s *numStream) decoder() numDecoder {
	if s.xor != nil {
		d := s.xor.decoder()
		return numDecoder{xor: &d}
	}
	return numDecoder{r: bitReader{buf: s.w.buf}}
}

func (d *numDecoder) next() float64 {
	if d.xor != nil {
		return d.xor.next()
	}
	r := &d.r
	if r.buf[r.pos>>3]>>(7-uint(r.pos&7))&1 == 0 {
		r.pos++ // unchanged, the common case
		return float64(d.last)
	}
	var z uint64
	switch head := r.readBits(3); {
	case head < 0b110:
		r.pos-- // '10': the third bit was the value's first
		z = r.readBits(6)
	case head == 0b110:
		z = r.readBits(13)
	default:
		z = r.readBits(64)
	}
	d.last += int64(z>>1) ^ -int64(z&1)
	return float64(d.last)
}
