package servermetrics

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// The store keeps each series' samples in one bit stream, a row per
// scrape, so a long run holds a few bits per value instead of eight bytes
// (timestamps are shared by all the series of an endpoint's scrape,
// store.go). Series are decoded one at a time, only to aggregate or export.
//
// A row holds one value per column: a gauge's or counter's value, or a
// histogram's sum, its bucket counts and its count. Each column is a
// sequence of 64-bit integers: the values themselves while they are whole
// numbers (|v| < 2^53), else their IEEE-754 bit patterns, so every float,
// NaN payloads, ±Inf and -0 included, comes back bit for bit. A column
// predicts its next integer, and the stream holds the difference from the
// prediction (wrapping, so any difference is exact) as a Rice code whose
// parameter follows the column's recent differences (as JPEG-LS and FLAC
// do): one bit when the prediction was right, a few for a small miss,
// about log2 of the miss otherwise.
//
// A column predicts its next value three ways (its last value, the last
// plus the last step, the last plus the average step) and uses the one
// whose recent misses took fewest bits: a gauge that holds still or jumps
// is best predicted by its last value, a counter growing by 7 a scrape by
// the last step (a bit a scrape), a busy counter or histogram sum by the
// average. Histogram buckets are stored as the observations in their own
// range (c_b − c_{b−1}, and the count as count − c_{+Inf}) while every
// count is a whole number from 0 to 2^53: a bucket then moves only when an
// observation fell in its range. A row codes its bucket misses as the
// range of buckets whose prediction missed (often empty, usually a few
// around the typical latency) and the misses in it, so a quiet bucket
// costs nothing.
//
// For the bench's 400 KB exposition scraped 1,000 times (bench/
// scrape_memory.sh) that is about 2 KB a scrape where every histogram
// takes new observations, three quarters of it the histogram sums: a sum
// grown by a few full-precision latencies has 40-odd bits that no
// prediction knows.

// bitWriter appends bits, most significant first. Its buffer keeps 16
// zero bytes of capacity past the written ones, so a write is one 64-bit
// load and store and a read never runs off it.
type bitWriter struct {
	buf  []byte
	nbit int // bits written
}

// writeBits writes the n (≤ 64) low bits of v.
func (w *bitWriter) writeBits(v uint64, n int) {
	if n > 56 { // a word holds 57 bits past a byte boundary
		w.writeBits(v>>32, n-32)
		v, n = v&(1<<32-1), 32
	}
	if n == 0 {
		return
	}
	i := w.nbit >> 3
	if i+16 > cap(w.buf) {
		w.grow(i + 16)
	}
	word := binary.BigEndian.Uint64(w.buf[i : i+8])
	word |= v << uint(64-n) >> uint(w.nbit&7)
	binary.BigEndian.PutUint64(w.buf[i:i+8], word)
	w.nbit += n
	w.buf = w.buf[:(w.nbit+7)>>3]
}

// grow moves the buffer to one of at least need bytes with an eighth to
// spare: append's doubling would leave a series' buffer up to half empty,
// and a store holds thousands of them for the whole run. The capacity is
// the allocation's size class, so none of it is hidden from Footprint.
func (w *bitWriter) grow(need int) {
	c := max(need, len(w.buf)+len(w.buf)/8+32)
	buf := slices.Grow([]byte(nil), c)[:len(w.buf)]
	copy(buf, w.buf)
	clear(buf[len(buf):cap(buf)]) // writes OR into these bytes
	w.buf = buf
}

// writeRice writes z as a Rice code with parameter k: z>>k in unary (that
// many ones and a zero), then the k low bits of z. A quotient of riceLimit
// or more escapes: riceLimit ones, the bit length of z less one in six
// bits, and z's bits below its leading one, so a value far off the
// column's habit costs at most 85 bits.
func (w *bitWriter) writeRice(z uint64, k uint) {
	q := z >> k
	if q >= riceLimit {
		w.writeBits(1<<riceLimit-1, riceLimit)
		n := bits.Len64(z) - 1
		w.writeBits(uint64(n), 6)
		w.writeBits(z, n)
		return
	}
	unary := uint64(1)<<(q+1) - 2 // q ones and a zero
	if n := int(q) + 1 + int(k); n <= 64 {
		w.writeBits(unary<<k|z&(1<<k-1), n)
		return
	}
	w.writeBits(unary, int(q)+1)
	w.writeBits(z, int(k))
}

