package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// lineFile is a buffered file written a line at a time: the base of the
// JSONL writers. A background flusher writes the buffer out every
// FlushInterval, so a process killed outright loses at most that much;
// Flush does it at once (on a signal).
type lineFile struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	buf  []byte
	path string
	stop chan struct{}
	done chan struct{}
}

// FlushInterval is how often the JSONL writers flush on their own.
const FlushInterval = 250 * time.Millisecond

func createLineFile(dir, name string, bufSize int) (*lineFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create artifact dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	lf := &lineFile{f: f, w: bufio.NewWriterSize(f, bufSize), path: path, stop: make(chan struct{}), done: make(chan struct{})}
	go lf.flushLoop()
	return lf, nil
}

func (lf *lineFile) flushLoop() {
	defer close(lf.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-lf.stop:
			return
		case <-t.C:
			_ = lf.Flush()
		}
	}
}

// writeLine writes b (ending in a newline) and keeps it as the next buffer.
func (lf *lineFile) writeLine(b []byte) error {
	lf.buf = b
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if _, err := lf.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", lf.path, err)
	}
	return nil
}

// Flush writes out every complete line written so far.
func (lf *lineFile) Flush() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.w.Buffered() == 0 {
		return nil
	}
	if err := lf.w.Flush(); err != nil {
		return fmt.Errorf("flush %s: %w", lf.path, err)
	}
	return nil
}

// Close stops the flusher, flushes and closes the file.
func (lf *lineFile) Close() error {
	close(lf.stop)
	<-lf.done
	lf.mu.Lock()
	defer lf.mu.Unlock()
	err := lf.w.Flush()
	if cerr := lf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", lf.path, err)
	}
	return nil
}

// RecordWriter streams profile_export.jsonl, one line per request as it
// completes, so an interrupted run keeps every line written so far.
type RecordWriter struct {
	*lineFile
	clock record.Clock
	// metricHead and metricTail are each record metric's JSON around its
	// value (`"tag":{"value":` and `,"unit":"ms"}`), rendered once.
	metricHead, metricTail [][]byte
	// raw, with --export-level raw, gets every record's exchange too.
	raw *RawWriter
}

// WithRaw makes rw write each record's exchange to raw as well (and close
// it with rw), dropping it from the record once written.
func (rw *RecordWriter) WithRaw(raw *RawWriter) *RecordWriter {
	rw.raw = raw
	return rw
}

// NewRecordWriter creates dir/name (profile_export.jsonl).
func NewRecordWriter(dir, name string, clock record.Clock) (*RecordWriter, error) {
	lf, err := createLineFile(dir, name, 256<<10)
	if err != nil {
		return nil, err
	}
	rw := &RecordWriter{lineFile: lf, clock: clock}
	for _, def := range metrics.RecordDefs {
		rw.metricHead = append(rw.metricHead, append(appendJSONString(nil, def.Tag), `:{"value":`...))
		rw.metricTail = append(rw.metricTail, append(appendJSONString([]byte(`,"unit":`), def.Unit), '}'))
	}
	return rw, nil
}

// DiscardRecords is a RecordWriter that writes nothing (--export-level
// summary): no file, and no line rendered.
func DiscardRecords() *RecordWriter { return &RecordWriter{} }

// Flush writes out every line written so far.
func (rw *RecordWriter) Flush() error {
	if rw.lineFile == nil {
		return nil
	}
	err := rw.lineFile.Flush()
	if rw.raw != nil {
		err = errors.Join(err, rw.raw.Flush())
	}
	return err
}

// Close flushes and closes the file (and the raw one).
func (rw *RecordWriter) Close() error {
	if rw.lineFile == nil {
		return nil
	}
	err := rw.lineFile.Close()
	if rw.raw != nil {
		err = errors.Join(err, rw.raw.Close())
	}
	return err
}

// appendJSONString appends s as a JSON string, exactly as encoding/json
// writes it (HTML-safe escapes included); plain ASCII is copied as is.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendWallNs appends `,"key":<wall ns>` for a perf time, or nothing
// when it did not happen (0): AIPerf's newest records omit null fields.
func appendWallNs(b []byte, clock record.Clock, key string, perf int64) []byte {
	if perf == 0 {
		return b
	}
	b = append(append(append(b, `,"`...), key...), `":`...)
	return strconv.AppendInt(b, clock.Wall(perf), 10)
}

