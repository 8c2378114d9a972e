package ui

import (
	"testing"

	"github.com/llmbench/llmbench/internal/verdict"
)

func TestVerdict(t *testing.T) {
	if got := Verdict(verdict.Verdict{}); got != "Run verdict: PASS\n" {
		t.Errorf("pass: %q", got)
	}
	v := verdict.Verdict{Level: verdict.Invalid, Reasons: []verdict.Reason{
		{Code: "client_cpu_saturated", Level: verdict.Suspect, Message: "client CPU saturated: …"},
		{Code: "error_rate", Level: verdict.Invalid, Message: "60 of 100 requests failed"},
	}}
	want := "Run verdict: INVALID\n  SUSPECT  client CPU saturated: …\n  INVALID  60 of 100 requests failed\n"
	if got := Verdict(v); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
