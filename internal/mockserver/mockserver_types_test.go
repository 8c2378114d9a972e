package mockserver

// These tests speak each endpoint type's protocol by hand, with net/http
// and encoding/json only: requests built from the documented formats,
// answers decoded and checked, so that the server is judged against the
// protocols and not against llmbench's own client.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// typesConfig is a quick server: no latency but what a test sets.
func typesConfig() Config {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	cfg.PoolingOverhead, cfg.PoolingPerToken = 0, 0
	cfg.ImageTime, cfg.VideoTime = 0, 0
	cfg.TranscriptionRTF = 0
	cfg.OutputMean = 7
	return cfg
}

// post sends body (JSON unless contentType says otherwise) and returns the
// status, the headers and the whole body.
func post(t *testing.T, url, contentType string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// postOK posts and requires a 200 with the given Content-Type.
func postOK(t *testing.T, url, wantType string, body []byte) []byte {
	t.Helper()
	code, h, b := post(t, url, "", body)
	if code != http.StatusOK || h.Get("Content-Type") != wantType {
		t.Fatalf("POST %s: status %d, type %q, body %.300s", url, code, h.Get("Content-Type"), b)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %.300s: %v", b, err)
	}
}

// wantError requires a 4xx answer of the given status with a JSON error
// member.
func wantError(t *testing.T, what string, code int, b []byte, want int) {
	t.Helper()
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if code != want || json.Unmarshal(b, &e) != nil || len(e.Error) == 0 || string(e.Error) == "null" {
		t.Errorf("%s: status %d body %s, want %d with an error member", what, code, b, want)
	}
}

// sseEvent is one Server-Sent Event: its event: name (if any) and data.
type sseEvent struct {
	name string
	data []byte
}

// events splits a text/event-stream body into its events.
func events(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.data = []byte(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		out = append(out, ev)
	}
	return out
}

// eventType is an event's data "type" member.
func eventType(t *testing.T, ev sseEvent) string {
	t.Helper()
	var v struct {
		Type string `json:"type"`
	}
	decode(t, ev.data, &v)
	return v.Type
}

func wordCount(s string) int { return len(strings.Fields(s)) }

func TestEmbeddings(t *testing.T) {
	_, url := start(t, typesConfig())
	type answer struct {
		Object string `json:"object"`
		Data   []struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	tests := []struct {
		name          string
		body          string
		n, dim, token int
	}{
		{"string", `{"model":"e","input":"one two three"}`, 1, 384, 3},
		{"list", `{"model":"e","input":["a b","c","a b"]}`, 3, 384, 5},
		{"token ids", `{"model":"e","input":[[1,2,3],[4,5]]}`, 2, 384, 5},
		{"dimensions", `{"model":"e","input":["x y"],"dimensions":16}`, 1, 16, 2},
		{"chat embeddings", `{"model":"e","messages":[{"role":"user","content":"hello there world"}]}`, 1, 384, 3},
		{"nim text and image", `{"model":"e","input":["a photo data:image/png;base64,iVBORw0KGgo="]}`, 1, 384, 2 + imageTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a answer
			decode(t, postOK(t, url+"/v1/embeddings", "application/json", []byte(tc.body)), &a)
			if a.Object != "list" || a.Model != "e" || len(a.Data) != tc.n || a.Usage.PromptTokens != tc.token || a.Usage.TotalTokens != tc.token {
				t.Fatalf("answer %+v, want %d embeddings and %d tokens", a, tc.n, tc.token)
			}
			for i, d := range a.Data {
				var norm float64
				for _, v := range d.Embedding {
					norm += v * v
				}
				if d.Object != "embedding" || d.Index != i || len(d.Embedding) != tc.dim || math.Abs(norm-1) > 1e-3 {
					t.Fatalf("embedding %d: object %q index %d, %d values of norm %g; want %d of norm 1", i, d.Object, d.Index, len(d.Embedding), norm, tc.dim)
				}
			}
		})
	}
	// The same text has the same embedding, another text another.
	var a answer
	decode(t, postOK(t, url+"/v1/embeddings", "application/json", []byte(`{"input":["a b","c","a b"]}`)), &a)
	if !slices.Equal(a.Data[0].Embedding, a.Data[2].Embedding) || slices.Equal(a.Data[0].Embedding, a.Data[1].Embedding) {
		t.Error("embeddings are not a function of the text")
	}
	// base64: the float32s, little-endian.
	var b64 struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	decode(t, postOK(t, url+"/v1/embeddings", "application/json", []byte(`{"input":"a b","encoding_format":"base64"}`)), &b64)
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	if err != nil || len(raw) != 4*384 || math.Float32frombits(binary.LittleEndian.Uint32(raw)) != float32(a.Data[0].Embedding[0]) {
		t.Errorf("base64 embedding: %d bytes, %v", len(raw), err)
	}
	for _, bad := range []string{`{"model":"e"}`, `{"input":[]}`, `{"input":42}`, `{"input":"x","dimensions":-1}`} {
		code, _, b := post(t, url+"/v1/embeddings", "", []byte(bad))
		wantError(t, bad, code, b, http.StatusBadRequest)
	}
}

// quickest is the shortest of n runs of f: a lower bound freed of most of
// a loaded machine's delays.
func quickest(n int, f func() time.Duration) time.Duration {
	best := time.Duration(math.MaxInt64)
	for range n {
		best = min(best, f())
	}
	return best
}

func TestEmbeddingTimeGrowsWithTokens(t *testing.T) {
	cfg := typesConfig()
	cfg.PoolingOverhead, cfg.PoolingPerToken = 2*time.Millisecond, 100*time.Microsecond
	_, url := start(t, cfg)
	timed := func(words int) func() time.Duration {
		body, _ := json.Marshal(map[string]any{"input": strings.Repeat("word ", words)})
		return func() time.Duration {
			t0 := time.Now()
			postOK(t, url+"/v1/embeddings", "application/json", body)
			return time.Since(t0)
		}
	}
	short, long := quickest(3, timed(10)), timed(1000)()
	// 3 ms against 102 ms: the server never answers early, so the long one
	// takes its time at least, and the short one, at its quickest, less.
	if long < 102*time.Millisecond || short >= long {
		t.Errorf("10 tokens took %v, 1000 tokens %v; want 3 ms and 102 ms", short, long)
	}
}

func TestRankings(t *testing.T) {
	_, url := start(t, typesConfig())
	passages := []string{"the cat sat", "on the mat", "a dog barked loudly", "rain"}
	indices := func(n int, idx []int) bool {
		got := slices.Clone(idx)
		sort.Ints(got)
		for i := range got {
			if got[i] != i {
				return false
			}
		}
		return len(got) == n
	}

	docs, _ := json.Marshal(map[string]any{"model": "r", "query": "where is the cat", "documents": passages})
	var cohere struct {
		ID      string `json:"id"`
		Results []struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		} `json:"results"`
		Meta map[string]any `json:"meta"`
	}
	decode(t, postOK(t, url+"/v2/rerank", "application/json", docs), &cohere)
	var idx []int
	var scores []float64
	for _, r := range cohere.Results {
		idx, scores = append(idx, r.Index), append(scores, r.Score)
	}
	if cohere.ID == "" || cohere.Meta == nil || !indices(len(passages), idx) || !sort.IsSorted(sort.Reverse(sort.Float64Slice(scores))) {
		t.Errorf("cohere: %+v, want one score per passage, best first", cohere)
	}
	top, _ := json.Marshal(map[string]any{"query": "q", "documents": []any{"a", map[string]string{"text": "b"}, "c"}, "top_n": 2})
	decode(t, postOK(t, url+"/v2/rerank", "application/json", top), &cohere)
	if len(cohere.Results) != 2 {
		t.Errorf("cohere top_n 2: %d results", len(cohere.Results))
	}

	texts, _ := json.Marshal(map[string]any{"query": "where is the cat", "texts": passages, "return_text": true})
	var tei []struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
		Text  string  `json:"text"`
	}
	decode(t, postOK(t, url+"/rerank", "application/json", texts), &tei)
	idx, scores = nil, nil
	for _, r := range tei {
		idx, scores = append(idx, r.Index), append(scores, r.Score)
		if r.Text != passages[r.Index] {
			t.Errorf("tei: index %d has text %q", r.Index, r.Text)
		}
	}
	if !indices(len(passages), idx) || !sort.IsSorted(sort.Reverse(sort.Float64Slice(scores))) {
		t.Errorf("tei: %+v", tei)
	}

	type text struct {
		Text string `json:"text"`
	}
	var ps []text
	for _, p := range passages {
		ps = append(ps, text{p})
	}
	nimBody, _ := json.Marshal(map[string]any{"model": "r", "query": text{"where is the cat"}, "passages": ps})
	var nim struct {
		Rankings []struct {
			Index int     `json:"index"`
			Logit float64 `json:"logit"`
		} `json:"rankings"`
	}
	decode(t, postOK(t, url+"/v1/ranking", "application/json", nimBody), &nim)
	idx, scores = nil, nil
	for _, r := range nim.Rankings {
		idx, scores = append(idx, r.Index), append(scores, r.Logit)
	}
	if !indices(len(passages), idx) || !sort.IsSorted(sort.Reverse(sort.Float64Slice(scores))) {
		t.Errorf("nim: %+v", nim)
	}

	for _, bad := range []struct{ path, body string }{
		{"/v2/rerank", `{"query":"q"}`}, {"/v2/rerank", `{"documents":["a"]}`},
		{"/rerank", `{"query":"q","texts":[]}`}, {"/rerank", `{"texts":["a"]}`},
		{"/v1/ranking", `{"query":{"text":"q"}}`}, {"/v1/ranking", `{"passages":[{"text":"a"}]}`},
	} {
		code, _, b := post(t, url+bad.path, "", []byte(bad.body))
		wantError(t, bad.path+" "+bad.body, code, b, http.StatusBadRequest)
	}
}

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
func multipartBody(t *testing.T, fields map[string]string, files map[string][]byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range files {
		fw, err := mw.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(v)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// isPNG reports whether s is a base64 PNG.
func isPNG(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	_, err = png.DecodeConfig(bytes.NewReader(b))
	return err == nil
}

func TestImages(t *testing.T) {
	cfg := typesConfig()
	cfg.ImageTime, cfg.MediaTimeScale = 2*time.Second, 0.02 // 40 ms a 1024x1024 image
	_, url := start(t, cfg)
	var whole struct {
		Created int64 `json:"created"`
		Data    []struct {
			B64 string `json:"b64_json"`
		} `json:"data"`
		Size  string `json:"size"`
		Usage struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	t0 := time.Now()
	decode(t, postOK(t, url+"/v1/images/generations", "application/json", []byte(`{"model":"img","prompt":"a red fox","n":2,"size":"1024x1024","response_format":"b64_json"}`)), &whole)
	if took := time.Since(t0); took < 80*time.Millisecond {
		t.Errorf("two 1024x1024 images took %v, want at least 80 ms", took)
	}
	if whole.Created == 0 || len(whole.Data) != 2 || !isPNG(whole.Data[0].B64) || !isPNG(whole.Data[1].B64) || whole.Size != "1024x1024" || whole.Usage.In != 3 || whole.Usage.Out == 0 {
		t.Fatalf("images: %+v", whole)
	}

	evs := events(t, postOK(t, url+"/v1/images/generations", "text/event-stream", []byte(`{"prompt":"a red fox","size":"256x256","stream":true}`)))
	var types []string
	for _, ev := range evs {
		var e struct {
			Type    string          `json:"type"`
			B64     string          `json:"b64_json"`
			Index   *int            `json:"partial_image_index"`
			Usage   json.RawMessage `json:"usage"`
			Created int64           `json:"created_at"`
		}
		decode(t, ev.data, &e)
		types = append(types, e.Type)
		if e.Type != ev.name || !isPNG(e.B64) || e.Created == 0 {
			t.Fatalf("event %s: %s", ev.name, ev.data)
		}
		if e.Type == "image_generation.partial_image" && (e.Index == nil || *e.Index != len(types)-1) {
			t.Fatalf("partial image %d: %s", len(types)-1, ev.data)
		}
		if e.Type == "image_generation.completed" && len(e.Usage) == 0 {
			t.Fatalf("completed without usage: %s", ev.data)
		}
	}
	want := []string{"image_generation.partial_image", "image_generation.partial_image", "image_generation.completed"}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}

	pngBytes, _ := base64.StdEncoding.DecodeString(whole.Data[0].B64)
	body, ct := multipartBody(t, map[string]string{"prompt": "make it blue", "model": "img", "response_format": "b64_json", "n": "1"}, map[string][]byte{"image": pngBytes})
	code, _, b := post(t, url+"/v1/images/edits", ct, body)
	var edit struct {
		Data []struct {
			B64 string `json:"b64_json"`
		} `json:"data"`
		Usage struct {
			In int `json:"input_tokens"`
		} `json:"usage"`
	}
	decode(t, b, &edit)
	if code != 200 || len(edit.Data) != 1 || !isPNG(edit.Data[0].B64) || edit.Usage.In != 3+imageTokens {
		t.Fatalf("edit: status %d, %.300s", code, b)
	}
	body, ct = multipartBody(t, map[string]string{"prompt": "make it blue", "stream": "true", "partial_images": "1"}, map[string][]byte{"image": pngBytes})
	code, _, b = post(t, url+"/v1/images/edits", ct, body)
	if evs := events(t, b); code != 200 || len(evs) != 2 || evs[0].name != "image_edit.partial_image" || evs[1].name != "image_edit.completed" {
		t.Fatalf("edit stream: status %d, %.300s", code, b)
	}

	for _, tc := range []struct {
		name   string
		fields map[string]string
		files  map[string][]byte
	}{
		{"no image", map[string]string{"prompt": "p"}, nil},
		{"no prompt", nil, map[string][]byte{"image": pngBytes}},
	} {
		body, ct := multipartBody(t, tc.fields, tc.files)
		code, _, b := post(t, url+"/v1/images/edits", ct, body)
		wantError(t, "edit with "+tc.name, code, b, http.StatusBadRequest)
	}
	code, _, b = post(t, url+"/v1/images/edits", "", []byte(`{"prompt":"p"}`))
	wantError(t, "edit not multipart", code, b, http.StatusBadRequest)
	code, _, b = post(t, url+"/v1/images/generations", "", []byte(`{"prompt":"p","size":"huge"}`))
	wantError(t, "generation of a bad size", code, b, http.StatusBadRequest)
}

// wav is a 16 kHz mono 16-bit PCM WAV of the given duration.
func wav(seconds float64) []byte {
	const rate, channels, bits = 16000, 1, 16
	data := int(seconds*rate) * channels * bits / 8
	b := make([]byte, 0, 44+data)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(36+data))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1) // PCM
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(data))
	return append(b, make([]byte, data)...)
}

func TestAudioDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		clip []byte
		want time.Duration
	}{
		{"wav 1.5 s", wav(1.5), 1500 * time.Millisecond},
		// 128 kbit/s MPEG-1 layer III: 16000 bytes a second.
		{"mp3 2 s", append([]byte{0xFF, 0xFB, 0x90, 0x00}, make([]byte, 32000-4)...), 2 * time.Second},
	} {
		got, err := audioDuration(tc.clip)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range [][]byte{nil, []byte("hello"), []byte("RIFF\x00\x00\x00\x00WAVEdata\x04\x00\x00\x00abcd")} {
		if _, err := audioDuration(bad); err == nil {
			t.Errorf("audioDuration(%q) accepted", bad)
		}
	}
}

func TestTranscription(t *testing.T) {
	cfg := typesConfig()
	cfg.TranscriptionRTF = 0.1 // 1 s of audio takes 100 ms
	_, url := start(t, cfg)
	transcribe := func(seconds float64, stream bool) ([]byte, time.Duration) {
		fields := map[string]string{"model": "whisper", "response_format": "json"}
		if stream {
			fields["stream"] = "true"
		}
		body, ct := multipartBody(t, fields, map[string][]byte{"file": wav(seconds)})
		t0 := time.Now()
		code, h, b := post(t, url+"/v1/audio/transcriptions", ct, body)
		took := time.Since(t0)
		want := "application/json"
		if stream {
			want = "text/event-stream"
		}
		if code != 200 || h.Get("Content-Type") != want {
			t.Fatalf("transcription: status %d, type %q, %.300s", code, h.Get("Content-Type"), b)
		}
		return b, took
	}
	var whole struct {
		Text  string `json:"text"`
		Usage struct {
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	b, _ := transcribe(4, false)
	decode(t, b, &whole)
	if wordCount(whole.Text) != 10 || whole.Usage.Out != 10 {
		t.Fatalf("4 s transcribed as %+v, want 10 words", whole)
	}

	// The time grows with the audio: 100 ms against 400 ms, each at its
	// quickest of three.
	short := quickest(3, func() time.Duration { _, d := transcribe(1, false); return d })
	long := quickest(3, func() time.Duration { _, d := transcribe(4, false); return d })
	if ratio := float64(long) / float64(short); long < 400*time.Millisecond || ratio < 2.5 || ratio > 6 {
		t.Errorf("1 s took %v, 4 s %v: ratio %.2f, want about 4", short, long, ratio)
	}

	b, _ = transcribe(2, true)
	evs := events(t, b)
	var text strings.Builder
	for i, ev := range evs {
		var e struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
			Text  string `json:"text"`
		}
		decode(t, ev.data, &e)
		if last := i == len(evs)-1; last {
			if e.Type != "transcript.text.done" || e.Text != text.String() {
				t.Fatalf("last event %s, want transcript.text.done with the text %q", ev.data, text.String())
			}
		} else if e.Type != "transcript.text.delta" {
			t.Fatalf("event %d: %s", i, ev.data)
		}
		text.WriteString(e.Delta)
	}
	if len(evs) != 5+1 {
		t.Fatalf("%d events for 2 s, want 5 deltas and done", len(evs))
	}

	body, ct := multipartBody(t, map[string]string{"model": "whisper"}, map[string][]byte{"file": []byte("not audio")})
	code, _, b := post(t, url+"/v1/audio/transcriptions", ct, body)
	wantError(t, "transcription of no audio", code, b, http.StatusBadRequest)
	body, ct = multipartBody(t, map[string]string{"model": "whisper"}, nil)
	code, _, b = post(t, url+"/v1/audio/transcriptions", ct, body)
	wantError(t, "transcription without a file", code, b, http.StatusBadRequest)
}

// videoObject is a video job as the Videos API answers it.
type videoObject struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	Status        string   `json:"status"`
	Progress      int      `json:"progress"`
	Size          string   `json:"size"`
	Seconds       string   `json:"seconds"`
	InferenceTime *float64 `json:"inference_time_s"`
	PeakMemory    *float64 `json:"peak_memory_mb"`
}

