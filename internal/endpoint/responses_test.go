package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestResponsesBuild(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"one text is a string content", Input{Model: "m", Prompt: "hi", Streaming: true},
			`{"input":[{"type":"message","role":"user","content":"hi"}],"model":"m","stream":true}`},
		// AIPerf's order: input, model, stream, instructions,
		// max_output_tokens, then the extras, one with a built key
		// replacing its value where it stands.
		{"conversation, instructions, limit and extras", Input{Model: "m", System: "Be brief.", Prompt: "and now?", MaxTokens: 64,
			History: []Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi!"}},
			Extra:   []Field{{"max_output_tokens", json.RawMessage("100")}, {"reasoning", json.RawMessage(`{"effort":"low"}`)}}},
			`{"input":[{"type":"message","role":"user","content":"hello"},{"type":"message","role":"assistant","content":"hi!"},` +
				`{"type":"message","role":"user","content":"and now?"}],"model":"m","stream":false,"instructions":"Be brief.",` +
				`"max_output_tokens":100,"reasoning":{"effort":"low"}}`},
		{"images and audio are parts after the text", Input{Model: "m", Prompt: "describe",
			Images: []MediaItem{{URL: "data:image/png;base64,iVBORw0K", Format: "png"}, {URL: "https://example.com/cat.jpg", Format: "jpeg"},
				{Data: []byte{1, 2, 3}, Format: "jpeg"}},
			Audios: []MediaItem{{URL: "data:audio/wav;base64,UklGRg==", Format: "wav"}, {Data: []byte("ID3"), Format: "mp3"}}},
			`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"describe"},` +
				`{"type":"input_image","image_url":"data:image/png;base64,iVBORw0K"},{"type":"input_image","image_url":"https://example.com/cat.jpg"},` +
				`{"type":"input_image","image_url":"data:image/jpeg;base64,AQID"},` +
				`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},{"type":"input_audio","input_audio":{"data":"SUQz","format":"mp3"}}]}],` +
				`"model":"m","stream":false}`},
		{"a batch's texts are parts", Input{Model: "m", Prompt: "a", Texts: []string{"a", "", "b"}},
			`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}],"model":"m","stream":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Responses.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("body\n got %s\nwant %s", b, tc.want)
			}
		})
	}
	_, err := Responses.Body(Input{Model: "m", Prompt: "x", Videos: []MediaItem{{URL: "data:video/mp4;base64,AAAA", Format: "mp4"}}})
	if err == nil || !strings.Contains(err.Error(), "no video input") {
		t.Fatalf("a video: got %v, want a refusal", err)
	}
}

func TestResponsesCaps(t *testing.T) {
	k, err := Parse("responses")
	if err != nil {
		t.Fatal(err)
	}
	if p := k.Path(true); p != "/v1/responses" {
		t.Errorf("path %q", p)
	}
	want := Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio}
	if got := k.Caps(); !reflect.DeepEqual(got, want) {
		t.Errorf("caps %+v, want %+v", got, want)
	}
}

// fixtureEvent is one event of an SSE fixture.
type fixtureEvent struct {
	name string
	data []byte
}

// readEventsFixture reads testdata/<path>, a stream as a server sends it:
// "event:" and "data:" lines, events separated by a blank line.
func readEventsFixture(t testing.TB, path string) []fixtureEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	var events []fixtureEvent
	for _, block := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
		var ev fixtureEvent
		for _, line := range strings.Split(block, "\n") {
			switch name, value, _ := strings.Cut(line, ":"); name {
			case "event":
				ev.name = strings.TrimSpace(value)
			case "data":
				if ev.data != nil {
					ev.data = append(ev.data, '\n')
				}
				ev.data = append(ev.data, strings.TrimPrefix(value, " ")...)
			}
		}
		if ev.data != nil {
			events = append(events, ev)
		}
	}
	if len(events) == 0 {
		t.Fatalf("%s: no events", path)
	}
	return events
}

func fixtureBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureStream is what a stream's events said, read as the client reads
// them: text and reasoning concatenated, the last usage, and the error
// that ended it.
type fixtureStream struct {
	text, reasoning string
	usage           *record.Usage
	finish          string
	done            bool
	// doneAt is the index of the event marked Done, content the number
	// of events with content.
	doneAt, content int
	err             error
}

func readFixtureStream(d *Decoder, events []fixtureEvent) fixtureStream {
	d.Reset()
	r := fixtureStream{doneAt: -1}
	for i, ev := range events {
		c, err := d.Chunk(ev.data)
		if err != nil {
			r.err = err
			return r
		}
		if c.Done {
			r.done, r.doneAt = true, i
		}
		if c.Usage != nil {
			r.usage = c.Usage
		}
		if c.FinishReason != "" {
			r.finish = c.FinishReason
		}
		if c.HasContent() {
			r.content++
		}
		r.text += string(c.Text)
		r.reasoning += string(c.Reasoning)
	}
	return r
}

const (
	responsesWantText      = `Hi there! Let me check the weather.get_weather{"location":"Paris, France"}`
	responsesWantReasoning = "**Answering a greeting**\n\nThe user says hello and may want the weather."
)

func TestResponsesStream(t *testing.T) {
	events := readEventsFixture(t, "responses/stream.sse")
	d := Responses.NewDecoder()
	for range 2 { // the second time, on a Decoder reset after the first
		r := readFixtureStream(d, events)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.text != responsesWantText || r.reasoning != responsesWantReasoning {
			t.Errorf("text %q reasoning %q", r.text, r.reasoning)
		}
		// 2 summary deltas, 3 text deltas (not the done event repeating
		// them), the function call's name and 2 argument deltas.
		if r.content != 8 {
			t.Errorf("%d events with content, want 8", r.content)
		}
		if r.doneAt != len(events)-1 {
			t.Errorf("done at event %d of %d", r.doneAt, len(events))
		}
		want := &record.Usage{PromptTokens: 81, CompletionTokens: 142, TotalTokens: 223, ReasoningTokens: 64, HasReasoning: true}
		if !reflect.DeepEqual(r.usage, want) {
			t.Errorf("usage %+v, want %+v", r.usage, want)
		}
	}
}

// TestResponsesTextDone: a part's output_text.done counts only when no
// delta carried that part, and a reset Decoder forgets the parts.
func TestResponsesTextDone(t *testing.T) {
	delta := `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"ab"}`
	done := func(item string, content int) string {
		return `{"type":"response.output_text.done","item_id":"` + item + `","output_index":0,"content_index":` +
			string(rune('0'+content)) + `,"text":"ab"}`
	}
	tests := []struct {
		name   string
		events []string
		want   string
	}{
		{"deltas then done", []string{delta, done("msg_1", 0)}, "ab"},
		{"done only", []string{done("msg_1", 0)}, "ab"},
		{"another content part", []string{delta, done("msg_1", 1)}, "abab"},
		{"another item", []string{delta, done("msg_2", 0)}, "abab"},
		{"an empty delta carries nothing", []string{`{"type":"response.output_text.delta","item_id":"msg_1","delta":""}`, done("msg_1", 0)}, "ab"},
	}
	d := Responses.NewDecoder()
	for _, tc := range tests {
		var events []fixtureEvent
		for _, e := range tc.events {
			events = append(events, fixtureEvent{data: []byte(e)})
		}
		if r := readFixtureStream(d, events); r.err != nil || r.text != tc.want {
			t.Errorf("%s: text %q (%v), want %q", tc.name, r.text, r.err, tc.want)
		}
	}
}

func TestResponsesResponse(t *testing.T) {
	fixture := string(fixtureBytes(t, "responses/response.json"))
	tests := []struct {
		name, body      string
		text, reasoning string
		usage           *record.Usage
		finish          string
		emptyMsg        string // a part of Empty's message; "" when there is content
	}{
		{name: "message, reasoning summary and function call", body: fixture, text: responsesWantText, reasoning: responsesWantReasoning,
			usage:  &record.Usage{PromptTokens: 81, CompletionTokens: 142, TotalTokens: 223, ReasoningTokens: 64, HasReasoning: true},
			finish: "completed"},
		{name: "incomplete with reasoning only", body: string(fixtureBytes(t, "responses/incomplete.json")),
			usage:  &record.Usage{PromptTokens: 12, CompletionTokens: 16, TotalTokens: 28, ReasoningTokens: 16, HasReasoning: true},
			finish: "max_output_tokens", emptyMsg: `no output text, reasoning or function call (it ended "max_output_tokens")`},
		{name: "output_text when output has none", body: `{"object":"response","status":"completed","output":[{"type":"message","content":[]}],"output_text":"fallback"}`,
			text: "fallback", finish: "completed"},
		{name: "output_text is no addition", body: `{"object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"a"}]}],"output_text":"a"}`,
			text: "a"},
		{name: "reasoning text without a summary", body: `{"object":"response","output":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think"}]},` +
			`{"type":"message","content":[{"type":"refusal","refusal":"no"},{"type":"output_text","text":"x"}]}],"usage":{"input_tokens":1,"output_tokens":2}}`,
			text: "x", reasoning: "think", usage: &record.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
		{name: "nothing", body: `{"object":"response","status":"completed","output":[]}`, finish: "completed",
			emptyMsg: "the response has no output text, reasoning or function call"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Responses.NewDecoder()
			c, err := d.Response([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Text) != tc.text || string(c.Reasoning) != tc.reasoning || c.FinishReason != tc.finish {
				t.Errorf("text %q reasoning %q finish %q", c.Text, c.Reasoning, c.FinishReason)
			}
			if !reflect.DeepEqual(c.Usage, tc.usage) {
				t.Errorf("usage %+v, want %+v", c.Usage, tc.usage)
			}
			if msg := d.Empty(c); tc.emptyMsg == "" && msg != "" || tc.emptyMsg != "" && !strings.Contains(msg, tc.emptyMsg) {
				t.Errorf("Empty %q, want %q", msg, tc.emptyMsg)
			}
		})
	}
}

