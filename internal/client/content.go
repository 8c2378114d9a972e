package client

import (
	"bytes"
	"io"

	"github.com/llmbench/llmbench/internal/record"
)

// Messages shared by the header checks and the body sniffing, so the
// error summary groups one fault under one message however it was found.
const (
	emptyBodyMessage = "empty response body"
	plainJSONMessage = `expected an SSE stream for --streaming but got a plain JSON body: the server ignored "stream": true; run without --streaming or use an endpoint that streams`
	sseMessage       = "expected a JSON body but got an SSE stream: the server streams by default; add --streaming"
	noDataMessage    = "the stream has no SSE data: lines"
)

// sniffBody recognises a non-streaming body that cannot be a JSON answer
// by its first bytes, whatever its Content-Type said.
func sniffBody(data []byte) (record.Cause, string, bool) {
	head := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(head) == 0:
		return record.CauseNoContent, emptyBodyMessage, true
	case isGzip(head):
		return record.CauseProxy, compressedMessage("gzip"), true
	case head[0] == '<':
		return record.CauseWrongPath, htmlMessage, true
	case bytes.HasPrefix(head, []byte("data:")) || bytes.HasPrefix(head, []byte("event:")):
		return record.CauseStreamingMismatch, sseMessage, true
	}
	return record.CauseNone, "", false
}

func compressedMessage(encoding string) string {
	return "the body is " + encoding + "-compressed although llmbench asked for no compression: a proxy or the server compresses regardless"
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// headRecorder passes a stream through and keeps its first bytes, so a
// stream that yielded no event can be explained without delaying any
// event by peeking ahead.
type headRecorder struct {
	r    io.Reader
	head []byte
	n    int64
}

const headSize = 256

func (h *headRecorder) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := headSize - len(h.head); room > 0 && n > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	h.n += int64(n)
	return n, err
}

// emptyStream explains a stream that ended without a single data event.
func (h *headRecorder) emptyStream() (record.Cause, string) {
	if cause, msg, bad := sniffBody(h.head); bad {
		if cause == record.CauseStreamingMismatch {
			// An SSE body with no data: lines at all.
			return record.CauseNoContent, noDataMessage
		}
		return cause, msg
	}
	if head := bytes.TrimLeft(h.head, " \t\r\n"); head[0] == '{' || head[0] == '[' {
		return record.CauseStreamingMismatch, plainJSONMessage
	}
	return record.CauseNoContent, noDataMessage
}
