package dataset

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// sageMakerLine is one record of Amazon SageMaker's endpoint data capture.
// Capture files carry more fields (eventVersion, customAttributes, …);
// they are ignored, as AIPerf ignores them.
type sageMakerLine struct {
	CaptureData struct {
		EndpointInput  *captureEntry `json:"endpointInput"`
		EndpointOutput *captureEntry `json:"endpointOutput"`
	} `json:"captureData"`
	EventMetadata *struct {
		EventID       string  `json:"eventId"`
		InferenceTime *string `json:"inferenceTime"`
	} `json:"eventMetadata"`
}

// captureEntry is a captured body: data, JSON text or base64 of it.
type captureEntry struct {
	Data     json.RawMessage `json:"data"`
	Encoding *string         `json:"encoding"`
}

// captured is a chat request as captured: what the replay sends of it.
type captured struct {
	at        int64 // ns since the epoch
	messages  json.RawMessage
	tools     json.RawMessage
	maxTokens int
	text      string
}

// readSageMaker reads SageMaker data capture JSONL (one file, or a
// directory searched recursively for *.jsonl, as captures are kept in
// hourly folders). Each record is a request of its own, replayed with its
// captured messages (and tools) at its inferenceTime, the earliest at 0;
// the output length asked is its max_tokens (else max_completion_tokens).
// As in AIPerf, only chat requests (with "messages") can be replayed, and
// the body is otherwise built as for any chat request: --model, --streaming
// and --extra-inputs apply. A time without a zone is taken as UTC (AIPerf
// takes the machine's zone; the replay is the same unless a capture mixes
// both).
func readSageMaker(files []sourceFile, o FileOptions) ([]Conversation, error) {
	var reqs []captured
	for i := range files {
		f := &files[i]
		for _, l := range f.lines {
			r, err := parseSageMakerLine(f, l)
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, r)
		}
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].at < reqs[j].at })
	start := reqs[0].at
	convs := make([]Conversation, len(reqs))
	for i, r := range reqs {
		extra := map[string]json.RawMessage{"messages": r.messages}
		if len(r.tools) > 0 && string(r.tools) != "null" {
			extra["tools"] = r.tools
		}
		raw, err := json.Marshal(extra)
		if err != nil {
			return nil, err
		}
		convs[i] = Conversation{ID: fmt.Sprintf("session_%06d", i), Standalone: true, Turns: []Turn{{
			Text: r.text, InputTokens: o.Corpus.Count(r.text), MaxTokens: r.maxTokens,
			TimestampMs: float64(r.at-start) / 1e6, HasTimestamp: true, Extra: raw,
		}}}
	}
	return convs, nil
}

// parseSageMakerLine reads one capture record.
func parseSageMakerLine(f *sourceFile, l sourceLine) (captured, error) {
	var rec sageMakerLine
	if err := json.Unmarshal(l.data, &rec); err != nil {
		return captured{}, f.errorf(l, "not a capture record: %v", err)
	}
	if rec.EventMetadata == nil || rec.EventMetadata.InferenceTime == nil {
		return captured{}, f.errorf(l, "no eventMetadata.inferenceTime: not a SageMaker data capture record")
	}
	at, err := parseInferenceTime(*rec.EventMetadata.InferenceTime)
	if err != nil {
		return captured{}, f.errorf(l, "eventMetadata.inferenceTime %q: want ISO 8601 (2024-05-01T12:00:00.123Z)", *rec.EventMetadata.InferenceTime)
	}
	if rec.CaptureData.EndpointInput == nil {
		return captured{}, f.errorf(l, "no captureData.endpointInput: the request was not captured")
	}
	body, err := rec.CaptureData.EndpointInput.decode()
	if err != nil {
		return captured{}, f.errorf(l, "captureData.endpointInput: %v", err)
	}
	var req struct {
		Messages            json.RawMessage `json:"messages"`
		Tools               json.RawMessage `json:"tools"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return captured{}, f.errorf(l, "captureData.endpointInput: not a JSON request body: %v", err)
	}
	text, err := chatMessagesText(req.Messages)
	if err != nil {
		return captured{}, f.errorf(l, "captureData.endpointInput: %v; only OpenAI-compatible chat requests can be replayed", err)
	}
	r := captured{at: at, messages: req.Messages, tools: req.Tools, text: text}
	for _, n := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if n != nil {
			if *n < 1 {
				return captured{}, f.errorf(l, "max_tokens %d: it must be at least 1 token", *n)
			}
			r.maxTokens = *n
			break
		}
	}
	return r, nil
}

// decode is the captured body's JSON: data is JSON text (encoding JSON)
// or its base64 (BASE64, the default).
func (c *captureEntry) decode() ([]byte, error) {
	var data string
	if err := json.Unmarshal(c.Data, &data); err != nil {
		return nil, fmt.Errorf("data is not a string")
	}
	enc := "BASE64"
	if c.Encoding != nil {
		enc = *c.Encoding
	}
	switch enc {
	case "JSON":
		return []byte(data), nil
	case "BASE64":
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("data is not base64: %v", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("encoding %q: only JSON and BASE64 captures can be replayed", enc)
}

// chatMessagesText checks a chat request's messages (a non-empty list of
// objects, each with a role) and returns their text, for counting.
func chatMessagesText(raw json.RawMessage) (string, error) {
	var msgs []map[string]json.RawMessage
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("no \"messages\"")
	}
	if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) == 0 {
		return "", fmt.Errorf("\"messages\" is not a non-empty list of message objects")
	}
	var texts []string
	for i, m := range msgs {
		var role string
		if m == nil || json.Unmarshal(m["role"], &role) != nil || role == "" {
			return "", fmt.Errorf("message %d has no \"role\"", i+1)
		}
		texts = appendTexts(texts, m["content"])
	}
	return strings.Join(texts, "\n"), nil
}

// parseInferenceTime reads an ISO 8601 time as nanoseconds since the epoch.
func parseInferenceTime(s string) (int64, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixNano(), nil
		}
	}
	return 0, fmt.Errorf("not ISO 8601")
}
