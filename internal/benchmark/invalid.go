package benchmark

import (
	"fmt"

	"github.com/llmbench/llmbench/internal/record"
)

// invalidTally counts the requests whose responses carried no usable
// content, by likely cause, so a run where most failed that way says why.
// It is fed from the collector goroutine only.
type invalidTally struct {
	total, invalid int
	byCause        map[record.Cause]int
	example        map[record.Cause]string
}

func (t *invalidTally) add(r *record.Record) {
	t.total++
	if r.Err == nil || r.Err.Type != record.ErrInvalidResult {
		return
	}
	if t.byCause == nil {
		t.byCause, t.example = map[record.Cause]int{}, map[record.Cause]string{}
	}
	t.invalid++
	t.byCause[r.Cause]++
	if _, ok := t.example[r.Cause]; !ok {
		t.example[r.Cause] = r.Err.Message
	}
}

// advice says what to check for each cause.
var advice = map[record.Cause]string{
	record.CauseStreamingMismatch: "the server and --streaming disagree (it answers a plain body to streaming requests, or streams to plain ones): toggle --streaming, or check that --endpoint-type matches what the server serves",
	record.CauseWrongPath:         "the URL does not reach the inference API (a wrong endpoint path, or a proxy or login page answering): check --url, --endpoint-type and --endpoint",
	record.CauseProxy:             "a proxy between llmbench and the server rewrites the responses (compression, buffering): benchmark the server directly, or make the proxy pass responses through unchanged",
	record.CauseNoContent:         "the server answers without generating anything: check --model against the server's /v1/models, --endpoint-type, and the server's logs",
	record.CauseTruncated:         "streams are cut before they finish: a proxy or load balancer closing connections (idle or response timeouts), or the server failing mid-request",
}

// warning is the one line printed when more than half the requests were
// invalid results, naming the most frequent cause; "" otherwise.
func (t *invalidTally) warning() string {
	if t.invalid == 0 || 2*t.invalid <= t.total {
		return ""
	}
	var top record.Cause
	for c, n := range t.byCause {
		if n > t.byCause[top] || n == t.byCause[top] && c < top {
			top = c
		}
	}
	return fmt.Sprintf("WARNING  %d of %d requests (%.0f%%) got a response without usable content (%s), most often: %q. Likely cause: %s.",
		t.invalid, t.total, 100*float64(t.invalid)/float64(t.total), record.ErrInvalidResult, t.example[top], advice[top])
}
