package ui

import (
	"strings"

	"github.com/llmbench/llmbench/internal/verdict"
)

// Verdict renders the run verdict: "Run verdict: PASS", or the level and
// one line per reason.
func Verdict(v verdict.Verdict) string {
	var b strings.Builder
	b.WriteString("Run verdict: " + v.Level.String() + "\n")
	for _, r := range v.Reasons {
		b.WriteString("  " + r.Level.String() + "  " + r.Message + "\n")
	}
	return b.String()
}
