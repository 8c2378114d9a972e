package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// audioTranscriptionType is OpenAI's Audio API, transcriptions
// (/v1/audio/transcriptions), as Whisper-style servers (vLLM, SGLang, NIM)
// serve it: a multipart upload of one audio clip, answered with its text.
// The prompt is the audio, so no input tokens are counted.
type audioTranscriptionType struct{}

func (audioTranscriptionType) Path(bool) string { return "/v1/audio/transcriptions" }

func (audioTranscriptionType) Caps() Caps {
	return Caps{ProducesTokens: true, Streams: true, Media: Audio, Multipart: true}
}

// Build makes the multipart body: the clip as the file part "file"
// (audio.<format>), model, response_format json, stream true when
// streaming, prompt when the turn has text, then --extra-inputs (but
// file, which is the endpoint's).
func (audioTranscriptionType) Build(in Input) ([]byte, error) {
	if len(in.Audios) != 1 {
		return nil, fmt.Errorf("build audio_transcription body: want exactly one audio clip a request, got %d (use --audio-batch-size 1)", len(in.Audios))
	}
	data, format, err := audioFile(in.Audios[0])
	if err != nil {
		return nil, fmt.Errorf("build audio_transcription body: %w", err)
	}
	f := form{kind: AudioTranscription}
	f.file("file", "audio."+format, audioMIME(format), data)
	f.field("model", in.Model)
	f.field("response_format", "json")
	if in.Streaming {
		f.field("stream", "true")
	}
	if in.Prompt != "" {
		f.field("prompt", in.Prompt)
	}
	if err := f.merge(in.Extra, "file"); err != nil {
		return nil, err
	}
	return f.bytes()
}

// audioFile is a clip's bytes and format: m.Data, or its data: URI's (or
// raw base64 URL's) payload decoded; m.Format, else the data: URI's type.
func audioFile(m MediaItem) ([]byte, string, error) {
	if m.Data == nil && isHTTP(m.URL) {
		return nil, "", errors.New("audio: the clip is a URL; transcription uploads the clip's bytes (give it as a data: URI or base64)")
	}
	format := strings.ToLower(m.Format)
	if format == "" {
		if rest, ok := strings.CutPrefix(m.URL, "data:"); ok {
			mt, _, _ := strings.Cut(rest, ";")
			mt, _, _ = strings.Cut(mt, ",")
			format = audioFormat(strings.ToLower(mt))
		}
	}
	if format == "" || !mimeToken("audio/"+format) {
		return nil, "", fmt.Errorf("audio: unknown format %q (want wav, mp3, flac…)", m.Format)
	}
	data := m.Data
	if data == nil {
		var err error
		if data, err = decodeBase64(base64Of(m)); err != nil {
			return nil, "", fmt.Errorf("audio: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, "", errors.New("audio: no data")
	}
	return data, format, nil
}

// audioMIME is the MIME type of an audio format, as AIPerf names it.
func audioMIME(format string) string {
	switch format {
	case "wav":
		return "audio/wav"
	case "mp3":
		return "audio/mpeg"
	case "m4a", "mp4":
		return "audio/mp4"
	}
	return "audio/" + format
}

// audioFormat is the format a data: URI's MIME type names, "" for none.
func audioFormat(mimeType string) string {
	sub, ok := strings.CutPrefix(mimeType, "audio/")
	if !ok {
		return ""
	}
	switch sub {
	case "wav", "x-wav", "wave", "vnd.wave":
		return "wav"
	case "mpeg", "mp3", "mpeg3", "x-mp3":
		return "mp3"
	case "mp4", "x-m4a", "m4a":
		return "m4a"
	}
	return sub
}

// transcriptionJSON is a transcription answer: a whole response's text,
// or one stream event: OpenAI's transcript.text.delta and
// transcript.text.done, or vLLM's chat-like choices[].delta.content.
type transcriptionJSON struct {
	errorJSON
	Text    string          `json:"text"`
	Delta   string          `json:"delta"`
	Usage   *inOutUsageJSON `json:"usage"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// The OpenAI transcription streaming events.
const (
	transcriptDeltaEvent = "transcript.text.delta"
	transcriptDoneEvent  = "transcript.text.done"
	// transcriptDelta marks, in State.Delta, a stream whose text came as
	// deltas: its done event's text repeats them.
	transcriptDelta = "transcript"
)

// Read reads a whole transcription or one stream event. A done event
// ends the stream with its usage, and carries its text only when no delta
// did.
func (audioTranscriptionType) Read(data []byte, streaming bool, st *State) (Chunk, error) {
	var r transcriptionJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return Chunk{}, fmt.Errorf("parse %s response %q: %w", AudioTranscription, clip(data), err)
	}
	if err := r.err(); err != nil {
		return Chunk{}, err
	}
	if st == nil {
		st = new(State)
	}
	c := Chunk{Usage: r.Usage.record(), Choices: len(r.Choices)}
	text := st.Text[:0]
	switch {
	case !streaming:
		text = append(text, r.Text...)
	case r.Type == transcriptDeltaEvent:
		text = append(text, r.Delta...)
		markDelta(st)
	case r.Type == transcriptDoneEvent:
		c.Done = true
		if !st.Delta[transcriptDelta] {
			text = append(text, r.Text...)
		}
	default:
		for _, ch := range r.Choices {
			text = append(text, ch.Delta.Content...)
			if ch.FinishReason != nil && *ch.FinishReason != "" && c.FinishReason == "" {
				c.FinishReason = *ch.FinishReason
			}
		}
	}
	st.Text = text
	if len(text) > 0 {
		c.Text = text
	}
	return c, nil
}

// markDelta records that a stream's text came as deltas.
func markDelta(st *State) {
	if st.Delta == nil {
		st.Delta = make(map[string]bool, 1)
	}
	st.Delta[transcriptDelta] = true
}

func (audioTranscriptionType) Empty(c Chunk) string {
	if c.HasContent() {
		return ""
	}
	return "the transcription has no text"
}
