package endpoint

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

func TestMessagesBuild(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want string
	}{
		// AIPerf's order: messages, model, max_tokens, stream, system,
		// then the extras.
		{"max_tokens defaults, no stream key", Input{Model: "claude", Prompt: "hi"},
			`{"messages":[{"role":"user","content":"hi"}],"model":"claude","max_tokens":1024}`},
		{"streaming with system, history and extras", Input{Model: "claude", System: "Be brief.", Prompt: "and now?", MaxTokens: 200, Streaming: true,
			History: []Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi!"}},
			Extra: []Field{{"max_tokens", json.RawMessage("300")}, {"thinking", json.RawMessage(`{"type":"enabled","budget_tokens":256}`)},
				{"stream", json.RawMessage("false")}}},
			`{"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi!"},{"role":"user","content":"and now?"}],` +
				`"model":"claude","max_tokens":300,"stream":false,"system":"Be brief.","thinking":{"type":"enabled","budget_tokens":256}}`},
		{"images are base64 or url sources after the text", Input{Model: "claude", Prompt: "describe", MaxTokens: 8,
			Images: []MediaItem{{URL: "data:image/png;base64,iVBORw0K", Format: "png"}, {URL: "https://example.com/cat.jpg", Format: "jpeg"},
				{Data: []byte{1, 2, 3}, Format: "jpg"}, {URL: "data:image/webp;base64,UklG", Data: []byte("RIFF"), Format: "webp"}}},
			`{"messages":[{"role":"user","content":[{"type":"text","text":"describe"},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},` +
				`{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AQID"}},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGRg=="}}]}],"model":"claude","max_tokens":8}`},
		{"a batch's texts are blocks", Input{Model: "claude", Prompt: "a", Texts: []string{"a", "b"}},
			`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"model":"claude","max_tokens":1024}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Messages.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("body\n got %s\nwant %s", b, tc.want)
			}
		})
	}
	for medium, in := range map[string]Input{
		"audio": {Model: "m", Prompt: "x", Audios: []MediaItem{{URL: "data:audio/wav;base64,UklG", Format: "wav"}}},
		"video": {Model: "m", Prompt: "x", Videos: []MediaItem{{URL: "https://example.com/v.mp4", Format: "mp4"}}},
	} {
		if _, err := Messages.Body(in); err == nil || !strings.Contains(err.Error(), "no "+medium+" input") {
			t.Errorf("%s: got %v, want a refusal", medium, err)
		}
	}
}

func TestMessagesCaps(t *testing.T) {
	k, err := Parse("messages")
	if err != nil {
		t.Fatal(err)
	}
	if p := k.Path(false); p != "/v1/messages" {
		t.Errorf("path %q", p)
	}
	want := Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image,
		APIKeyHeader: "x-api-key", Headers: [][2]string{{"anthropic-version", "2023-06-01"}}}
	if got := k.Caps(); !reflect.DeepEqual(got, want) {
		t.Errorf("caps %+v, want %+v", got, want)
	}
}

func TestMessagesStream(t *testing.T) {
	events := readEventsFixture(t, "messages/stream.sse")
	d := Messages.NewDecoder()
	for range 2 { // the second time, on a Decoder reset after the first
		r := readFixtureStream(d, events)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if want := `I'll check the current weather in Paris for you.get_weather{"location": "Paris, France", "unit": "celsius"}`; r.text != want {
			t.Errorf("text %q, want %q", r.text, want)
		}
		if want := "The user wants the weather in Paris. I should call the get_weather tool."; r.reasoning != want {
			t.Errorf("reasoning %q, want %q", r.reasoning, want)
		}
		// 2 thinking deltas, 2 text deltas, the tool's name and 2
		// non-empty input_json_delta events.
		if r.content != 7 || r.doneAt != len(events)-1 || r.finish != "tool_use" {
			t.Errorf("%d events with content, done at %d of %d, finish %q", r.content, r.doneAt, len(events), r.finish)
		}
		// input_tokens and both cache counts from message_start,
		// output_tokens from message_delta.
		want := &record.Usage{PromptTokens: 472 + 2048, CompletionTokens: 89, TotalTokens: 472 + 2048 + 89, CacheReadTokens: 2048, HasCache: true}
		if !reflect.DeepEqual(r.usage, want) {
			t.Errorf("usage %+v, want %+v", r.usage, want)
		}
	}
}