func getVideo(t *testing.T, url string) (int, videoObject, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v videoObject
	if resp.StatusCode == 200 && resp.Header.Get("Content-Type") == "application/json" {
		decode(t, b, &v)
	}
	return resp.StatusCode, v, b
}

func TestVideos(t *testing.T) {
	cfg := typesConfig()
	cfg.VideoTime, cfg.MediaTimeScale = 10*time.Second, 0.03 // 300 ms a job
	_, url := start(t, cfg)
	submit := func() videoObject {
		body, ct := multipartBody(t, map[string]string{"prompt": "a cat surfing", "model": "wan", "size": "1280x720", "seconds": "4"}, nil)
		code, _, b := post(t, url+"/v1/videos", ct, body)
		var v videoObject
		decode(t, b, &v)
		if code != 200 || !strings.HasPrefix(v.ID, "video_") || v.Object != "video" || v.Status != "queued" || v.Progress != 0 {
			t.Fatalf("submit: status %d, %s", code, b)
		}
		return v
	}
	first, second := submit(), submit()
	// Jobs run one at a time: the second waits for the first, then runs.
	jobs := []videoObject{first, second}
	seen := [][]string{{"queued"}, {"queued"}}
	deadline := time.Now().Add(5 * time.Second)
	for seen[1][len(seen[1])-1] != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("statuses %v after 5 s", seen)
		}
		for i, j := range jobs {
			code, v, b := getVideo(t, url+"/v1/videos/"+j.ID)
			if code != 200 {
				t.Fatalf("poll: status %d, %s", code, b)
			}
			if v.Status != seen[i][len(seen[i])-1] {
				seen[i] = append(seen[i], v.Status)
			}
			jobs[i] = v
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := []string{"queued", "in_progress", "completed"}; !slices.Equal(seen[1], want) || !slices.Equal(seen[0][1:], want[1:]) {
		t.Fatalf("statuses %v, want %v for each", seen, want)
	}
	done := jobs[0]
	if done.Progress != 100 || done.InferenceTime == nil || math.Abs(*done.InferenceTime-0.3) > 0.001 || done.PeakMemory == nil || *done.PeakMemory <= 0 ||
		done.Size != "1280x720" || done.Seconds != "4" {
		t.Fatalf("completed job %+v", done)
	}

	resp, err := http.Get(url + "/v1/videos/" + first.ID + "/content")
	if err != nil {
		t.Fatal(err)
	}
	mp4, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "video/mp4" || len(mp4) < 12 || string(mp4[4:8]) != "ftyp" {
		t.Fatalf("content: status %d, type %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(mp4))
	}
	for _, path := range []string{"/v1/videos/video_nope", "/v1/videos/video_nope/content"} {
		code, _, b := getVideo(t, url+path)
		wantError(t, path, code, b, http.StatusNotFound)
	}
	code, _, b := post(t, url+"/v1/videos", "", []byte(`{"model":"wan"}`))
	wantError(t, "video without a prompt", code, b, http.StatusBadRequest)
}

func TestImageRetrieval(t *testing.T) {
	_, url := start(t, typesConfig())
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(tinyPNG(1, 0))
	body, _ := json.Marshal(map[string]any{"input": []map[string]string{{"type": "image_url", "url": img}, {"type": "image_url", "url": img + "AA"}}})
	var got struct {
		Data []struct {
			Index int                             `json:"index"`
			Boxes map[string][]map[string]float64 `json:"bounding_boxes"`
		} `json:"data"`
	}
	decode(t, postOK(t, url+"/v1/infer", "application/json", body), &got)
	if len(got.Data) != 2 {
		t.Fatalf("%d results for 2 images", len(got.Data))
	}
	for i, d := range got.Data {
		if d.Index != i || len(d.Boxes) != 3 {
			t.Fatalf("result %d: %+v", i, d)
		}
		for class, boxes := range d.Boxes {
			for _, box := range boxes {
				if box["x_min"] >= box["x_max"] || box["y_min"] >= box["y_max"] || box["confidence"] <= 0 || box["confidence"] > 1 {
					t.Errorf("%s box %v", class, box)
				}
			}
		}
	}
	code, _, b := post(t, url+"/v1/infer", "", []byte(`{"input":[]}`))
	wantError(t, "infer without images", code, b, http.StatusBadRequest)
}

// TestFaultsOnEveryRoute: the faults strike every 2nd request whatever
// its route; the first is served normally.
func TestFaultsOnEveryRoute(t *testing.T) {
	wavBody, wavType := multipartBody(t, map[string]string{"stream": "true"}, map[string][]byte{"file": wav(2)})
	routes := []struct {
		name, path, contentType string
		body                    []byte
		stream                  bool
	}{
		{"embeddings", "/v1/embeddings", "", []byte(`{"input":["a b","c d"]}`), false},
		{"nim rankings", "/v1/ranking", "", []byte(`{"query":{"text":"q"},"passages":[{"text":"a"},{"text":"b"}]}`), false},
		{"messages stream", "/v1/messages", "", []byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":6,"stream":true}`), true},
		{"images stream", "/v1/images/generations", "", []byte(`{"prompt":"p","stream":true,"partial_images":3}`), true},
		{"transcription stream", "/v1/audio/transcriptions", wavType, wavBody, true},
	}
	faults := []struct {
		name  string
		cfg   func(*Config)
		check func(code int, h http.Header, b []byte, stream bool) bool
	}{
		{"error-every", func(c *Config) { c.ErrorEvery = 2 }, func(code int, _ http.Header, _ []byte, _ bool) bool { return code == 500 }},
		{"html", func(c *Config) { c.Faults = []FaultRule{{Name: "html", Every: 2}} }, func(_ int, h http.Header, b []byte, _ bool) bool {
			return strings.HasPrefix(h.Get("Content-Type"), "text/html") && bytes.HasPrefix(b, []byte("<!DOCTYPE html>"))
		}},
		{"gzip", func(c *Config) { c.Faults = []FaultRule{{Name: "gzip", Every: 2}} }, func(code int, h http.Header, b []byte, _ bool) bool {
			return code == 200 && h.Get("Content-Encoding") == "gzip" && bytes.HasPrefix(b, []byte("\x1f\x8b"))
		}},
		{"truncate", func(c *Config) { c.Faults = []FaultRule{{Name: "truncate", Every: 2}} }, func(code int, _ http.Header, b []byte, stream bool) bool {
			if !stream {
				return code == 200 && len(b) > 0 && !json.Valid(b)
			}
			// Fewer events than a whole stream, each of them whole.
			return code == 200 && len(b) > 0 && bytes.HasSuffix(b, []byte("\n\n"))
		}},
		{"garbage-every", func(c *Config) { c.GarbageEvery = 2 }, func(code int, _ http.Header, b []byte, _ bool) bool {
			return code == 200 && !json.Valid(b) && !allEventsValid(b)
		}},
	}
	for _, f := range faults {
		for _, rt := range routes {
			t.Run(f.name+" "+rt.name, func(t *testing.T) {
				cfg := typesConfig()
				f.cfg(&cfg)
				s, url := start(t, cfg)
				var whole []byte
				for i := 1; i <= 2; i++ {
					code, h, b := post(t, url+rt.path, rt.contentType, rt.body)
					if i == 1 {
						if code != 200 || h.Get("Content-Encoding") != "" || (!json.Valid(b) && !allEventsValid(b)) {
							t.Fatalf("request 1 not served normally: status %d, %.300s", code, b)
						}
						whole = b
						continue
					}
					if !f.check(code, h, b, rt.stream) {
						t.Fatalf("status %d, type %q, encoding %q, body %.300q", code, h.Get("Content-Type"), h.Get("Content-Encoding"), b)
					}
					if f.name == "truncate" && rt.stream && len(events(t, b)) >= len(events(t, whole)) {
						t.Fatalf("truncated stream has %d events, the whole one %d", len(events(t, b)), len(events(t, whole)))
					}
				}
				if s.Requests() != 2 {
					t.Fatalf("server counted %d requests, want 2", s.Requests())
				}
			})
		}
	}
	// drop closes the connection: the client gets no answer.
	cfg := typesConfig()
	cfg.DropEvery = 1
	_, url := start(t, cfg)
	for _, rt := range routes {
		req, _ := http.NewRequest(http.MethodPost, url+rt.path, bytes.NewReader(rt.body))
		if rt.contentType != "" {
			req.Header.Set("Content-Type", rt.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("drop %s: the answer arrived whole", rt.name)
		}
	}
}

// allEventsValid reports whether b is a stream of events whose data are
// all JSON.
func allEventsValid(b []byte) bool {
	if !bytes.Contains(b, []byte("data:")) {
		return false
	}
	for _, block := range strings.Split(string(b), "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			if data, ok := strings.CutPrefix(line, "data:"); ok && !json.Valid([]byte(strings.TrimSpace(data))) {
				return false
			}
		}
	}
	return true
}

// TestOtherTypesInMetrics: requests of the other types count in the
// engine's metrics, and wait for a slot like chat's.
func TestOtherTypesInMetrics(t *testing.T) {
	cfg := typesConfig()
	cfg.MaxNumSeqs = 1
	cfg.PoolingOverhead = 300 * time.Millisecond
	_, url := start(t, cfg)
	before := scrape(t, url)
	prompt0 := value(t, before, "vllm:prompt_tokens_total")
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := http.Post(url+"/v1/embeddings", "application/json", strings.NewReader(`{"input":"one two three four"}`))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	// One runs, one waits for the slot, for 300 ms each.
	deadline := time.Now().Add(3 * time.Second)
	for {
		m := scrape(t, url)
		if value(t, m, "vllm:num_requests_running") == 1 && value(t, m, "vllm:num_requests_waiting") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never saw one embeddings request running and one waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	<-done
	<-done
	after := scrape(t, url)
	if got := value(t, after, "vllm:prompt_tokens_total") - prompt0; got != 8 {
		t.Errorf("prompt tokens grew by %v, want 8", got)
	}
	if got := value(t, after, "vllm:request_success_total", "finished_reason", "stop"); got != 2 {
		t.Errorf("%v requests succeeded, want 2", got)
	}
	if value(t, after, "vllm:num_requests_running") != 0 || value(t, after, "vllm:num_requests_waiting") != 0 {
		t.Error("requests still counted after their answers")
	}
}