func TestResponsesServerErrors(t *testing.T) {
	lastEvent := func(path string) string {
		events := readEventsFixture(t, path)
		return string(events[len(events)-1].data)
	}
	tests := []struct {
		name, data string
		streaming  bool
		want       ServerError
	}{
		{"failed response", string(fixtureBytes(t, "responses/failed.json")), false,
			ServerError{Message: "server_error: The model failed to generate a response."}},
		{"response.failed event", lastEvent("responses/stream_failed.sse"), true,
			ServerError{Message: "server_error: The model failed to generate a response."}},
		{"error event", lastEvent("responses/stream_error.sse"), true,
			ServerError{Message: "rate_limit_exceeded: Rate limit reached for gpt-4.1 in organization org-abc on tokens per min (TPM)."}},
		{"error event with a nested error", `{"type":"error","error":{"type":"invalid_request_error","message":"bad","code":null}}`, true,
			ServerError{Message: "invalid_request_error: bad"}},
		{"response.failed without an error", `{"type":"response.failed","response":{"status":"in_progress"}}`, true,
			ServerError{Message: "the response failed (a response.failed event without an error object)"}},
		{"failed status without an error", `{"object":"response","status":"failed","error":null}`, false,
			ServerError{Message: `the response failed (status "failed", no error object)`}},
		{"OpenAI error object", `{"error":{"message":"Invalid model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`, false,
			ServerError{Message: "model_not_found: Invalid model"}},
		{"vLLM error object", `{"object":"error","message":"The model does not exist.","type":"NotFoundError","param":null,"code":404}`, false,
			ServerError{Code: 404, Message: "The model does not exist."}},
		{"an error string", `{"error":"overloaded"}`, false, ServerError{Message: "overloaded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Responses.NewDecoder()
			read := d.Response
			if tc.streaming {
				read = d.Chunk
			}
			c, err := read([]byte(tc.data))
			var se *ServerError
			if !IsServerError(err) || !reflect.DeepEqual(c, Chunk{}) {
				t.Fatalf("got %+v %v, want a server error", c, err)
			}
			if errors.As(err, &se); *se != tc.want {
				t.Errorf("got %+v, want %+v", *se, tc.want)
			}
		})
	}
}

