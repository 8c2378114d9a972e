package endpoint

// chatType is OpenAI's Chat Completions API (/v1/chat/completions).
type chatType struct{}

func (chatType) Path(bool) string { return "/v1/chat/completions" }

func (chatType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio | Video}
}

// Build makes the body in AIPerf's key order: messages, model, stream, the
// token limit, --extra-inputs, then stream_options.
func (chatType) Build(in Input) ([]byte, error) {
	o := object{kind: Chat}
	o.add("messages", chatMessages(in))
	o.add("model", in.Model)
	o.add("stream", in.Streaming)
	if in.MaxTokens > 0 {
		key := "max_completion_tokens"
		if in.LegacyMaxTokens {
			key = "max_tokens"
		}
		o.add(key, in.MaxTokens)
	}
	o.merge(in.Extra)
	addStreamOptions(&o, in)
	return o.bytes()
}

// addStreamOptions asks a stream for its usage (OpenAI's
// stream_options.include_usage) unless the extras set stream_options.
func addStreamOptions(o *object, in Input) {
	if in.Streaming && in.IncludeUsage && !o.has("stream_options") {
		o.add("stream_options", map[string]bool{"include_usage": true})
	}
}

// chatMessages are the system message, the conversation so far and the
// new turn. A turn of one text and no media is a plain string content;
// otherwise content is a list of parts: texts, then images, audio, video.
func chatMessages(in Input) []any {
	msgs := make([]any, 0, len(in.History)+2)
	if in.System != "" {
		msgs = append(msgs, Message{Role: "system", Content: in.System})
	}
	for _, m := range in.History {
		msgs = append(msgs, m)
	}
	return append(msgs, userMessage{Role: "user", Content: chatContent(in)})
}

// userMessage is the new turn: its content a string or a list of parts.
type userMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type chatPart struct {
	Type       string     `json:"type"`
	Text       string     `json:"text,omitempty"`
	ImageURL   *urlPart   `json:"image_url,omitempty"`
	InputAudio *audioPart `json:"input_audio,omitempty"`
	VideoURL   *urlPart   `json:"video_url,omitempty"`
}

type urlPart struct {
	URL string `json:"url"`
}

type audioPart struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

func chatContent(in Input) any {
	texts := in.PromptTexts()
	if len(texts) == 1 && len(in.Images)+len(in.Audios)+len(in.Videos) == 0 {
		return texts[0]
	}
	parts := make([]chatPart, 0, len(texts)+len(in.Images)+len(in.Audios)+len(in.Videos))
	for _, t := range texts {
		if t != "" {
			parts = append(parts, chatPart{Type: "text", Text: t})
		}
	}
	for _, m := range in.Images {
		parts = append(parts, chatPart{Type: "image_url", ImageURL: &urlPart{m.URL}})
	}
	for _, m := range in.Audios {
		parts = append(parts, chatPart{Type: "input_audio", InputAudio: &audioPart{Data: base64Of(m), Format: m.Format}})
	}
	for _, m := range in.Videos {
		parts = append(parts, chatPart{Type: "video_url", VideoURL: &urlPart{m.URL}})
	}
	return parts
}

func (chatType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return Chat.parse(data, streaming)
}

func (chatType) Empty(c Chunk) string { return openAIEmpty(c) }

// openAIEmpty explains a chat or completions answer without content.
func openAIEmpty(c Chunk) string {
	switch {
	case c.HasContent():
		return ""
	case c.Choices == 0:
		return "the response has no choices"
	}
	return "the response's choices carry no content (content null or empty)"
}
