package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// readInputsJSON reads an inputs.json as AIPerf and llmbench write it:
// one JSON document, {"data": [{"session_id": …, "payloads": [body, …]}]}.
// Each session is a conversation of its payloads, in order, each sent as
// it is (compacted: the file's indentation is not part of the body, so a
// run's inputs.json replays the bytes that run sent). Payloads carry
// their whole context, so no history is added in front of a later turn.
func readInputsJSON(files []sourceFile, o FileOptions) ([]Conversation, error) {
	return parseInputsJSON(&files[0], o.Corpus)
}

// parseInputsJSON walks the document one session at a time, so that an
// error names the line its session starts on.
func parseInputsJSON(f *sourceFile, c *Corpus) ([]Conversation, error) {
	// The file's non-blank lines, trimmed, joined again: a JSON string
	// cannot span lines, so this is the same document. starts[i] is where
	// line f.lines[i] begins in it.
	var doc []byte
	starts := make([]int, len(f.lines))
	for i, l := range f.lines {
		starts[i] = len(doc)
		doc = append(append(doc, l.data...), '\n')
	}
	at := func(off int64) sourceLine {
		i := sort.Search(len(starts), func(i int) bool { return int64(starts[i]) > off }) - 1
		return f.lines[max(i, 0)]
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	fail := func(err error) error {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return f.errorf(f.lines[len(f.lines)-1], "not valid JSON (the file ends inside a value)")
		case errors.As(err, &syn):
			return f.errorf(at(syn.Offset), "not valid JSON (%v)", syn)
		case errors.As(err, &typ):
			return f.errorf(at(typ.Offset), "field %q: %s is not a %s", typ.Field, typ.Value, typ.Type)
		}
		return f.errorf(at(dec.InputOffset()), "%v", err)
	}
	expect := func(want json.Delim, what string) error {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return f.errorf(at(dec.InputOffset()), "want %s, found %v (inputs_json reads {\"data\": [{\"session_id\": …, \"payloads\": [{…}, …]}, …]})", what, tok)
		}
		return nil
	}
	if err := expect('{', "the document's opening {"); err != nil {
		return nil, err
	}
	var convs []Conversation
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		if tok != "data" {
			return nil, f.errorf(at(dec.InputOffset()), "unknown field %q (inputs_json takes data)", tok)
		}
		if err := expect('[', `"data": [ (a list of sessions)`); err != nil {
			return nil, err
		}
		for dec.More() {
			line := at(nextValue(doc, dec.InputOffset()))
			var s struct {
				SessionID *string           `json:"session_id"`
				Payloads  []json.RawMessage `json:"payloads"`
			}
			if err := dec.Decode(&s); err != nil {
				if stringsHasUnknown(err) {
					return nil, f.errorf(line, "session %d: %v (a session takes session_id, payloads)", len(convs)+1, trimJSONPrefix(err))
				}
				return nil, fail(err)
			}
			conv := Conversation{ID: fmt.Sprintf("session_%06d", len(convs)), Standalone: true}
			if s.SessionID != nil && *s.SessionID != "" {
				conv.ID = *s.SessionID
			}
			if prev, dup := seen[conv.ID]; dup {
				return nil, f.errorf(line, "session_id %q is already used on line %d", conv.ID, prev)
			}
			seen[conv.ID] = line.num
			if len(s.Payloads) == 0 {
				return nil, f.errorf(line, "session %q has no payloads: each session needs at least one request body", conv.ID)
			}
			for k, p := range s.Payloads {
				var body bytes.Buffer
				if err := json.Compact(&body, p); err != nil {
					return nil, f.errorf(line, "session %q payload %d: %v", conv.ID, k+1, err)
				}
				t, problem := rawTurn(body.Bytes(), c)
				if problem != "" {
					return nil, f.errorf(line, "session %q payload %d: %s", conv.ID, k+1, problem)
				}
				conv.Turns = append(conv.Turns, t)
			}
			convs = append(convs, conv)
		}
		if err := expect(']', "the end of the data list"); err != nil {
			return nil, err
		}
	}
	if err := expect('}', "the document's closing }"); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, f.errorf(at(dec.InputOffset()), "more than one JSON value in the file")
	}
	return convs, nil
}

// nextValue is where the value after off starts: past blanks and the
// comma before it.
func nextValue(doc []byte, off int64) int64 {
	for off < int64(len(doc)) && bytes.IndexByte([]byte(" \t\r\n,"), doc[off]) >= 0 {
		off++
	}
	return off
}

func stringsHasUnknown(err error) bool {
	return strings.HasPrefix(err.Error(), "json: unknown field ")
}

func trimJSONPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}