// TestMessagesStreamUsage: a later event's counts replace the earlier ones
// it carries; the usage is returned by the events that complete it, never
// by message_start (a stream cut after it would pass for whole).
func TestMessagesStreamUsage(t *testing.T) {
	start := func(usage string) string {
		return `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":` + usage + `}}`
	}
	tests := []struct {
		name   string
		events []string
		want   *record.Usage
	}{
		{"output_tokens alone in message_delta",
			[]string{start(`{"input_tokens":12,"output_tokens":1}`), `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}`},
			&record.Usage{PromptTokens: 12, CompletionTokens: 30, TotalTokens: 42}},
		{"cumulative message_delta",
			[]string{start(`{"input_tokens":10,"cache_creation_input_tokens":null,"cache_read_input_tokens":5,"output_tokens":1}`),
				`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":7}}`},
			&record.Usage{PromptTokens: 15, CompletionTokens: 7, TotalTokens: 22, CacheReadTokens: 5, HasCache: true}},
		{"message_delta without usage", []string{start(`{"input_tokens":3,"output_tokens":4}`), `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`},
			&record.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		{"no message_start usage", []string{start(`null`), `{"type":"message_delta","delta":{},"usage":{"output_tokens":2}}`},
			&record.Usage{CompletionTokens: 2, TotalTokens: 2}},
		{"message_start, then message_stop", []string{start(`{"input_tokens":3,"output_tokens":4}`)},
			&record.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}},
		{"no usage at all", []string{start(`null`)}, nil},
	}
	d := Messages.NewDecoder()
	for _, tc := range tests {
		d.Reset()
		var got *record.Usage
		for _, ev := range append(tc.events, `{"type":"message_stop"}`) {
			c, err := d.Chunk([]byte(ev))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if strings.Contains(ev, "message_start") && c.Usage != nil {
				t.Errorf("%s: message_start returned usage", tc.name)
			}
			if c.Done {
				got = c.Usage
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: usage %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestMessagesResponse(t *testing.T) {
	d := Messages.NewDecoder()
	c, err := d.Response(fixtureBytes(t, "messages/message.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The tool's input as compact JSON, after its name.
	want := Chunk{Text: []byte(`I'll check the current weather in Paris for you.get_weather{"location":"Paris, France","unit":"celsius"}`),
		Reasoning:    []byte("The user wants the weather in Paris. I should call the get_weather tool."),
		Usage:        &record.Usage{PromptTokens: 2520, CompletionTokens: 89, TotalTokens: 2609, CacheReadTokens: 2048, HasCache: true},
		FinishReason: "tool_use"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if msg := d.Empty(c); msg != "" {
		t.Errorf("Empty %q", msg)
	}

	for _, body := range []string{string(fixtureBytes(t, "messages/empty.json")), `{"type":"message","content":null}`,
		`{"type":"message","content":[{"type":"text","text":""},{"type":"tool_use","name":"","input":{}},{"type":"redacted_thinking","data":"x"}]}`} {
		c, err := d.Response([]byte(body))
		if err != nil || c.HasContent() || !strings.Contains(d.Empty(c), "the message has no text, thinking or tool_use content") {
			t.Errorf("%.40s: got %+v %v, Empty %q", body, c, err, d.Empty(c))
		}
	}
}

func TestMessagesServerErrors(t *testing.T) {
	events := readEventsFixture(t, "messages/stream_error.sse")
	tests := []struct {
		name, data string
		streaming  bool
		want       ServerError
	}{
		{"error response", string(fixtureBytes(t, "messages/error.json")), false, ServerError{
			Message: `invalid_request_error: messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row`}},
		{"error event", string(events[len(events)-1].data), true, ServerError{Message: "overloaded_error: Overloaded"}},
		{"an OpenAI-style error from a proxy", `{"error":{"message":"no such model","code":404}}`, false, ServerError{Code: 404, Message: "no such model"}},
		{"an error without an object", `{"type":"error"}`, true, ServerError{Message: "an error without a message"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Messages.NewDecoder()
			read := d.Response
			if tc.streaming {
				read = d.Chunk
			}
			c, err := read([]byte(tc.data))
			var se *ServerError
			if !errors.As(err, &se) || !reflect.DeepEqual(c, Chunk{}) {
				t.Fatalf("got %+v %v, want a server error", c, err)
			}
			if *se != tc.want {
				t.Errorf("got %+v, want %+v", *se, tc.want)
			}
		})
	}
	// The text before the error event was read.
	if r := readFixtureStream(Messages.NewDecoder(), events); r.text != "Hello" || !IsServerError(r.err) || r.done {
		t.Errorf("stream: %+v", r)
	}
}

func TestMessagesMalformed(t *testing.T) {
	for _, tc := range []struct {
		data      string
		streaming bool
		wantErr   bool
	}{
		{`{"type":"content_block_delta","delta":{"type":"text_delta","text":5}}`, true, true},
		{`{"type":"message_delta","usage":{"output_tokens":1.5}}`, true, true},
		{`"message_stop"`, true, true},
		{`{"type":"message","content":{}}`, false, true},
		{`{"type":"message"`, false, true},
		// A member of an unexpected type in an event Read skips is no
		// reason to fail.
		{`{"type":"content_block_stop","index":0,"delta":5}`, true, false},
		{`{"type":"ping","usage":"none"}`, true, false},
	} {
		c, err := Messages.NewDecoder().Chunk([]byte(tc.data))
		if !tc.streaming {
			c, err = Messages.NewDecoder().Response([]byte(tc.data))
		}
		if (err != nil) != tc.wantErr || IsServerError(err) || !reflect.DeepEqual(c, Chunk{}) {
			t.Errorf("%s: got %+v %v", tc.data, c, err)
		}
		if err != nil && !strings.Contains(err.Error(), "parse messages response") {
			t.Errorf("%s: error %q says not what was read", tc.data, err)
		}
	}
}

func FuzzMessagesRead(f *testing.F) {
	addFixtureSeeds(f, "messages")
	f.Add([]byte(`{"type":"message_delta","usage":{"input_tokens":1,"cache_read_input_tokens":2}}`), true)
	f.Add([]byte(`{"type":"content_block_start","content_block":{"type":"tool_use","name":"f","input":[1, 2]}}`), true)
	typ := Messages.Type()
	f.Fuzz(func(t *testing.T, data []byte, streaming bool) {
		c := checkTypeRead(t, typ, data, streaming)
		if u := c.Usage; u != nil && u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Fatalf("%q: usage %+v does not add up", data, *u)
		}
	})
}

// BenchmarkMessagesStream reads the fixture stream's events with a reused
// Decoder: the client's per-event cost.
func BenchmarkMessagesStream(b *testing.B) {
	events := readEventsFixture(b, "messages/stream.sse")
	d := Messages.NewDecoder()
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
