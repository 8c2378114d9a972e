package endpoint

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

// wavBytes is the start of a WAV file: RIFF header and a few samples.
var wavBytes = []byte("RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x08\x00\x00\x00\x01\x00\xff\xff\x00\x80\xff\x7f")

func TestAudioTranscriptionBuild(t *testing.T) {
	wav := MediaItem{URL: DataURI("audio/wav", wavBytes), Format: "wav", Data: wavBytes, Seconds: 0.0003}
	file := func(filename, contentType string, data []byte) part {
		return part{name: "file", filename: filename, contentType: contentType, data: data}
	}
	tests := []struct {
		name string
		in   Input
		want []part
	}{
		{"wav", Input{Model: "whisper-1", Audios: []MediaItem{wav}},
			[]part{file("audio.wav", "audio/wav", wavBytes), text("model", "whisper-1"), text("response_format", "json")}},
		{"streaming with a prompt", Input{Model: "m", Prompt: "Names: Kenobi.", Streaming: true, Audios: []MediaItem{wav}},
			[]part{file("audio.wav", "audio/wav", wavBytes), text("model", "m"), text("response_format", "json"),
				text("stream", "true"), text("prompt", "Names: Kenobi.")}},
		{"mp3 from the URI's payload", Input{Model: "m", Audios: []MediaItem{{URL: "data:audio/mpeg;base64," + b64([]byte("ID3\x04mp3")), Format: "MP3"}}},
			[]part{file("audio.mp3", "audio/mpeg", []byte("ID3\x04mp3")), text("model", "m"), text("response_format", "json")}},
		{"format from the data URI, raw base64 payload", Input{Model: "m", Audios: []MediaItem{{URL: "data:audio/x-wav;base64," + b64(wavBytes)}}},
			[]part{file("audio.wav", "audio/wav", wavBytes), text("model", "m"), text("response_format", "json")}},
		{"flac", Input{Model: "m", Audios: []MediaItem{{Data: []byte("fLaC"), Format: "flac"}}},
			[]part{file("audio.flac", "audio/flac", []byte("fLaC")), text("model", "m"), text("response_format", "json")}},
		{"extras: built names replaced in place, file ignored", Input{Model: "m", Audios: []MediaItem{wav}, Extra: []Field{
			{"response_format", json.RawMessage(`"verbose_json"`)}, {"file", json.RawMessage(`"x"`)},
			{"language", json.RawMessage(`"en"`)}, {"temperature", json.RawMessage("0")}}},
			[]part{file("audio.wav", "audio/wav", wavBytes), text("model", "m"), text("response_format", "verbose_json"),
				text("language", "en"), text("temperature", "0")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := AudioTranscription.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkParts(t, readParts(t, AudioTranscription, body), tc.want)
		})
	}
}

