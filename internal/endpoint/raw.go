package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmespath/go-jmespath"
)

// rawType sends the request bodies a dataset gives whole (raw_payload,
// inputs_json) to --url as they are, and reads whatever comes back: where
// --extra-inputs response_field (a JMESPath expression) points, or where
// the usual APIs put their answer.
type rawType struct{ answer answerReader }

func (rawType) Path(bool) string { return "" }

func (rawType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio | Video, Input: Payload}
}

// Configure takes response_field from extra.
func (rawType) Configure(extra []Field) (Type, []Field, error) {
	a, rest, err := configureAnswer(Raw, extra, false)
	if err != nil {
		return nil, nil, err
	}
	return rawType{a}, rest, nil
}

// Build returns the dataset's body: the run sends it without calling
// Build, which is reached only when there is none.
func (rawType) Build(in Input) ([]byte, error) {
	if len(in.Payload) > 0 {
		return in.Payload, nil
	}
	return nil, errors.New("build raw body: the raw endpoint type sends a dataset's request bodies as they are: use --custom-dataset-type raw_payload or inputs_json with --input-file")
}

func (t rawType) Read(data []byte, _ bool, st *State) (Chunk, error) {
	a := t.answer
	a.kind = Raw
	return a.read(data, st)
}

func (t rawType) Empty(c Chunk) string { return t.answer.empty(c) }

// answerReader reads the answers of the raw and template types, whose
// servers are of no known API: where response_field points, or else
// where the usual APIs put text, embeddings or rankings.
type answerReader struct {
	kind Kind
	// field is response_field as given ("" to auto-detect), query its
	// compiled form.
	field string
	query *jmespath.JMESPath
	// strict: a response_field that selects nothing is no answer (the
	// template type), rather than a cue to auto-detect (raw), so that a
	// mistyped field is not silently replaced by another one.
	strict bool
}

// configureAnswer takes response_field out of extra: a JMESPath
// expression, a JSON string's value or the value's text as given
// (response_field:[0] is JSON, and a JMESPath expression too).
func configureAnswer(k Kind, extra []Field, strict bool) (answerReader, []Field, error) {
	a := answerReader{kind: k, strict: strict}
	var rest []Field
	for _, f := range extra {
		if f.Key != "response_field" {
			rest = append(rest, f)
			continue
		}
		a.field, a.query = extraText(f.Value), nil
		if a.field == "" {
			continue
		}
		q, err := compileJMESPath(a.field)
		if err != nil {
			return answerReader{}, nil, fmt.Errorf("%s endpoint type: response_field %q is not a JMESPath expression (https://jmespath.org): %w", k, a.field, err)
		}
		a.query = q
	}
	return a, rest, nil
}

// extraText is an extra input's text: a JSON string's value, or the JSON
// as it is.
func extraText(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// compileJMESPath compiles expr; go-jmespath's parser is not hardened
// against every input, so a panic is an error like any other.
func compileJMESPath(expr string) (q *jmespath.JMESPath, err error) {
	defer func() {
		if r := recover(); r != nil {
			q, err = nil, fmt.Errorf("the expression broke the parser: %v", r)
		}
	}()
	return jmespath.Compile(expr)
}

// search evaluates a.query on v, a panic in the interpreter being an
// error.
func (a *answerReader) search(v any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("evaluating response_field %q broke the interpreter: %v", a.field, r)
		}
	}()
	return a.query.Search(v)
}

// rawJSON is an answer object, its members kept undecoded: a server of
// no known API may give any of them any type.
type rawJSON struct {
	errorMembers
	Data       json.RawMessage `json:"data"`
	Embeddings json.RawMessage `json:"embeddings"`
	Embedding  json.RawMessage `json:"embedding"`
	Rankings   json.RawMessage `json:"rankings"`
	Results    json.RawMessage `json:"results"`
	Text       json.RawMessage `json:"text"`
	Content    json.RawMessage `json:"content"`
	Response   json.RawMessage `json:"response"`
	Output     json.RawMessage `json:"output"`
	Result     json.RawMessage `json:"result"`
	Choices    json.RawMessage `json:"choices"`
	Usage      json.RawMessage `json:"usage"`
}

// read reads a whole answer or one stream event's data: text that is not
// JSON is the answer's text; JSON is read where response_field points
// (and, for raw, where the usual APIs answer when it points at nothing),
// an error object being a *ServerError.
func (a *answerReader) read(data []byte, st *State) (Chunk, error) {
	if st == nil {
		st = &State{}
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Chunk{}, nil
	}
	var obj *rawJSON
	isJSON := true
	if data[0] == '{' {
		// The members are all json.RawMessage: the only error is data
		// that is not JSON.
		obj = &rawJSON{}
		if json.Unmarshal(data, obj) != nil {
			obj, isJSON = nil, false
		}
	} else {
		isJSON = json.Valid(data)
	}
	if !isJSON {
		st.Text = append(st.Text[:0], data...)
		return Chunk{Text: st.Text}, nil
	}
	var c Chunk
	selected := false
	if a.query != nil {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return Chunk{}, fmt.Errorf("parse %s response %q: %w", a.kind, clip(data), err)
		}
		// A search that fails (a function given the wrong type) selects
		// nothing: raw then auto-detects, as AIPerf does.
		found, err := a.search(v)
		if err != nil && a.strict {
			return Chunk{}, fmt.Errorf("read %s response: %w", a.kind, err)
		}
		if err == nil {
			c = convertValue(found, st)
			selected = c.HasContent()
		}
	}
	switch {
	case selected || a.query != nil && a.strict:
	case obj != nil:
		c = obj.detect(st)
	default:
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return Chunk{}, fmt.Errorf("parse %s response %q: %w", a.kind, clip(data), err)
		}
		c = convertValue(v, st)
	}
	if obj == nil {
		return c, nil
	}
	if bytes.Equal(obj.Error, []byte("false")) {
		obj.Error = nil // {"error": false} says there is none
	}
	if err := obj.err(c.HasContent() || c.Choices > 0); err != nil {
		return Chunk{}, err
	}
	if c.Usage == nil && isValue(obj.Usage) {
		var u usageJSON
		if json.Unmarshal(obj.Usage, &u) == nil {
			c.Usage = usageOf(&u)
		}
	}
	return c, nil
}

