package export

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/llmbench/llmbench/internal/record"
)

// RawWriter streams profile_export_raw.jsonl (--export-level raw): one
// line per request as AIPerf's RawRecordInfo has it, the request as sent
// and the response as received:
//
//	{"metadata": {…as profile_export.jsonl's…}, "start_perf_ns": N,
//	 "payload": {…the body…}, "status": 200,
//	 "responses": [{"perf_ns": N, "packets": [{"name": "data", "value": "…"}]}, …],
//	 "error": {…}}
//
// A streamed response is one entry per server-sent event, its event
// field (when it has one) and data as packets; a response read whole is
// one entry {"perf_ns", "text", "content_type"}. A body that is not JSON
// (a multipart form) is written as a JSON string.
type RawWriter struct {
	*lineFile
	clock  record.Clock
	redact func([]byte) []byte
}

// NewRawWriter creates dir/name; redact takes secrets out of a payload
// (an API key sent as an extra input) before it is written.
func NewRawWriter(dir, name string, clock record.Clock, redact func([]byte) []byte) (*RawWriter, error) {
	lf, err := createLineFile(dir, name, 256<<10)
	if err != nil {
		return nil, err
	}
	return &RawWriter{lineFile: lf, clock: clock, redact: redact}, nil
}

// Write appends r's line; a record without its raw exchange (a body that
// could not be built, never sent) has an empty payload and no responses.
func (w *RawWriter) Write(r *record.Record) error {
	if w == nil || w.lineFile == nil {
		return nil
	}
	raw := r.Raw
	if raw == nil {
		raw = &record.RawExchange{}
	}
	b := appendMetadata(append(w.buf[:0], `{"metadata":`...), w.clock, r)
	b = strconv.AppendInt(append(b, `,"start_perf_ns":`...), r.StartPerf, 10)
	b = append(b, `,"payload":`...)
	switch payload := w.redact(raw.Payload); {
	case len(payload) == 0:
		b = append(b, "{}"...)
	case json.Valid(payload):
		b = append(b, payload...)
	default:
		b = appendJSONString(b, string(payload))
	}
	if raw.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(raw.Status), 10)
	}
	b = append(b, `,"responses":[`...)
	for i, resp := range raw.Responses {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"perf_ns":`...), resp.Perf, 10)
		if resp.Whole {
			b = appendJSONString(append(b, `,"text":`...), resp.Body)
			if resp.ContentType != "" {
				b = appendJSONString(append(b, `,"content_type":`...), resp.ContentType)
			}
			b = append(b, '}')
			continue
		}
		b = append(b, `,"packets":[`...)
		if resp.Event != "" {
			b = appendJSONString(append(b, `{"name":"event","value":`...), resp.Event)
			b = append(b, "},"...)
		}
		b = appendJSONString(append(b, `{"name":"data","value":`...), resp.Data)
		b = append(b, "}]}"...)
	}
	b = append(b, ']')
	if r.Err != nil {
		e, err := json.Marshal(r.Err)
		if err != nil {
			return fmt.Errorf("encode error of request %d: %w", r.SessionNum, err)
		}
		b = append(append(b, `,"error":`...), e...)
	}
	b = append(b, "}\n"...)
	return w.writeLine(b)
}
