package ui

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/metrics"
)

// TestTimeBreakdownWarnings: records whose servers' accounts were left out
// are said, even when no record had every part.
func TestTimeBreakdownWarnings(t *testing.T) {
	got := TimeBreakdown(&metrics.Breakdown{Conflicts: 2, Rejected: 1}, 0)
	for _, want := range []string{"WARNING  1 requests' servers sent timing values that cannot be times", "WARNING  2 requests had a server time longer than the client's own"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Where the time went") {
		t.Errorf("a table without records:\n%s", got)
	}
	if TimeBreakdown(nil, 0) != "" {
		t.Error("a block without server timings")
	}
}