// appendMetadata appends a record's metadata object: AIPerf's
// MetricRecordMetadata fields, in its order, absent when null.
func appendMetadata(b []byte, clock record.Clock, r *record.Record) []byte {
	b = append(b, `{"session_num":`...)
	b = strconv.AppendInt(b, int64(r.SessionNum), 10)
	b = append(b, `,"x_request_id":`...)
	b = appendJSONString(b, r.XRequestID)
	if r.CorrelationID != "" {
		b = append(b, `,"x_correlation_id":`...)
		b = appendJSONString(b, r.CorrelationID)
	}
	if r.ConversationID != "" {
		b = append(b, `,"conversation_id":`...)
		b = appendJSONString(b, r.ConversationID)
	}
	b = append(b, `,"turn_index":`...)
	b = strconv.AppendInt(b, int64(r.TurnIndex), 10)
	// When the request was due, as AIPerf's newest exports write it.
	b = appendWallNs(b, clock, "credit_issued_ns", r.CreditIssuedPerf)
	b = append(b, `,"request_start_ns":`...)
	b = strconv.AppendInt(b, clock.Wall(r.StartPerf), 10)
	ack := int64(0)
	if r.Streaming {
		ack = r.Trace.FirstByte
	}
	b = appendWallNs(b, clock, "request_ack_ns", ack)
	b = appendWallNs(b, clock, "request_end_ns", r.EndPerf)
	b = append(b, `,"worker_id":"worker_0","record_processor_id":"record_processor_0","benchmark_phase":`...)
	b = appendJSONString(b, string(r.Phase))
	b = append(b, `,"was_cancelled":`...)
	b = strconv.AppendBool(b, r.Cancelled)
	b = appendWallNs(b, clock, "cancellation_time_ns", r.CancelledPerf)
	if r.RedirectedTo != "" {
		// llmbench's, after AIPerf's keys: where a 307/308 led.
		b = appendJSONString(append(b, `,"redirected_to":`...), r.RedirectedTo)
	}
	return append(b, '}')
}

// Write appends one record's line: metadata (AIPerf's MetricRecordMetadata
// fields, in its order, absent when null), its metrics with units, and
// its error when it failed.
func (rw *RecordWriter) Write(r *record.Record, v *metrics.Values) error {
	if rw.lineFile == nil {
		return nil // DiscardRecords
	}
	b := appendMetadata(append(rw.buf[:0], `{"metadata":`...), rw.clock, r)
	b = append(b, `,"metrics":{`...)
	first := true
	for id, def := range metrics.RecordDefs {
		mid := metrics.ID(id)
		if !v.Has(mid) || def.Has(metrics.Internal) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, rw.metricHead[id]...)
		if mid == metrics.InterChunkLatency {
			b = append(b, '[')
			for i, x := range v.ICL {
				if i > 0 {
					b = append(b, ',')
				}
				b = AppendJSONNumber(b, x)
			}
			b = append(b, ']')
		} else {
			b = AppendJSONNumber(b, v.V[id])
		}
		b = append(b, rw.metricTail[id]...)
	}
	b = append(b, '}')
	if r.Err != nil {
		e, err := json.Marshal(r.Err)
		if err != nil {
			return fmt.Errorf("encode error of request %d: %w", r.SessionNum, err)
		}
		b = append(append(b, `,"error":`...), e...)
	}
	b = append(b, "}\n"...)
	if err := rw.writeLine(b); err != nil {
		return err
	}
	if rw.raw != nil {
		err := rw.raw.Write(r)
		r.Raw = nil // the bodies and responses are on disk now
		return err
	}
	return nil
}

// InputSession is one dataset entry as sent.
type InputSession struct {
	SessionID string            `json:"session_id"`
	Payloads  []json.RawMessage `json:"payloads"`
}

// InputsJSON renders inputs.json: {"data": [{"session_id", "payloads"}]},
// indented by two spaces as json.MarshalIndent would, but written in one
// pass: a payload is indented where it stands, and one over
// compactPayloadBytes (a request carrying images or audio, megabytes of
// base64) is written as it is, compact on one line, since re-indenting
// it costs seconds and changes no byte a JSON reader sees. Payloads are
// not HTML-escaped: inputs.json shows the bytes that were sent.
func InputsJSON(sessions []InputSession) ([]byte, error) {
	size := 64
	for _, s := range sessions {
		size += 64 + len(s.SessionID)
		for _, p := range s.Payloads {
			size += len(p) + len(p)/8 + 16
		}
	}
	b := bytes.NewBuffer(make([]byte, 0, size))
	b.WriteString("{\n  \"data\": [")
	if len(sessions) == 0 {
		b.WriteString("]\n}\n")
		return b.Bytes(), nil
	}
	for i, s := range sessions {
		if i > 0 {
			b.WriteByte(',')
		}
		id, err := json.Marshal(s.SessionID)
		if err != nil {
			return nil, fmt.Errorf("encode inputs: session id: %w", err)
		}
		fmt.Fprintf(b, "\n    {\n      \"session_id\": %s,\n      \"payloads\": [", id)
		for k, p := range s.Payloads {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n        ")
			if len(p) > compactPayloadBytes {
				// Valid JSON by construction: a body built here, or
				// a dataset's, compacted when it was read.
				b.Write(bytes.TrimSpace(p))
			} else if err := json.Indent(b, p, "        ", "  "); err != nil {
				return nil, fmt.Errorf("encode inputs: session %s payload %d: %w", s.SessionID, k+1, err)
			}
		}
		if len(s.Payloads) > 0 {
			b.WriteString("\n      ")
		}
		b.WriteString("]\n    }")
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// compactPayloadBytes is the size above which inputs.json writes a payload
// as it is rather than indented.
const compactPayloadBytes = 64 << 10