// riceLimit is the quotient from which a Rice code escapes.
const riceLimit = 16

// writeSmall writes a small number u as an Elias-gamma code of u+1: one
// bit for 0, three for 1 and 2, five for 3 to 6. u must be below 2^28
// (readSmall counts its zeros in one peek); it codes bucket indexes.
func (w *bitWriter) writeSmall(u uint64) {
	n := bits.Len64(u + 1)
	w.writeBits(u+1, 2*n-1) // n−1 zeros, then u+1
}

// bitReader reads what a bitWriter wrote.
type bitReader struct {
	buf []byte // the writer's buffer up to its capacity (zeros past the end)
	pos int    // in bits
}

func newBitReader(w *bitWriter) bitReader { return bitReader{buf: w.buf[:cap(w.buf)]} }

// peek returns the 64 bits from the current position on, of which at
// least the first 57 are the stream's (zeros past its end).
func (r *bitReader) peek() uint64 {
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
	return word << uint(r.pos&7)
}

// readBits reads n (≤ 64) bits.
func (r *bitReader) readBits(n int) uint64 {
	if n > 57 {
		hi := r.readBits(n - 32)
		return hi<<32 | r.readBits(32)
	}
	if n == 0 {
		return 0
	}
	v := r.peek() >> uint(64-n)
	r.pos += n
	return v
}

// readRice reads what writeRice wrote with parameter k.
func (r *bitReader) readRice(k uint) uint64 {
	word := r.peek()
	q := uint(bits.LeadingZeros64(^word)) // the unary ones
	if q >= riceLimit {
		r.pos += riceLimit
		n := int(r.readBits(6))
		return 1<<n | r.readBits(n)
	}
	if n := q + 1 + k; n <= 57 && k > 0 { // the usual case: all in the word peeked
		r.pos += int(n)
		return uint64(q)<<k | word<<(q+1)>>(64-k)
	}
	r.pos += int(q) + 1
	return uint64(q)<<k | r.readBits(int(k))
}

// readSmall reads what writeSmall wrote.
func (r *bitReader) readSmall() uint64 {
	n := bits.LeadingZeros64(r.peek()) + 1
	return r.readBits(2*n-1) - 1
}

// zigzag maps 0, -1, 1, -2, … to 0, 1, 2, 3, …: small misses either way
// to small codes.
func zigzag(d int64) uint64   { return uint64(d<<1) ^ uint64(d>>63) }
func unzigzag(z uint64) int64 { return int64(z>>1) ^ -int64(z&1) }

// column is the state a column's encoder and decoder both keep, so they
// make the same predictions and choose the same Rice parameters.
type column struct {
	last int64 // the previous value
	prev int64 // the step to last
	// step is the average of the recent steps (an exponential moving
	// average, weight 2^-stepGain), in 1/2^stepFrac units.
	step int64
	// miss is the recent misses (zigzagged) of the predictions made, each
	// capped at 2^missCapShift times the Rice parameter's unit 2^k, the
	// largest a Rice code writes without escaping: so one counter reset
	// among steady values costs its escape, not a larger k for the next
	// samples. bits[p] are the bit lengths of predictor p's misses, the
	// bits the Rice codes would have taken less the parameter. Both cover
	// the last n samples, halved every missWindow samples to follow a
	// column that changes its habits.
	miss uint64
	bits [3]uint16
	n    uint8
	k    uint8 // the Rice parameter for the next miss
	// float: the column holds float64 bit patterns, not whole numbers.
	float bool
}

