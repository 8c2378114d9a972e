package mockserver

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestResponsesAPI(t *testing.T) {
	_, url := start(t, typesConfig())
	body := `{"model":"m","instructions":"be brief","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"one two three"}]}],"max_output_tokens":5`
	var whole struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			In    int `json:"input_tokens"`
			Out   int `json:"output_tokens"`
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	decode(t, postOK(t, url+"/v1/responses", "application/json", []byte(body+"}")), &whole)
	if whole.Object != "response" || whole.Status != "completed" || len(whole.Output) != 1 || whole.Output[0].Type != "message" ||
		whole.Output[0].Role != "assistant" || len(whole.Output[0].Content) != 1 || whole.Output[0].Content[0].Type != "output_text" ||
		wordCount(whole.Output[0].Content[0].Text) != 5 || whole.Usage.In != 5 || whole.Usage.Out != 5 || whole.Usage.Total != 10 {
		t.Fatalf("response %+v", whole)
	}

	evs := events(t, postOK(t, url+"/v1/responses", "text/event-stream", []byte(body+`,"stream":true}`)))
	var types []string
	var text strings.Builder
	for _, ev := range evs {
		typ := eventType(t, ev)
		if ev.name != typ {
			t.Errorf("event: %q carries data of type %q", ev.name, typ)
		}
		types = append(types, typ)
		if typ == "response.output_text.delta" {
			var d struct {
				ItemID       string  `json:"item_id"`
				ContentIndex *int    `json:"content_index"`
				Delta        *string `json:"delta"`
			}
			decode(t, ev.data, &d)
			if d.ItemID == "" || d.ContentIndex == nil || d.Delta == nil {
				t.Fatalf("delta %s lacks item_id, content_index or delta", ev.data)
			}
			text.WriteString(*d.Delta)
		}
	}
	if len(types) == 0 || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v: want response.created first, response.completed last", types)
	}
	deltas := 0
	for i, typ := range types {
		if typ == "response.output_text.delta" {
			deltas++
			if slices.Contains(types[:i], "response.output_text.done") {
				t.Fatalf("events %v: a delta after the text's done", types)
			}
		}
	}
	if deltas != 5 || !slices.Contains(types, "response.output_text.done") || wordCount(text.String()) != 5 {
		t.Fatalf("events %v: want 5 deltas then response.output_text.done; text %q", types, text.String())
	}
	var completed struct {
		Response struct {
			Status string `json:"status"`
			Usage  struct {
				Out int `json:"output_tokens"`
			} `json:"usage"`
		} `json:"response"`
	}
	decode(t, evs[len(evs)-1].data, &completed)
	if completed.Response.Status != "completed" || completed.Response.Usage.Out != 5 {
		t.Fatalf("response.completed %s", evs[len(evs)-1].data)
	}
	code, _, b := post(t, url+"/v1/responses", "", []byte(`{"model":"m"}`))
	wantError(t, "responses without input", code, b, http.StatusBadRequest)
}