func TestAudioTranscriptionBuildErrors(t *testing.T) {
	wav := MediaItem{Data: wavBytes, Format: "wav"}
	tests := []struct {
		name, want string
		in         Input
	}{
		{"no audio", "got 0", Input{Model: "m"}},
		{"two clips", "got 2", Input{Model: "m", Audios: []MediaItem{wav, wav}}},
		{"a URL", "URL", Input{Model: "m", Audios: []MediaItem{{URL: "https://example.com/a.wav", Format: "wav"}}}},
		{"no format", "unknown format", Input{Model: "m", Audios: []MediaItem{{Data: wavBytes}}}},
		{"a format unfit for a file name", "unknown format", Input{Model: "m", Audios: []MediaItem{{Data: wavBytes, Format: "wav\r\nX: y"}}}},
		{"bad base64", "base64", Input{Model: "m", Audios: []MediaItem{{URL: "data:audio/wav;base64,%%%", Format: "wav"}}}},
		{"boundary in the prompt", "boundary", Input{Model: "m", Prompt: Boundary, Audios: []MediaItem{wav}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AudioTranscription.Body(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "build audio_transcription body") {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestAudioTranscriptionCaps(t *testing.T) {
	c := AudioTranscription.Caps()
	if c.TokenizesInput || !c.Streams || !c.ProducesTokens || !c.Multipart || c.Media != Audio {
		t.Fatalf("caps %+v", c)
	}
	if AudioTranscription.Path(true) != "/v1/audio/transcriptions" {
		t.Fatal(AudioTranscription.Path(true))
	}
}

func TestAudioTranscriptionRead(t *testing.T) {
	tests := []struct {
		name, data string
		want       Chunk
	}{
		{"openai json", string(fixture(t, AudioTranscription, "openai-json.json")), Chunk{
			Text:  []byte("Imagine the wildest idea that you've ever had, and you're curious about how it might scale to something that's a 100, a 1,000 times bigger."),
			Usage: &record.Usage{PromptTokens: 14, CompletionTokens: 45, TotalTokens: 59}}},
		{"whisper duration usage counts no tokens", string(fixture(t, AudioTranscription, "whisper-duration.json")),
			Chunk{Text: []byte("Hello there, general Kenobi.")}},
		{"no text", `{"text":""}`, Chunk{}},
		{"null text", `{"text":null,"usage":null}`, Chunk{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec := AudioTranscription.NewDecoder()
			got, err := dec.Response([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			if msg := dec.Empty(got); (msg == "") != (len(tc.want.Text) > 0) {
				t.Fatalf("Empty %q", msg)
			}
		})
	}
	for _, data := range []string{string(fixture(t, AudioTranscription, "error.json")), `{"object":"error","message":"busy","code":503}`,
		`{"type":"error","message":"x"}`} {
		if _, err := AudioTranscription.ParseResponse([]byte(data)); !IsServerError(err) {
			t.Errorf("%s: err %v, want a server error", data, err)
		}
	}
	for _, data := range []string{`{"text":5}`, `{"text":"a"`, ``} {
		if _, err := AudioTranscription.ParseResponse([]byte(data)); err == nil || IsServerError(err) ||
			!strings.Contains(err.Error(), "parse audio_transcription response") {
			t.Errorf("%s: err %v, want a parse error", data, err)
		}
	}
}

// TestAudioTranscriptionStream reads OpenAI's and vLLM's event sequences
// as the client does.
func TestAudioTranscriptionStream(t *testing.T) {
	type step struct {
		text  string
		done  bool
		usage *record.Usage
	}
	usage := &record.Usage{PromptTokens: 14, CompletionTokens: 11, TotalTokens: 25}
	tests := []struct {
		name   string
		events [][]byte
		want   []step
	}{
		{"openai: done repeats the deltas' text", sseData(t, AudioTranscription, "stream.sse"),
			[]step{{text: "I"}, {text: " see skies of blue"}, {text: " and clouds of white."}, {done: true, usage: usage}}},
		{"openai: done without deltas carries the text", [][]byte{
			[]byte(`{"type":"transcript.text.done","text":"whole","usage":{"type":"tokens","input_tokens":14,"output_tokens":11,"total_tokens":25}}`)},
			[]step{{text: "whole", done: true, usage: usage}}},
		{"vllm", sseData(t, AudioTranscription, "vllm-stream.sse"),
			[]step{{text: " The quick"}, {text: " brown fox."}, {usage: &record.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36}}, {done: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec := AudioTranscription.NewDecoder()
			if len(tc.events) != len(tc.want) {
				t.Fatalf("%d events", len(tc.events))
			}
			for i, ev := range tc.events {
				c, err := dec.Chunk(ev)
				if err != nil {
					t.Fatal(err)
				}
				w := tc.want[i]
				if string(c.Text) != w.text || c.Done != w.done || !reflect.DeepEqual(c.Usage, w.usage) || c.HasContent() != (w.text != "") {
					t.Fatalf("event %d: got text %q done %v usage %+v", i, c.Text, c.Done, c.Usage)
				}
			}
			dec.Reset()
		})
	}
	// A Reset decoder forgets the deltas of the last stream.
	dec := AudioTranscription.NewDecoder()
	for _, ev := range sseData(t, AudioTranscription, "stream.sse")[:1] {
		_, _ = dec.Chunk(ev)
	}
	dec.Reset()
	if c, _ := dec.Chunk([]byte(`{"type":"transcript.text.done","text":"again"}`)); string(c.Text) != "again" {
		t.Fatalf("after Reset: %q", c.Text)
	}
}
