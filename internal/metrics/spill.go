package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Spill keeps the per-request data of a run's aggregators (the metric
// columns, the sweep line's records, the TTFT breakdown's rows) within a
// memory budget, so that a run of any length keeps exact statistics. Every
// such list is a sequence of blocks of compactly encoded entries; while
// the blocks held in memory stay under half the budget a full block stays
// there, beyond it goes to a file in a folder of its own (under the
// artifact directory) and only its offset is kept. The end-of-run
// statistics work in the other half: values that do not fit it are sorted
// in runs written to temporary files and merged (sorted.go), so that the
// exact percentiles, means and deviations are those of an all-in-memory
// computation, bit for bit.
//
// An aggregator without a Spill keeps everything in memory, as before.
// Close removes the folder; a write or read error is kept (Err) and makes
// the run fail, never a silently wrong statistic.
type Spill struct {
	mu     sync.Mutex
	parent string // the folder's parent; "" for os.TempDir()
	dir    string // created with the first file
	// keep bounds the blocks kept in memory, work what the end-of-run
	// statistics may hold (each half the budget).
	keep, work int64
	// resident: sealed blocks in memory; partial: blocks being filled.
	resident, partial int64
	// open are the lists with a block being filled, for flushPartial.
	open    []*blockList
	main    *spillFile
	files   int
	written int64
	err     error
	closed  bool
	// onErr is called (on a goroutine of its own) with the first error.
	onErr func(error)
}

// OnError has fn called, once, with the first error writing or reading
// the spill files (to stop the run: its statistics would be wrong).
func (s *Spill) OnError(fn func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onErr = fn
}

// NewSpill keeps per-request data in at most budget bytes of memory
// (half for the data as it comes, half for the end-of-run statistics),
// the rest in a temporary folder under parent.
func NewSpill(parent string, budget int64) *Spill {
	budget = max(budget, 2*minSpillHalf)
	return &Spill{parent: parent, keep: budget / 2, work: budget / 2}
}

// minSpillHalf is the least memory each half of a budget gets.
const minSpillHalf = 64 << 10

// newTestSpill has keep and work set as they are (tests force every path
// with tiny ones).
func newTestSpill(parent string, keep, work int64) *Spill {
	return &Spill{parent: parent, keep: keep, work: work}
}

// Err is the first error writing or reading the spill files.
func (s *Spill) Err() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Written is how many bytes went to disk.
func (s *Spill) Written() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// Dir is the spill folder, "" until the first block went to disk.
func (s *Spill) Dir() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Close removes the spill folder and its files. The aggregators must not
// be used after.
func (s *Spill) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.main != nil {
		s.main.close()
		s.main = nil
	}
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir = ""
	return err
}

// fail keeps the first error; the caller holds mu.
func (s *Spill) fail(err error) {
	if s.err == nil {
		s.err = err
		if s.onErr != nil {
			go s.onErr(err)
		}
	}
}

// newFile creates a file in the spill folder; the caller holds mu.
func (s *Spill) newFile() (*spillFile, error) {
	if s.closed {
		return nil, errors.New("the spill folder was already removed")
	}
	if s.dir == "" {
		if s.parent != "" {
			if err := os.MkdirAll(s.parent, 0o755); err != nil {
				return nil, err
			}
		}
		dir, err := os.MkdirTemp(s.parent, ".llmbench-spill-")
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	s.files++
	f, err := os.Create(fmt.Sprintf("%s/%04d.bin", s.dir, s.files))
	if err != nil {
		return nil, err
	}
	return &spillFile{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// tempFile is a file for a sort's runs, removed by release.
func (s *Spill) tempFile() *spillFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.newFile()
	if err != nil {
		s.fail(fmt.Errorf("spilling per-request values to disk: %w", err))
		return nil
	}
	return f
}

// release removes a temporary file.
func (s *Spill) release(f *spillFile) {
	if f == nil {
		return
	}
	f.close()
	_ = os.Remove(f.f.Name())
}

// write appends b to file f (the main file when nil) and returns where.
func (s *Spill) write(f *spillFile, b []byte) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, false
	}
	if f == nil {
		if s.main == nil {
			m, err := s.newFile()
			if err != nil {
				s.fail(fmt.Errorf("spilling per-request values to disk: %w", err))
				return 0, false
			}
			s.main = m
		}
		f = s.main
	}
	off, err := f.write(b)
	if err != nil {
		s.fail(fmt.Errorf("spilling per-request values to %s: %w", f.f.Name(), err))
		return 0, false
	}
	s.written += int64(len(b))
	return off, true
}

