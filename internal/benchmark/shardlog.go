package benchmark

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// ShardRecordsFile is the file a shard keeps its records in for the
// merge: every record its collector kept, exactly as kept (the
// measurements and every metric's value, bit for bit), so that a merge
// computes every statistic through the collector a single process uses.
// profile_export.jsonl cannot serve: it leaves out what no export shows
// (a record's flags, its server timings' rejections, NaN as null).
const ShardRecordsFile = export.ShardRecordsFile

// ShardHeader opens a shard's records file: what the merge needs to
// recompute the exports, secrets left out.
type ShardHeader struct {
	Version  string
	PlanHash string
	// Profile is the shard's configuration, redacted: the merge's
	// statistics follow its settings (goodput, time slices, streaming).
	Profile config.Profile
}

// shardItem is one value of the gob stream: the header first, then one
// record and its metrics at a time.
type shardItem struct {
	Header *ShardHeader
	Record *record.Record
	Values *metrics.Values
}

// shardLog writes a shard's records file as records are kept.
type shardLog struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	enc *gob.Encoder
	err error
	// count is the records written.
	count int
	// clock bounds the servers' clock against this shard's.
	clock clockBound
}

// clockBound narrows down the servers' clock minus this process's wall
// clock from the responses' Date headers: a server stamps its response
// with its clock's second D at an instant between the request's start and
// its first byte back, so the offset lies in [D - firstByte, D + 1 s -
// start]. Each response narrows the interval; responses whose interval
// straddles a second's turn pin it down to about their time to first byte.
type clockBound struct {
	lo, hi int64
	n      int
}

func (b *clockBound) add(r *record.Record, v *metrics.Values) {
	if r.ServerDate <= 0 || r.Trace.FirstByte <= 0 || r.Trace.FirstByte < r.StartPerf {
		return
	}
	sent := v.StartWall
	firstByte := v.StartWall + (r.Trace.FirstByte - r.StartPerf)
	d := r.ServerDate * 1e9
	lo, hi := d-firstByte, d+1e9-sent
	if b.n == 0 {
		b.lo, b.hi = lo, hi
	} else {
		b.lo, b.hi = max(b.lo, lo), min(b.hi, hi)
	}
	b.n++
}

// bound is the interval, or nil when no response had a Date header or
// they contradict each other (servers whose clocks disagree, or a clock
// stepped during the run).
func (b *clockBound) bound() *export.OffsetBound {
	if b.n == 0 || b.lo > b.hi {
		return nil
	}
	return &export.OffsetBound{LowNs: b.lo, HighNs: b.hi, Samples: b.n}
}

func newShardLog(dir string, h ShardHeader) (*shardLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create artifact dir %s: %w", dir, err)
	}
	f, err := os.Create(filepath.Join(dir, ShardRecordsFile))
	if err != nil {
		return nil, fmt.Errorf("create the shard's records file: %w", err)
	}
	l := &shardLog{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	l.enc = gob.NewEncoder(l.w)
	h.Profile.Endpoint.Users = nil // credentials, never written
	if err := l.enc.Encode(shardItem{Header: &h}); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the shard's records file: %w", err)
	}
	return l, nil
}

// add writes one kept record, without its texts (the statistics are in
// its values; the texts are in profile_export.jsonl's inputs and the
// server's answers are no statistic).
func (l *shardLog) add(r *record.Record, v *metrics.Values) {
	if l == nil {
		return
	}
	lean := *r
	lean.OutputText, lean.ReasoningText, lean.ResponsePerfs = "", "", nil
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clock.add(r, v)
	if err := l.enc.Encode(shardItem{Record: &lean, Values: v}); err != nil && l.err == nil {
		l.err = fmt.Errorf("write the shard's records file: %w", err)
	}
	l.count++
}

// Flush writes out what is buffered (on a first Ctrl-C).
func (l *shardLog) Flush() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

func (l *shardLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.err, l.w.Flush(), l.f.Close())
	if err != nil {
		return fmt.Errorf("shard records: %w", err)
	}
	return nil
}

// ReadShardHeader reads only the header of dir's records file.
func ReadShardHeader(dir string) (ShardHeader, error) {
	var h ShardHeader
	_, err := ShardRecords(dir, func(got ShardHeader) error {
		h = got
		return errHeaderRead
	}, nil)
	if err == errHeaderRead {
		err = nil
	}
	return h, err
}

var errHeaderRead = errors.New("header read")

// ShardRecords reads a shard's records file: its header, then each
// record and its metrics in the order kept, to each. A file cut short (a
// shard killed) gives what it holds and an error saying so.
func ShardRecords(dir string, header func(ShardHeader) error, each func(*record.Record, *metrics.Values)) (int, error) {
	path := filepath.Join(dir, ShardRecordsFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%s: not a shard's folder (no %s): %w", dir, ShardRecordsFile, err)
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReaderSize(f, 256<<10))
	var first shardItem
	if err := dec.Decode(&first); err != nil || first.Header == nil {
		return 0, fmt.Errorf("%s: unreadable header: %v", path, err)
	}
	if err := header(*first.Header); err != nil {
		return 0, err
	}
	n := 0
	for {
		var it shardItem
		err := dec.Decode(&it)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: cut short after %d records: %w", path, n, err)
		}
		if it.Record == nil || it.Values == nil {
			return n, fmt.Errorf("%s: item %d is not a record", path, n+1)
		}
		each(it.Record, it.Values)
		n++
	}
}
