package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

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