// read fills p from file f (the main file when nil) at off.
func (s *Spill) read(f *spillFile, p []byte, off int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		f = s.main
	}
	if f == nil {
		s.fail(errors.New("reading spilled per-request values: no spill file"))
		return false
	}
	if err := f.readAt(p, off); err != nil {
		s.fail(fmt.Errorf("reading spilled per-request values from %s: %w", f.f.Name(), err))
		return false
	}
	return true
}

// spillFile is an append-only file read back at offsets.
type spillFile struct {
	f    *os.File
	w    *bufio.Writer
	size int64 // bytes written, buffered ones included
}

func (f *spillFile) write(b []byte) (int64, error) {
	off := f.size
	if _, err := f.w.Write(b); err != nil {
		return 0, err
	}
	f.size += int64(len(b))
	return off, nil
}

func (f *spillFile) readAt(p []byte, off int64) error {
	if f.w.Buffered() > 0 && off+int64(len(p)) > f.size-int64(f.w.Buffered()) {
		if err := f.w.Flush(); err != nil {
			return err
		}
	}
	_, err := f.f.ReadAt(p, off)
	return err
}

func (f *spillFile) close() { _ = f.f.Close() }

// Block sizes: a list's block grows with the list, from minBlock to
// maxBlock bytes, so that a short list (a time slice's column) holds
// little slack and a long one few blocks.
const (
	minBlock = 256
	maxBlock = 64 << 10
)

// block is a sealed block of a list: in memory (mem) or in a file.
type block struct {
	mem   []byte
	off   int64
	size  int32
	n     int32 // entries
	first int64 // entries before it in the list
}

// blockList is a sequence of encoded entries in blocks; cur is the block
// being filled (curN entries). Each block decodes on its own. Not safe
// for concurrent use.
type blockList struct {
	sp     *Spill
	blocks []block
	cur    []byte
	curN   int
	n      int64 // entries
	bytes  int64 // encoded bytes
	// file is where blocks go (the spill's main file when nil); disk
	// sends every sealed block there (a sort's runs).
	file *spillFile
	disk bool
	// fixed sets every block's size (0: growing).
	fixed int
	open  bool // in sp.open
}

// room makes room in cur for an entry of up to need bytes, sealing the
// block when full; then the caller appends the entry and calls added.
func (l *blockList) room(need int) {
	if cap(l.cur)-len(l.cur) >= need {
		return
	}
	l.seal()
	if cap(l.cur) < need {
		l.grow(need)
	}
}

// added counts an entry of k bytes appended to cur.
func (l *blockList) added(k int) {
	l.curN++
	l.n++
	l.bytes += int64(k)
}

// blockSize is the size of the list's next block.
func (l *blockList) blockSize() int {
	if l.fixed > 0 {
		return l.fixed
	}
	size := minBlock
	for size < maxBlock && int64(size) < l.bytes/16 {
		size *= 2
	}
	return size
}

// grow gives cur (empty) a new buffer of at least need bytes.
func (l *blockList) grow(need int) {
	size := max(l.blockSize(), need)
	if sp := l.sp; sp != nil {
		sp.mu.Lock()
		sp.partial += int64(size - cap(l.cur))
		if !l.open && !l.disk { // a sort's run has no block left being filled
			sp.open, l.open = append(sp.open, l), true
		}
		sp.mu.Unlock()
	}
	l.cur = make([]byte, 0, size)
}

// seal ends the block being filled: kept in memory while the spill's
// budget allows, else written to disk and its buffer reused.
func (l *blockList) seal() {
	if l.curN == 0 {
		return
	}
	b := block{n: int32(l.curN), first: l.n - int64(l.curN)}
	sp := l.sp
	if sp == nil {
		l.keepCur(b)
		return
	}
	sp.mu.Lock()
	toDisk := l.disk || sp.resident+int64(cap(l.cur)) > sp.keep
	sp.mu.Unlock()
	if toDisk {
		if off, ok := sp.write(l.file, l.cur); ok {
			b.off, b.size = off, int32(len(l.cur))
			l.blocks, l.curN, l.cur = append(l.blocks, b), 0, l.cur[:0]
			if size := l.blockSize(); cap(l.cur) < size {
				l.grow(size)
			}
			sp.checkPartial()
			return
		}
		// Not written (the error is kept and fails the run): kept in
		// memory so that what was measured is not lost meanwhile.
	}
	l.keepCur(b)
	sp.checkPartial()
}

