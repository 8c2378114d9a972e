package dataset

import (
	"encoding/json"
	"fmt"
	"io"
)

// ShareGPT's length filter, as AIPerf took it from vLLM's benchmark: a
// prompt or reply under 4 tokens, a prompt over 1024, or both together
// over 2048 leave the entry out.
const (
	shareGPTMinTokens       = 4
	shareGPTMaxPromptTokens = 1024
	shareGPTMaxTotalTokens  = 2048
)

// shareGPTEntry is one conversation of ShareGPT_V3_unfiltered_cleaned_split.json.
type shareGPTEntry struct {
	ID            string `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// readShareGPT reads the ShareGPT JSON array as AIPerf 0.12's loader does:
// an entry's first message is the prompt and its second the reply, whose
// length (by the run's tokenizer) becomes the turn's output length; the
// roles are not looked at, and the rest of the conversation is dropped.
// Entries with fewer than two messages or outside the length filter are
// left out. The reply's minimum length is not checked when
// --output-tokens-mean is given, as in AIPerf, but the output length
// requested stays the reply's.
//
// Where llmbench differs: AIPerf's newest loader makes a turn of every
// human→gpt pair; llmbench follows 0.12's first pair. An entry that is not
// an object of the expected shape is an error naming it, where AIPerf's
// loader would stop on a KeyError.
func readShareGPT(r io.Reader, o PublicOptions) ([]Conversation, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not a ShareGPT JSON array: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("not a ShareGPT JSON array: it starts with %v, not [", tok)
	}
	var convs []Conversation
	for i := 0; dec.More(); i++ {
		var e shareGPTEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("entry %d: %v", i, err)
		}
		if len(e.Conversations) < 2 {
			continue
		}
		prompt, reply := e.Conversations[0].Value, e.Conversations[1].Value
		in, out := o.Corpus.Count(prompt), o.Corpus.Count(reply)
		if !shareGPTKeeps(in, out, o.OutputGiven) {
			continue
		}
		convs = append(convs, Conversation{
			ID:    fmt.Sprintf("session_%06d", len(convs)),
			Turns: []Turn{{Text: prompt, InputTokens: in, MaxTokens: out}},
		})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a ShareGPT JSON array: %v", err)
	}
	return convs, nil
}

// shareGPTKeeps is the length filter (vLLM's is_valid_sequence).
func shareGPTKeeps(in, out int, outputGiven bool) bool {
	switch {
	case in < shareGPTMinTokens, in > shareGPTMaxPromptTokens:
		return false
	case !outputGiven && out < shareGPTMinTokens:
		return false
	}
	return in+out <= shareGPTMaxTotalTokens
}
