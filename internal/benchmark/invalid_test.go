package benchmark

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestInvalidWarningOnlyAboveHalf(t *testing.T) {
	const serverError = record.Cause("500")
	rec := func(cause record.Cause) *record.Record {
		switch cause {
		case record.CauseNone:
			return &record.Record{}
		case serverError: // an error, but not an invalid result
			return &record.Record{Err: &record.Error{Type: "InternalServerError", Code: 500}}
		}
		return &record.Record{Err: &record.Error{Type: record.ErrInvalidResult, Message: "Invalid inference result: " + string(cause)}, Cause: cause}
	}
	tests := []struct {
		causes []record.Cause
		want   string
	}{
		{[]record.Cause{record.CauseNone, record.CauseTruncated}, ""}, // exactly half: no warning
		{[]record.Cause{record.CauseNone, record.CauseNone, record.CauseNone}, ""},
		{[]record.Cause{record.CauseNone, record.CauseTruncated, record.CauseTruncated}, "2 of 3 requests (67%)"},
		{[]record.Cause{serverError, record.CauseTruncated, serverError, record.CauseTruncated}, ""},
		{[]record.Cause{serverError, record.CauseTruncated, record.CauseTruncated}, "streams are cut before they finish"},
		{[]record.Cause{record.CauseProxy, record.CauseStreamingMismatch, record.CauseStreamingMismatch}, "server and --streaming disagree"},
		{[]record.Cause{record.CauseWrongPath, record.CauseProxy}, "rewrites the responses"}, // a tie: the first cause by name
	}
	for _, tc := range tests {
		var tally invalidTally
		for _, c := range tc.causes {
			tally.add(rec(c))
		}
		got := tally.warning()
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%v: warning %q, want %q", tc.causes, got, tc.want)
		}
	}
}

func TestStoppingMessage(t *testing.T) {
	for n, want := range map[int64]string{
		3: "stopping: cancelling the requests in flight (3); writing the artifacts; press Ctrl-C again to stop now",
		0: "stopping: cancelling the requests in flight; writing the artifacts; press Ctrl-C again to stop now",
	} {
		if got := stoppingMessage(n, nil, 0); got != want {
			t.Errorf("%d in flight: %q, want %q", n, got, want)
		}
	}
}
