package tokenizer

import (
	"slices"
	"testing"
)

// TestSplitBehaviors: the reference's own documentation example,
// "the-final--countdown" split on "-", for every behaviour.
func TestSplitBehaviors(t *testing.T) {
	const text = "the-final--countdown"
	tests := []struct {
		b    behavior
		want []string
	}{
		{removed, []string{"the", "final", "countdown"}},
		{isolated, []string{"the", "-", "final", "-", "-", "countdown"}},
		{mergedWithPrevious, []string{"the-", "final-", "-", "countdown"}},
		{mergedWithNext, []string{"the", "-final", "-", "-countdown"}},
		{contiguous, []string{"the", "-", "final", "--", "countdown"}},
	}
	for _, tc := range tests {
		got := splitter{pat: literal("-"), behavior: tc.b}.split(nil, text, true, &pieceScratch{})
		if !slices.Equal(got, tc.want) {
			t.Errorf("behavior %d: %q, want %q", tc.b, got, tc.want)
		}
	}
	// Inverted, the gaps are the matches: Removed keeps only the dashes.
	got := splitter{pat: literal("-"), behavior: removed, invert: true}.split(nil, text, true, &pieceScratch{})
	if !slices.Equal(got, []string{"-", "-", "-"}) {
		t.Errorf("inverted: %q", got)
	}
}

func TestMetaspaceAndDigits(t *testing.T) {
	sc := &pieceScratch{}
	ms := metaspace{replacement: "▁", prepend: "first", splitAtReplacement: true}
	if got := ms.split(nil, "hey friend", true, sc); !slices.Equal(got, []string{"▁hey", "▁friend"}) {
		t.Errorf("metaspace first piece: %q", got)
	}
	if got := ms.split(nil, "hey friend", false, sc); !slices.Equal(got, []string{"hey", "▁friend"}) {
		t.Errorf("metaspace later piece: %q", got)
	}
	if got := (digits{individual: true}).split(nil, "a123b", false, sc); !slices.Equal(got, []string{"a", "1", "2", "3", "b"}) {
		t.Errorf("individual digits: %q", got)
	}
	if got := (digits{}).split(nil, "a123b45", false, sc); !slices.Equal(got, []string{"a", "123", "b", "45"}) {
		t.Errorf("digits: %q", got)
	}
}
