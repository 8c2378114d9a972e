package servermetrics

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The store keeps samples compressed, the way Prometheus' TSDB keeps its
// chunks (Gorilla, Pelkonen et al., VLDB 2015): each float as its XOR with
// the previous one, which costs a bit when a value did not change and a few
// bytes when it moved a little, and timestamps as varint delta-of-deltas,
// a byte or two for a regular schedule. Series are decoded one at a time,
// only to aggregate or export, so a long run holds a few bytes per value
// instead of eight.

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

// decode appends the stream's values to dst.
func (s *xorStream) decode(dst []float64) []float64 {
	d := s.decoder()
	for range s.n {
		dst = append(dst, d.next())
	}
	return dst
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

// timeStream is a compressed sequence of int64 timestamps: the first, then
// zig-zag varint delta-of-deltas.
type timeStream struct {
	buf             []byte
	n               int
	last, lastDelta int64
}

func (s *timeStream) add(t int64) {
	switch s.n {
	case 0:
		s.buf = binary.AppendVarint(s.buf, t)
	default:
		d := t - s.last
		s.buf = binary.AppendVarint(s.buf, d-s.lastDelta)
		s.lastDelta = d
	}
	s.last = t
	s.n++
}

func (s *timeStream) decode(dst []int64) []int64 {
	buf := s.buf
	var t, delta int64
	for i := range s.n {
		v, k := binary.Varint(buf)
		buf = buf[k:]
		if i == 0 {
			t = v
		} else {
			delta += v
			t += delta
		}
		dst = append(dst, t)
	}
	return dst
}

// numStream holds a series' values: as varint deltas while they are whole
// numbers (counts, bucket counts, most counters: a byte or two each, and
// several times faster to decode than bits), switching for good to an
// xorStream at the first value that is not (a fraction, NaN, ±Inf).
type numStream struct {
	buf  []byte
	n    int
	last int64
	xor  *xorStream
}

// maxExactInt is the largest magnitude float64 holds every integer up to.
const maxExactInt = 1 << 53

func (s *numStream) add(v float64) {
	if s.xor == nil {
		if iv := int64(v); float64(iv) == v && v > -maxExactInt && v < maxExactInt && !(v == 0 && math.Signbit(v)) {
			s.buf = binary.AppendVarint(s.buf, iv-s.last)
			s.last = iv
			s.n++
			return
		}
		x := &xorStream{}
		d := s.decoder()
		for range s.n {
			x.add(d.next())
		}
		s.xor, s.buf = x, nil
	}
	s.xor.add(v)
	s.n++
}

func (s *numStream) decode(dst []float64) []float64 {
	d := s.decoder()
	for range s.n {
		dst = append(dst, d.next())
	}
	return dst
}

// numDecoder reads a numStream value by value.
type numDecoder struct {
	buf  []byte
	last int64
	xor  *xorDecoder
}

func (s *numStream) decoder() numDecoder {
	if s.xor != nil {
		d := s.xor.decoder()
		return numDecoder{xor: &d}
	}
	return numDecoder{buf: s.buf}
}

func (d *numDecoder) next() float64 {
	if d.xor != nil {
		return d.xor.next()
	}
	if b := d.buf[0]; b < 0x80 {
		// One byte, the common case: zig-zag decoded inline.
		d.buf = d.buf[1:]
		d.last += int64(b>>1) ^ -int64(b&1)
		return float64(d.last)
	}
	v, k := binary.Varint(d.buf)
	d.buf = d.buf[k:]
	d.last += v
	return float64(d.last)
}