// keepCur seals the block being filled as b, in memory, its buffer moved
// from the budget's blocks being filled to its sealed ones.
func (l *blockList) keepCur(b block) {
	if sp := l.sp; sp != nil {
		sp.mu.Lock()
		c := int64(cap(l.cur))
		sp.resident += c
		sp.partial -= c
		sp.mu.Unlock()
	}
	b.mem, l.cur = l.cur, nil
	l.blocks, l.curN = append(l.blocks, b), 0
}

// checkPartial flushes the blocks being filled when they hold more than
// a quarter of the memory kept and the whole is over it.
func (s *Spill) checkPartial() {
	s.mu.Lock()
	flush := s.resident+s.partial > s.keep && s.partial > s.keep/4 && s.partial > 4*maxBlock
	s.mu.Unlock()
	if flush {
		s.flushPartial()
	}
}

// flushPartial writes every list's block being filled to disk: the
// blocks of many short lists (the time slices' columns) that no longer
// grow would otherwise hold memory for good.
func (s *Spill) flushPartial() {
	s.mu.Lock()
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for _, l := range open {
		l.open = false
		if l.curN == 0 {
			continue
		}
		b := block{n: int32(l.curN), first: l.n - int64(l.curN)}
		off, ok := s.write(l.file, l.cur)
		if !ok {
			s.mu.Lock()
			s.open, l.open = append(s.open, l), true
			s.mu.Unlock()
			continue
		}
		b.off, b.size = off, int32(len(l.cur))
		s.mu.Lock()
		s.partial -= int64(cap(l.cur))
		s.mu.Unlock()
		l.blocks, l.curN, l.cur = append(l.blocks, b), 0, nil
	}
}

// finish seals the block being filled (into memory), so that the list
// is only its blocks; the list may grow again after.
func (l *blockList) finish() {
	if l.curN == 0 {
		if l.disk && l.cur != nil && l.sp != nil { // a run's reused buffer
			l.sp.mu.Lock()
			l.sp.partial -= int64(cap(l.cur))
			l.sp.mu.Unlock()
			l.cur = nil
		}
		return
	}
	b := block{n: int32(l.curN), first: l.n - int64(l.curN)}
	if l.disk && l.sp != nil {
		if off, ok := l.sp.write(l.file, l.cur); ok {
			b.off, b.size = off, int32(len(l.cur))
			l.blocks, l.curN = append(l.blocks, b), 0
			l.sp.mu.Lock()
			l.sp.partial -= int64(cap(l.cur))
			l.sp.mu.Unlock()
			l.cur = nil
			return
		}
	}
	l.keepCur(b)
}

// release gives the list's memory back to the budget (its blocks on disk
// stay where they are until the spill is closed).
func (l *blockList) release() {
	if sp := l.sp; sp != nil {
		mem := int64(0)
		for _, b := range l.blocks {
			if b.mem != nil {
				mem += int64(cap(b.mem))
			}
		}
		sp.mu.Lock()
		sp.resident -= mem
		sp.partial -= int64(cap(l.cur))
		sp.mu.Unlock()
	}
	*l = blockList{sp: l.sp, file: l.file, disk: l.disk, fixed: l.fixed}
}

// memBytes is the memory the list holds.
func (l *blockList) memBytes() int {
	total := cap(l.cur)
	for _, b := range l.blocks {
		total += cap(b.mem)
	}
	return total
}

// usedBytes is the encoded size of the entries.
func (l *blockList) usedBytes() int64 { return l.bytes }

// blockReader reads a list's blocks, the one being filled last.
type blockReader struct {
	l   *blockList
	buf []byte
}

// numBlocks counts the blocks, the one being filled included.
func (l *blockList) numBlocks() int {
	if l.curN > 0 {
		return len(l.blocks) + 1
	}
	return len(l.blocks)
}

// block returns block i's bytes, entries and first entry's position.
func (r *blockReader) block(i int) ([]byte, int, int64) {
	l := r.l
	if i == len(l.blocks) {
		return l.cur, l.curN, l.n - int64(l.curN)
	}
	b := &l.blocks[i]
	if b.mem != nil {
		return b.mem, int(b.n), b.first
	}
	if cap(r.buf) < int(b.size) {
		r.buf = make([]byte, b.size)
	}
	p := r.buf[:b.size]
	if !l.sp.read(l.file, p, b.off) {
		return nil, 0, b.first // the error fails the run
	}
	return p, int(b.n), b.first
}

// blockOf is the block holding entry p.
func (l *blockList) blockOf(p int64) int {
	if l.curN > 0 && p >= l.n-int64(l.curN) {
		return len(l.blocks)
	}
	lo, hi := 0, len(l.blocks)
	for lo < hi {
		m := (lo + hi) / 2
		if l.blocks[m].first+int64(l.blocks[m].n) <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
