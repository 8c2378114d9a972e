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
	var v uint64
	for n > 0 {
		avail := 8 - r.pos&7
		take := min(n, avail)
		byteVal := uint64(r.buf[r.pos>>3])
		shift := uint(avail - take)
		v = v<<uint(take) | (byteVal>>shift)&(1<<uint(take)-1)
		r.pos += take
		n -= take
	}
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
	r := bitReader{buf: s.w.buf}
	var prev uint64
	var leading, trailing int
	for i := range s.n {
		if i == 0 {
			prev = r.readBits(64)
			dst = append(dst, math.Float64frombits(prev))
			continue
		}
		if r.readBit() {
			if r.readBit() {
				leading = int(r.readBits(5))
				sig := int(r.readBits(6))
				if sig == 0 {
					sig = 64
				}
				trailing = 64 - leading - sig
			}
			prev ^= r.readBits(64-leading-trailing) << uint(trailing)
		}
		dst = append(dst, math.Float64frombits(prev))
	}
	return dst
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
