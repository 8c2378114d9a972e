package dataset

import (
	"reflect"
	"testing"
)

// TestDeferredPromptsAreTheSame: prompts left to BuildPrompts are the
// texts ReadFile makes at once, whatever is dropped before they are
// built; until then a turn counts the length asked for.
func TestDeferredPromptsAreTheSame(t *testing.T) {
	corpus := NewCorpus(builtin(t))
	for _, tc := range []struct{ typ, file string }{
		{"mooncake_trace", "../../examples/mooncake_trace.jsonl"},
		{"bailian_trace", "../../examples/bailian_trace.jsonl"},
		{"burst_gpt_trace", "../../examples/burst_gpt_trace.csv"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			o := FileOptions{Type: tc.typ, Corpus: corpus, BlockSize: 512, Seed: 9}
			if tc.typ == "bailian_trace" {
				o.BlockSize = BailianBlockSize
			}
			eager, err := ReadFile(tc.file, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Defer = true
			deferred, err := ReadFile(tc.file, o)
			if err != nil {
				t.Fatal(err)
			}
			if PendingTokens(deferred) == 0 || deferred[0].Turns[0].Text != "" {
				t.Fatalf("nothing was deferred")
			}
			// Drop the first conversation, then build the rest, in
			// reverse order: the texts must not depend on either.
			rest := deferred[1:]
			for i := len(rest) - 1; i >= 0; i-- {
				if err := BuildPrompts(rest[i : i+1]); err != nil {
					t.Fatal(err)
				}
			}
			if PendingTokens(rest) != 0 {
				t.Errorf("%v tokens still pending", PendingTokens(rest))
			}
			for i := range rest {
				for k := range rest[i].Turns {
					got, want := rest[i].Turns[k], eager[i+1].Turns[k]
					got.build, want.build = nil, nil
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("conversation %d turn %d: deferred %q (%d tokens), at once %q (%d)", i+1, k, got.Text, got.InputTokens, want.Text, want.InputTokens)
					}
				}
			}
		})
	}
}
