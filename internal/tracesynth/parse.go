package tracesynth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// traceLine is the part of a trace line that analysis reads; other fields
// (text_input, delay, extra, …) are ignored, as AIPerf's analyzer does.
type traceLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
	SessionID    *string  `json:"session_id"`
}

// maxLine bounds one trace line: a row of a million hash ids is ~8 MB.
const maxLine = 64 << 20

// ReadRows reads a JSONL trace, one JSON object per non-blank line. name
// prefixes errors, which give the line number.
func ReadRows(r io.Reader, name string) ([]Row, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var rows []Row
	for num := 1; ; num++ {
		line, err := readLine(br)
		if num == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			row, perr := ParseRow(t)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, num, perr)
			}
			rows = append(rows, row)
		}
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, num, err)
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("line longer than %d MB", maxLine>>20)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// ParseRow parses one trace line.
func ParseRow(data []byte) (Row, error) {
	var l traceLine
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&l); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return Row{}, fmt.Errorf("%s: want %s, not a JSON %s", typ.Field, fieldWants(typ.Field), typ.Value)
		}
		if errors.As(err, &typ) {
			return Row{}, fmt.Errorf("a trace line must be a JSON object, not a %s", typ.Value)
		}
		return Row{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if dec.More() {
		return Row{}, errors.New("more than one JSON value on the line")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Row{}, errors.New("unexpected data after the JSON object")
	}
	switch {
	case l.InputLength != nil && *l.InputLength < 0:
		return Row{}, fmt.Errorf("input_length %d is negative", *l.InputLength)
	case l.OutputLength != nil && *l.OutputLength < 0:
		return Row{}, fmt.Errorf("output_length %d is negative", *l.OutputLength)
	}
	r := Row{Timestamp: l.Timestamp, InputLength: l.InputLength, OutputLength: l.OutputLength, HashIDs: l.HashIDs}
	if l.SessionID != nil {
		r.Session = *l.SessionID
	}
	return r, nil
}

func fieldWants(field string) string {
	switch field {
	case "timestamp":
		return "a number of milliseconds"
	case "hash_ids":
		return "a list of whole numbers"
	case "session_id":
		return "a string"
	}
	return "a whole number of tokens"
}

// AppendRow appends r as one JSONL line with AIPerf's field order
// (session_id first when there is one, then timestamp or delay,
// input_length, output_length, hash_ids). delay is written when not nil.
func AppendRow(b []byte, r Row, delay *float64) []byte {
	b = append(b, '{')
	sep := func() {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
	}
	if r.Session != "" {
		b = append(b, `"session_id":`...)
		b = strconv.AppendQuote(b, r.Session)
	}
	if r.Timestamp != nil {
		sep()
		b = append(b, `"timestamp":`...)
		b = strconv.AppendFloat(b, *r.Timestamp, 'f', -1, 64)
	}
	if delay != nil {
		sep()
		b = append(b, `"delay":`...)
		b = strconv.AppendFloat(b, *delay, 'f', -1, 64)
	}
	if r.InputLength != nil {
		sep()
		b = append(b, `"input_length":`...)
		b = strconv.AppendInt(b, int64(*r.InputLength), 10)
	}
	if r.OutputLength != nil {
		sep()
		b = append(b, `"output_length":`...)
		b = strconv.AppendInt(b, int64(*r.OutputLength), 10)
	}
	if r.HashIDs != nil {
		sep()
		b = append(b, `"hash_ids":[`...)
		for i, h := range r.HashIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, h, 10)
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}