// The predictors a column chooses from: its last value; the last value
// plus the last step, right for a series moving steadily, even after a
// jump; the last value plus the average step, closer for one moving
// steadily on average (a busy counter).
const (
	predictLast = iota
	predictLastStep
	predictMeanStep
)

// The adaptation's constants, measured on bench/scrapememory's default
// and -churn expositions: the default barely moves with them (±1%), the
// churn, whose counts wrap every few hundred scrapes, does: missCapShift
// 4 costs it 1.7 times the bits, 2 saves 10% there and costs 1% on the
// default.
const (
	stepFrac     = 4
	stepGain     = 4
	missCapShift = 3
	missWindow   = 16
	missMax      = 57 // the cap's cap: miss stays below 2^(missMax+5)
)

// wholeNumber reports whether v is an integer a whole-number column holds
// exactly: below 2^53 in magnitude, and not -0.
func wholeNumber(v float64) bool {
	return v > -maxExactInt && v < maxExactInt && float64(int64(v)) == v && !(v == 0 && math.Signbit(v))
}

// maxExactInt is the largest magnitude float64 holds every integer up to.
const maxExactInt = 1 << 53

// value is v as the column codes it.
func (c *column) value(v float64) int64 {
	if c.float {
		return int64(math.Float64bits(v))
	}
	return int64(v)
}

// float64 is the value a coded x stands for.
func (c *column) float64(x int64) float64 {
	if c.float {
		return math.Float64frombits(uint64(x))
	}
	return float64(x)
}

// fits reports whether the column can hold v.
func (c *column) fits(v float64) bool { return c.float || wholeNumber(v) }

// best is the predictor whose recent misses took fewest bits.
func (c *column) best() int {
	p := predictLast
	if c.bits[predictLastStep] < c.bits[p] {
		p = predictLastStep
	}
	if c.bits[predictMeanStep] < c.bits[p] {
		p = predictMeanStep
	}
	return p
}

// predict returns the column's guess at its next value and the Rice
// parameter for the miss.
func (c *column) predict() (int64, uint) {
	guess := c.last
	switch c.best() {
	case predictLastStep:
		guess += c.prev
	case predictMeanStep:
		guess += (c.step + 1<<(stepFrac-1)) >> stepFrac
	}
	return guess, uint(c.k)
}

// next takes the column's next value x: it returns the miss to code
// (zigzagged) and the Rice parameter to code it with, as predict did, and
// moves the state on.
func (c *column) next(x int64) (uint64, uint) {
	if c.holds(x) {
		k := uint(c.k)
		c.rest()
		return 0, k
	}
	return c.move(x)
}

// holds reports whether x leaves a column that held still so (most of a
// histogram's buckets), when every predictor is right.
func (c *column) holds(x int64) bool { return x == c.last && c.prev == 0 && c.step == 0 }

// rest is next for a column that holds still: what move does when every
// miss is 0. Its usual case, k 0 and no halving due, is inlined.
func (c *column) rest() {
	if c.k == 0 && c.n < missWindow-1 {
		c.n++
		return
	}
	c.still()
}

// still is rest's general case.
func (c *column) still() {
	if c.n++; c.n == missWindow {
		c.bits[0], c.bits[1], c.bits[2] = c.bits[0]>>1, c.bits[1]>>1, c.bits[2]>>1
		c.miss >>= 1
		c.n >>= 1
	}
	// k = 0 means miss ≤ n, which a sample more, or halving both, keeps.
	if c.k != 0 {
		c.k = uint8(riceParam(c.miss, c.n))
	}
}

