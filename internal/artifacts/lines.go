package artifacts

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// maxLine bounds one JSONL line: a long stream's inter_chunk_latency list
// makes lines of hundreds of kilobytes.
const maxLine = 64 << 20

// EachLine calls fn with every non-blank line of a JSON Lines stream,
// trimmed and numbered from 1; an error of fn stops it, wrapped with the
// line's number.
func EachLine(rd io.Reader, fn func(line int, b []byte) error) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("after line %d: %w", line, err)
	}
	return nil
}