func TestResponsesMalformed(t *testing.T) {
	for _, tc := range []struct {
		data      string
		streaming bool
		wantErr   bool
	}{
		{`{"type":"response.output_text.delta","delta":5}`, true, true},
		{`{"type":"response.completed","response":{"usage":{"input_tokens":"5"}}}`, true, true},
		{`[]`, true, true},
		{`{"type":"response.output_text.delta"`, true, true},
		{`{"output":5}`, false, true},
		{`<html>`, false, true},
		// A member of an unexpected type in an event Read skips is no
		// reason to fail.
		{`{"type":"response.output_item.done","item":5}`, true, false},
		{`{"type":"response.mcp_call_arguments.delta","delta":{"a":1}}`, true, false},
	} {
		c, err := Responses.NewDecoder().Chunk([]byte(tc.data))
		if !tc.streaming {
			c, err = Responses.NewDecoder().Response([]byte(tc.data))
		}
		if (err != nil) != tc.wantErr || IsServerError(err) || !reflect.DeepEqual(c, Chunk{}) {
			t.Errorf("%s: got %+v %v", tc.data, c, err)
		}
		if err != nil && !strings.Contains(err.Error(), "parse responses") {
			t.Errorf("%s: error %q says not what was read", tc.data, err)
		}
	}
}

