// Package sse reads Server-Sent Events from a response body, event by event,
// without allocating per event.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched event. Its slices are valid until the next call
// to Reader.Next.
type Event struct {
	// Data is the event's data lines joined with "\n".
	Data []byte
	// Name is the "event:" field, empty for the default "message".
	Name []byte
}

// Reader reads events from an SSE stream.
type Reader struct {
	br   *bufio.Reader
	data []byte
	name []byte
	// MaxLine bounds one line, so a stream with no newlines cannot grow
	// memory without limit.
	maxLine int
}

// DefaultMaxLine is the longest line a Reader accepts by default: 16 MiB.
const DefaultMaxLine = 16 << 20

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 16<<10), maxLine: DefaultMaxLine}
}

// Reset makes r read a new stream from src, keeping its buffers.
func (r *Reader) Reset(src io.Reader) {
	r.br.Reset(src)
	r.data, r.name = r.data[:0], r.name[:0]
}

// ErrLineTooLong is returned for a line over the reader's limit.
var ErrLineTooLong = errors.New("sse: line too long")

// Next returns the next event that has data. At the end of the stream it
// returns io.EOF; an event cut off by the end of the stream (no blank line
// after it) is still returned first.
func (r *Reader) Next() (Event, error) {
	r.data, r.name = r.data[:0], r.name[:0]
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && hasData {
				return Event{Data: r.data, Name: r.name}, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return Event{Data: r.data, Name: r.name}, nil
			}
			r.name = r.name[:0]
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			r.name = append(r.name[:0], value...)
		}
	}
}

// readLine returns one line without its terminator (LF, CRLF or CR before LF).
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Rare: a line longer than the buffer. Accumulate it.
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(long) > r.maxLine {
				return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, r.maxLine)
			}
			line, err = r.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}