// move is next for any x.
func (c *column) move(x int64) (uint64, uint) {
	d := x - c.last
	z0, z1, z2 := zigzag(d), zigzag(d-c.prev), zigzag(d-(c.step+1<<(stepFrac-1))>>stepFrac)
	miss, least := z0, c.bits[predictLast] // best(), spelt out: this runs for every value
	if c.bits[predictLastStep] < least {
		miss, least = z1, c.bits[predictLastStep]
	}
	if c.bits[predictMeanStep] < least {
		miss = z2
	}
	k := uint(c.k)
	c.miss += min(miss, 1<<min(missCapShift+k, missMax))
	c.bits[0] += uint16(bits.Len64(z0))
	c.bits[1] += uint16(bits.Len64(z1))
	c.bits[2] += uint16(bits.Len64(z2))
	if c.n++; c.n == missWindow {
		c.bits[0], c.bits[1], c.bits[2] = c.bits[0]>>1, c.bits[1]>>1, c.bits[2]>>1
		c.miss >>= 1
		c.n >>= 1
	}
	c.k = uint8(riceParam(c.miss, c.n))
	c.step += (d<<stepFrac - c.step) >> stepGain
	c.last, c.prev = x, d
	return miss, k
}

// riceParam is the smallest k with n·2^k ≥ total: about log2 of the
// average miss, the Rice parameter that codes such misses in fewest bits
// (as JPEG-LS chooses it).
func riceParam(total uint64, n uint8) uint {
	if total <= uint64(n) {
		return 0
	}
	// n < 2^4 and total < 2^62: n<<k < 2·total does not overflow.
	k := bits.Len64(total) - bits.Len8(n)
	if uint64(n)<<uint(k) < total {
		k++
	}
	return uint(k)
}

// write codes x in w.
func (c *column) write(w *bitWriter, x int64) {
	w.writeRice(c.next(x))
}

// read decodes the column's next value from r.
func (c *column) read(r *bitReader) int64 {
	guess, k := c.predict()
	x := guess + unzigzag(r.readRice(k))
	c.next(x)
	return x
}

// rowRange is the state of a row of columns coded as the range of those
// that missed: the range of the last row that had one.
type rowRange struct{ lo, width int32 }

// writeRow codes the values xs of columns cols (len(xs) == len(cols)): the
// width of the range of columns whose prediction missed, against the last
// row's, then, when not empty, its start against the last one's, then the
// misses in it. z and ks are scratch of len(cols).
func (rr *rowRange) writeRow(w *bitWriter, cols []column, xs []int64, z []uint64, ks []uint) {
	xs, z, ks = xs[:len(cols)], z[:len(cols)], ks[:len(cols)]
	lo, hi := len(cols), 0
	for i := range cols {
		c := &cols[i]
		if c.holds(xs[i]) { // next, without the call for the usual case
			z[i], ks[i] = 0, uint(c.k)
			c.rest()
			continue
		}
		zi, k := c.move(xs[i])
		z[i], ks[i] = zi, k
		if zi != 0 {
			lo, hi = min(lo, i), i+1
		}
	}
	width := int32(max(hi-lo, 0))
	w.writeSmall(zigzag(int64(width - rr.width)))
	rr.width = width
	if width == 0 {
		return
	}
	w.writeSmall(zigzag(int64(int32(lo) - rr.lo)))
	rr.lo = int32(lo)
	for i := lo; i < hi; i++ {
		w.writeRice(z[i], ks[i])
	}
}

// readRow decodes a row writeRow wrote into xs.
func (rr *rowRange) readRow(r *bitReader, cols []column, xs []int64) {
	rr.width += int32(unzigzag(r.readSmall()))
	lo, hi := 0, 0
	if rr.width > 0 {
		rr.lo += int32(unzigzag(r.readSmall()))
		lo, hi = int(rr.lo), int(rr.lo+rr.width)
	}
	xs = xs[:len(cols)]
	for i := range cols {
		c := &cols[i]
		if i < lo || i >= hi {
			if c.prev == 0 && c.step == 0 {
				// At rest, every predictor says the last value, which
				// holds: next, without the calls for the usual case.
				xs[i] = c.last
				c.rest()
				continue
			}
			x, _ := c.predict()
			xs[i] = x
			c.move(x)
			continue
		}
		x, k := c.predict()
		x += unzigzag(r.readRice(k))
		xs[i] = x
		c.next(x)
	}
}