func TestAnthropicMessages(t *testing.T) {
	cfg := typesConfig()
	cfg.APIKey = "sk-test"
	_, url := start(t, cfg)
	body := `{"model":"claude","system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"one two three"}]}],"max_tokens":6`
	key := []string{"x-api-key", "sk-test", "anthropic-version", "2023-06-01"}

	code, h, b := post(t, url+"/v1/messages", "", []byte(body+"}"), key...)
	var msg struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	decode(t, b, &msg)
	if code != 200 || h.Get("Content-Type") != "application/json" || msg.ID == "" || msg.Type != "message" || msg.Role != "assistant" ||
		len(msg.Content) != 1 || msg.Content[0].Type != "text" || wordCount(msg.Content[0].Text) != 6 ||
		msg.StopReason != "max_tokens" || msg.Usage.In != 5 || msg.Usage.Out != 6 {
		t.Fatalf("status %d message %+v", code, msg)
	}

	code, h, b = post(t, url+"/v1/messages", "", []byte(body+`,"stream":true}`), key...)
	if code != 200 || h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: status %d type %q", code, h.Get("Content-Type"))
	}
	evs := events(t, b)
	var names []string
	var text strings.Builder
	for _, ev := range evs {
		if typ := eventType(t, ev); typ != ev.name {
			t.Errorf("event: %q carries data of type %q", ev.name, typ)
		}
		names = append(names, ev.name)
		if ev.name == "content_block_delta" {
			var d struct {
				Delta struct{ Type, Text string } `json:"delta"`
			}
			decode(t, ev.data, &d)
			if d.Delta.Type != "text_delta" {
				t.Errorf("delta %s", ev.data)
			}
			text.WriteString(d.Delta.Text)
		}
	}
	want := []string{"message_start", "content_block_start", "ping"}
	for range 6 {
		want = append(want, "content_block_delta")
	}
	want = append(want, "content_block_stop", "message_delta", "message_stop")
	if !slices.Equal(names, want) || wordCount(text.String()) != 6 {
		t.Fatalf("events %v, want %v; text %q", names, want, text.String())
	}
	var start struct {
		Message struct {
			Usage struct {
				In int `json:"input_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	decode(t, evs[0].data, &start)
	var delta struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		} `json:"delta"`
		Usage struct {
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	decode(t, evs[len(evs)-2].data, &delta)
	if start.Message.Usage.In != 5 || delta.Delta.StopReason != "max_tokens" || delta.Usage.Out != 6 {
		t.Fatalf("message_start %s, message_delta %s", evs[0].data, evs[len(evs)-2].data)
	}

	code, _, b = post(t, url+"/v1/messages", "", []byte(`{"model":"claude","messages":[{"role":"user","content":"hi"}]}`), key...)
	wantError(t, "messages without max_tokens", code, b, http.StatusBadRequest)
	code, _, b = post(t, url+"/v1/messages", "", []byte(body+"}"), "x-api-key", "wrong")
	wantError(t, "messages with a wrong key", code, b, http.StatusUnauthorized)
	if code, _, _ = post(t, url+"/v1/messages", "", []byte(body+"}"), "Authorization", "Bearer sk-test"); code != 200 {
		t.Errorf("Authorization: Bearer: status %d", code)
	}
}

func TestTGIGenerate(t *testing.T) {
	_, url := start(t, typesConfig())
	body := []byte(`{"inputs":"one two three","parameters":{"max_new_tokens":5,"details":true}}`)
	var whole struct {
		GeneratedText string `json:"generated_text"`
		Details       struct {
			FinishReason    string `json:"finish_reason"`
			GeneratedTokens int    `json:"generated_tokens"`
		} `json:"details"`
	}
	decode(t, postOK(t, url+"/generate", "application/json", body), &whole)
	if wordCount(whole.GeneratedText) != 5 || whole.Details.FinishReason != "length" || whole.Details.GeneratedTokens != 5 {
		t.Fatalf("generate: %+v", whole)
	}

	evs := events(t, postOK(t, url+"/generate_stream", "text/event-stream", body))
	if len(evs) != 5 {
		t.Fatalf("%d stream events, want 5", len(evs))
	}
	var text strings.Builder
	for i, ev := range evs {
		var e struct {
			Token struct {
				ID      *int     `json:"id"`
				Text    string   `json:"text"`
				Logprob *float64 `json:"logprob"`
				Special bool     `json:"special"`
			} `json:"token"`
			GeneratedText *string `json:"generated_text"`
			Details       *struct {
				FinishReason string `json:"finish_reason"`
			} `json:"details"`
		}
		decode(t, ev.data, &e)
		text.WriteString(e.Token.Text)
		last := i == len(evs)-1
		if e.Token.ID == nil || e.Token.Logprob == nil || e.Token.Special || (e.GeneratedText != nil) != last || (e.Details != nil) != last {
			t.Fatalf("event %d: %s", i, ev.data)
		}
		if last && (*e.GeneratedText != text.String() || e.Details.FinishReason != "length") {
			t.Fatalf("last event %s: want the generated text %q and finish_reason length", ev.data, text.String())
		}
	}
	code, _, b := post(t, url+"/generate", "", []byte(`{"parameters":{"max_new_tokens":5}}`))
	wantError(t, "generate without inputs", code, b, http.StatusUnprocessableEntity)
}

func TestSolidoRAG(t *testing.T) {
	_, url := start(t, typesConfig())
	body := `{"query":["what is SDE"],"filters":{"family":"Solido","tool":"SDE"},"inference_model":"m"`
	var whole struct {
		Content string           `json:"content"`
		Sources []map[string]any `json:"sources"`
	}
	decode(t, postOK(t, url+"/rag/api/prompt", "application/json", []byte(body+"}")), &whole)
	if wordCount(whole.Content) != 7 || len(whole.Sources) != ragSources {
		t.Fatalf("rag: %+v", whole)
	}
	evs := events(t, postOK(t, url+"/rag/api/prompt", "text/event-stream", []byte(body+`,"stream":true}`)))
	var text strings.Builder
	for i, ev := range evs {
		var e struct {
			Content string           `json:"content"`
			Sources []map[string]any `json:"sources"`
		}
		decode(t, ev.data, &e)
		text.WriteString(e.Content)
		if (len(e.Sources) > 0) != (i == len(evs)-1) {
			t.Fatalf("event %d of %d: %s; want the sources on the last", i, len(evs), ev.data)
		}
	}
	if len(evs) != 7 || wordCount(text.String()) != 7 {
		t.Fatalf("%d events, text %q; want 7 tokens", len(evs), text.String())
	}
	code, _, b := post(t, url+"/rag/api/prompt", "", []byte(`{"inference_model":"m"}`))
	wantError(t, "rag without query", code, b, http.StatusBadRequest)
}

// multipartBody builds a multipart/form-data body of fields and files
// (name → content).
