package dataset

import (
	"encoding/json"
	"strings"
)

// rawTurn makes the turn of a request body sent as is (raw_payload,
// inputs_json). The body must be one JSON object; nothing else of it is
// checked, as AIPerf checks nothing. The prompt text it carries (message
// contents, or a completions prompt or embeddings input) is kept only to
// count the request's input tokens, and its max_completion_tokens (or
// max_tokens) as the output length it asks for.
func rawTurn(body []byte, c *Corpus) (Turn, string) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		if !json.Valid(body) {
			return Turn{}, "not valid JSON: a request body is one JSON object on its line"
		}
		return Turn{}, "not a JSON object: a request body is an object such as {\"messages\": [...], \"model\": ...}"
	}
	var texts []string
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(fields["messages"], &msgs) == nil {
		for _, m := range msgs {
			texts = appendTexts(texts, m.Content)
		}
	}
	texts = appendTexts(texts, fields["prompt"])
	texts = appendTexts(texts, fields["input"])
	t := Turn{Body: body, Text: strings.Join(texts, "\n")}
	t.InputTokens = c.Count(t.Text)
	for _, key := range []string{"max_completion_tokens", "max_tokens"} {
		var n int
		if json.Unmarshal(fields[key], &n) == nil && n > 0 {
			t.MaxTokens = n
			break
		}
	}
	return t, ""
}

// appendTexts adds the text of a content value: a string, a list of
// strings, or a list of content parts whose "text" it takes (image and
// audio parts carry none).
func appendTexts(texts []string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return texts
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return appendNonEmpty(texts, s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return texts
	}
	for _, p := range parts {
		var part struct {
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(p, &s) == nil:
			texts = appendNonEmpty(texts, s)
		case json.Unmarshal(p, &part) == nil:
			texts = appendNonEmpty(texts, part.Text)
		}
	}
	return texts
}

func appendNonEmpty(texts []string, s string) []string {
	if s == "" {
		return texts
	}
	return append(texts, s)
}