// detect finds the answer where the usual APIs put it, in AIPerf's
// order: embeddings (data[].embedding, embeddings, embedding), rankings
// (rankings, results), then text (text, content, response, output,
// result, OpenAI's choices[0]).
func (r *rawJSON) detect(st *State) Chunk {
	var c Chunk
	if n := countEmbeddings(r.Data); n > 0 {
		c.Items = n
		return c
	}
	for _, m := range []json.RawMessage{r.Embeddings, r.Embedding} {
		var v vectors
		if len(m) > 0 && json.Unmarshal(m, &v) == nil && v > 0 {
			c.Items = int(v)
			return c
		}
	}
	for _, m := range []json.RawMessage{r.Rankings, r.Results} {
		if n, ok := countElements(m); ok {
			c.Items = n
			return c
		}
	}
	for _, m := range []json.RawMessage{r.Text, r.Content, r.Response, r.Output, r.Result} {
		if t := textOf(m); t != "" {
			c.Text = stateText(st, t)
			return c
		}
	}
	readChoice(r.Choices, &c, st)
	return c
}

// countEmbeddings counts the items of a data list that carry an
// embedding (OpenAI's {"object": "embedding", "embedding": […]}).
func countEmbeddings(data json.RawMessage) int {
	if len(data) == 0 || data[0] != '[' {
		return 0
	}
	// Items that are not objects are type errors, which encoding/json
	// records and skips: the objects among them are still read.
	var items []struct {
		Embedding present `json:"embedding"`
	}
	_ = json.Unmarshal(data, &items)
	n := 0
	for _, it := range items {
		if it.Embedding {
			n++
		}
	}
	return n
}

// textOf is a text member's text: a string, or a list of strings joined.
func textOf(m json.RawMessage) string {
	if len(m) == 0 {
		return ""
	}
	switch m[0] {
	case '"':
		return stringOf(m)
	case '[':
		var parts []string
		if json.Unmarshal(m, &parts) == nil {
			return strings.Join(parts, "")
		}
	}
	return ""
}

// readChoice reads OpenAI's choices: their number, and choices[0]'s
// text, message.content or delta.content and finish_reason.
func readChoice(choices json.RawMessage, c *Chunk, st *State) {
	var list []json.RawMessage
	if len(choices) == 0 || choices[0] != '[' || json.Unmarshal(choices, &list) != nil {
		return
	}
	c.Choices = len(list)
	if len(list) == 0 || list[0][0] != '{' {
		return
	}
	var ch struct {
		Text         json.RawMessage `json:"text"`
		Message      json.RawMessage `json:"message"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason json.RawMessage `json:"finish_reason"`
	}
	if json.Unmarshal(list[0], &ch) != nil {
		return
	}
	c.FinishReason = stringOf(ch.FinishReason)
	t := stringOf(ch.Text)
	for _, m := range []json.RawMessage{ch.Message, ch.Delta} {
		if t != "" {
			break
		}
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		if len(m) > 0 && m[0] == '{' && json.Unmarshal(m, &msg) == nil {
			t = stringOf(msg.Content)
		}
	}
	c.Text = stateText(st, t)
}

// convertValue reads a value response_field selected (or a body that is
// no object): a string is text; a number is text too; a list of numbers
// is one vector, a list of lists that many vectors; a list of strings is
// text, joined; any other list counts its items; an object is read as a
// whole answer would be.
func convertValue(v any, st *State) Chunk {
	var c Chunk
	switch v := v.(type) {
	case string:
		c.Text = stateText(st, v)
	case float64:
		st.Text = strconv.AppendFloat(st.Text[:0], v, 'f', -1, 64)
		c.Text = st.Text
	case []any:
		if len(v) == 0 {
			break
		}
		switch v[0].(type) {
		case float64:
			c.Items = 1
		case string:
			st.Text = st.Text[:0]
			for _, s := range v {
				if s, ok := s.(string); ok {
					st.Text = append(st.Text, s...)
				}
			}
			if len(st.Text) > 0 {
				c.Text = st.Text
			}
		default:
			c.Items = len(v)
		}
	case map[string]any:
		data, err := json.Marshal(v)
		var r rawJSON
		if err == nil && json.Unmarshal(data, &r) == nil {
			c = r.detect(st)
		}
	}
	return c
}

// empty explains an answer in which nothing was found.
func (a *answerReader) empty(c Chunk) string {
	switch {
	case c.HasContent():
		return ""
	case a.query != nil && a.strict:
		return fmt.Sprintf("response_field %q selects nothing in the response: check it against a response, or leave it out to auto-detect", a.field)
	case a.query != nil:
		return fmt.Sprintf("response_field %q selects nothing in the response, and no text, embeddings or rankings were found where the usual APIs put them", a.field)
	}
	return "the response has no text, embeddings or rankings where the usual APIs put them (text, content, response, output, result, choices[0], data[].embedding, embeddings, embedding, rankings, results): set --extra-inputs response_field:<JMESPath expression> to say where the answer is"
}
