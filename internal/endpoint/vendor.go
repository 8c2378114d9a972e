package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/llmbench/llmbench/internal/record"
)

// errorMembers are the members through which the servers of the non-chat
// types put an error object in place of an answer. Embedded in a type's
// response struct, they are read in the same pass as its answer.
type errorMembers struct {
	// Error: OpenAI's {"error": {"message", "code"}}, or TEI's and TGI's
	// {"error": "…", "error_type": "…"}.
	Error json.RawMessage `json:"error"`
	// Object "error": vLLM's and NIM's {"object": "error", "message", "code"}.
	Object json.RawMessage `json:"object"`
	// Message alone: Cohere's and NIM's {"message": "…"}.
	Message json.RawMessage `json:"message"`
	Code    json.RawMessage `json:"code"`
}

// err is the server's error as a *ServerError, nil when the answer is
// none. A bare message counts only when the answer has none of the
// members its type expects (answered false).
func (e *errorMembers) err(answered bool) error {
	if isValue(e.Error) {
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return &ServerError{Message: s}
		}
		var obj struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return &ServerError{Code: intOf(obj.Code), Message: obj.Message}
		}
		return &ServerError{Message: string(clip(e.Error))}
	}
	if stringOf(e.Object) == "error" {
		msg := stringOf(e.Message)
		if msg == "" {
			msg = "an error object without a message"
		}
		return &ServerError{Code: intOf(e.Code), Message: msg}
	}
	if msg := stringOf(e.Message); msg != "" && !answered {
		return &ServerError{Code: intOf(e.Code), Message: msg}
	}
	return nil
}

// isValue reports whether a member was there and not null.
func isValue(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// stringOf is a JSON string's value, "" for anything else.
func stringOf(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// intOf is a JSON integer's value (an HTTP status), 0 for anything else
// (OpenAI's codes are strings).
func intOf(raw json.RawMessage) int {
	var n int
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return 0
	}
	return n
}

// listLen is the number of elements of a JSON array, counted without
// decoding them (an answer's vectors or scores need no more); null is 0,
// any other value an error.
type listLen int

func (n *listLen) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*n = 0
		return nil
	}
	c, ok := countElements(b)
	if !ok {
		return fmt.Errorf("want a list, got %s", jsonKind(b))
	}
	*n = listLen(c)
	return nil
}

// present records whether a value was there and not null, without
// decoding it (an embedding vector).
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(!bytes.Equal(b, []byte("null")))
	return nil
}

// countElements counts the elements of a JSON array b, which
// encoding/json has already checked; false when b is no array.
func countElements(b []byte) (int, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		return 0, false
	}
	n, depth, inString, escaped, some := 0, 0, false, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			some = some || depth == 1
		case '[', '{':
			depth++
			some = some || depth == 2
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\n', '\r':
		default:
			some = some || depth == 1
		}
	}
	if some {
		n++
	}
	return n, true
}

// jsonKind names the kind of the JSON value b, for messages.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// usageOf is a usage member's token counts, nil without one or without
// any count (NIM's image retrieval reports images_size_mb there).
func usageOf(u *usageJSON) *record.Usage {
	if u == nil || u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0 {
		return nil
	}
	return &record.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// unmarshalAnswer decodes a whole answer or stream event of kind k into v,
// wrapping a failure with what was read.
func unmarshalAnswer(k Kind, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("parse %s response %q: %w", k, clip(data), err)
	}
	return nil
}

// noStream is Read's error for a stream event of a type that has no
// streaming form.
func noStream(k Kind) error {
	return fmt.Errorf("read %s stream event: %s answers are not streamed (run without --streaming)", k, k)
}

// nonEmpty are the non-empty strings of ss (AIPerf drops empty texts).
func nonEmpty(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// stateText is s as a Chunk's Text, in st's buffer (nil when s is empty).
func stateText(st *State, s string) []byte {
	if s == "" {
		return nil
	}
	if st == nil {
		return []byte(s)
	}
	st.Text = append(st.Text[:0], s...)
	return st.Text
}
