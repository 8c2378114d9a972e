package dataset

import (
	"encoding/json"

	"github.com/llmbench/llmbench/internal/endpoint"
)

// Conversation is one session of the dataset: its turns are sent one after
// the other, each with the conversation so far (the earlier turns and the
// server's answers to them).
type Conversation struct {
	// ID names the conversation (conversation_id in the records).
	ID string
	// System is a system message sent before every turn ("" for none),
	// and SystemTokens its length.
	System       string
	SystemTokens int
	Turns        []Turn
	// Standalone says each turn carries its whole context (a request body
	// sent as is, or a trace row whose length counts the history): turns
	// are sent without the earlier turns and answers in front of them.
	Standalone bool
}

// Turn is one request of a conversation, before any history is added.
type Turn struct {
	Text string
	// InputTokens is Text's length by the tokenizer that made or read it.
	InputTokens int
	// MaxTokens is the output length to request, or 0 to leave it to the
	// server.
	MaxTokens int
	// TimestampMs is when the turn is due on a fixed schedule, in
	// milliseconds; HasTimestamp says the turn has one.
	TimestampMs  float64
	HasTimestamp bool
	// DelayMs is the wait after the previous turn's answer before this
	// turn is sent (the user's think time).
	DelayMs float64
	// Extra is a JSON object shallow-merged into the request body, its
	// keys winning over --extra-inputs; nil for none.
	Extra json.RawMessage
	// Texts, when set, are a batch's texts (--prompt-batch-size), Text
	// the first; InputTokens counts them all.
	Texts []string
	// Query and Passages are a ranking request's, Text the query;
	// InputTokens counts the query and every passage.
	Query    string
	Passages []string
	// Images, Audios and Videos are the media the turn sends.
	Images, Audios, Videos []endpoint.MediaItem
	// Body, when not nil, is the request body itself, sent byte for byte
	// (raw_payload, inputs_json): no body is built, so --model,
	// --extra-inputs and the output length flags do not change it. Text
	// is then the prompt text found in it, for counting only.
	Body json.RawMessage
	// build, when set, makes Text and InputTokens: a trace row's prompt,
	// left to BuildPrompts when FileOptions.Defer is set, so that only
	// the rows a run keeps are built. Until then InputTokens is the
	// length asked for.
	build func() (string, int, error)
}

// PendingTokens counts the tokens of the prompts still to build.
func PendingTokens(convs []Conversation) float64 {
	n := 0.0
	for _, c := range convs {
		for _, t := range c.Turns {
			if t.build != nil {
				n += float64(t.InputTokens)
			}
		}
	}
	return n
}

// BuildPrompts builds the prompts ReadFile left to build (FileOptions.Defer):
// call it once the conversations not to be sent are dropped, so that a
// trace's preparation grows with what is sent, not with the file. The
// texts are those ReadFile would have made: each depends only on its row
// and its hash blocks.
func BuildPrompts(convs []Conversation) error {
	for i := range convs {
		for k := range convs[i].Turns {
			t := &convs[i].Turns[k]
			if t.build == nil {
				continue
			}
			text, n, err := t.build()
			if err != nil {
				return err
			}
			t.Text, t.InputTokens, t.build = text, n, nil
		}
	}
	return nil
}

// Requests counts the turns of conversations.
func Requests(convs []Conversation) int {
	n := 0
	for _, c := range convs {
		n += len(c.Turns)
	}
	return n
}

// MultiTurn reports whether any conversation has more than one turn.
func MultiTurn(convs []Conversation) bool {
	for _, c := range convs {
		if len(c.Turns) > 1 {
			return true
		}
	}
	return false
}

// Timed reports whether the conversations' first turns all carry a
// timestamp: a trace to replay on its own schedule.
func Timed(convs []Conversation) bool {
	for _, c := range convs {
		if len(c.Turns) == 0 || !c.Turns[0].HasTimestamp {
			return false
		}
	}
	return len(convs) > 0
}