// TestResponsesStreamMatchesResponse: the stream and the whole response of
// the same answer say the same.
func TestResponsesStreamMatchesResponse(t *testing.T) {
	r := readFixtureStream(Responses.NewDecoder(), readEventsFixture(t, "responses/stream.sse"))
	c, err := Responses.ParseResponse(fixtureBytes(t, "responses/response.json"))
	if err != nil || r.err != nil {
		t.Fatal(err, r.err)
	}
	if r.text != string(c.Text) || r.reasoning != string(c.Reasoning) || !reflect.DeepEqual(r.usage, c.Usage) {
		t.Errorf("stream %q %q %+v\nwhole %q %q %+v", r.text, r.reasoning, r.usage, c.Text, c.Reasoning, c.Usage)
	}
}

// addFixtureSeeds seeds f with the fixtures under testdata/dir: whole, as
// non-streaming bodies, and each stream's events.
func addFixtureSeeds(f *testing.F, dir string) {
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures under testdata/%s (%v)", dir, err)
	}
	for _, p := range paths {
		rel, _ := filepath.Rel("testdata", p)
		if strings.HasSuffix(p, ".sse") {
			for _, ev := range readEventsFixture(f, rel) {
				f.Add(ev.data, true)
			}
			continue
		}
		f.Add(fixtureBytes(f, rel), false)
	}
}

// checkTypeRead reads data with typ on a fresh State and checks the answer
// holds together: an error leaves no Chunk, data that is no JSON is an
// error, Text and Reasoning are nil when empty, Empty agrees with
// HasContent, and reading the same data again with the State it left
// says the same.
func checkTypeRead(t *testing.T, typ Type, data []byte, streaming bool) Chunk {
	var st State
	c, err := typ.Read(data, streaming, &st)
	if err != nil {
		if !reflect.DeepEqual(c, Chunk{}) {
			t.Fatalf("%q: error %v with %+v", data, err, c)
		}
		if err2 := func() error { _, err := typ.Read(data, streaming, &st); return err }(); err2 == nil || err2.Error() != err.Error() {
			t.Fatalf("%q: error %v, then %v", data, err, err2)
		}
		return c
	}
	if !json.Valid(data) {
		t.Fatalf("%q: no JSON, read as %+v", data, c)
	}
	if c.Text != nil && len(c.Text) == 0 || c.Reasoning != nil && len(c.Reasoning) == 0 {
		t.Fatalf("%q: empty text not nil: %+v", data, c)
	}
	if (typ.Empty(c) == "") != c.HasContent() {
		t.Fatalf("%q: Empty %q with content %v", data, typ.Empty(c), c.HasContent())
	}
	first := c
	first.Text, first.Reasoning = bytes.Clone(c.Text), bytes.Clone(c.Reasoning)
	again, err := typ.Read(data, streaming, &st)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Fatalf("%q: read %+v, then %+v %v", data, first, again, err)
	}
	return first
}

func FuzzResponsesRead(f *testing.F) {
	addFixtureSeeds(f, "responses")
	f.Add([]byte(`{"type":"response.output_text.done","item_id":"m","text":"x"}`), true)
	f.Add([]byte(`{"type":"error","error":"x"}`), true)
	f.Add([]byte(`{"object":"error","code":"x"}`), false)
	typ := Responses.Type()
	f.Fuzz(func(t *testing.T, data []byte, streaming bool) {
		checkTypeRead(t, typ, data, streaming)
	})
}

// BenchmarkResponsesStream reads the fixture stream's events with a
// reused Decoder: the client's per-event cost.
func BenchmarkResponsesStream(b *testing.B) {
	events := readEventsFixture(b, "responses/stream.sse")
	d := Responses.NewDecoder()
	b.ReportAllocs()
	for b.Loop() {
		d.Reset()
		for _, ev := range events {
			if _, err := d.Chunk(ev.data); err != nil {
				b.Fatal(err)
			}
		}
	}
}
