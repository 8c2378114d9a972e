package benchmark

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/mockserver"
)

// TestWaitForModel: the probes retry until the server is ready, carry the
// run's auth, and a server never ready fails with its last answer.
func TestWaitForModel(t *testing.T) {
	srv, err := mockserver.New(mockserver.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var posts, gets, unauthorized atomic.Int64
	var failFirst atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-wait" {
			unauthorized.Add(1)
		}
		n := posts.Load()
		if r.Method == http.MethodGet {
			n = gets.Add(1) - 1
		} else {
			posts.Add(1)
		}
		if n < failFirst.Load() {
			http.Error(w, "loading the model", http.StatusServiceUnavailable)
			return
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	profile := func(mode, model string, timeout time.Duration) config.Profile {
		p := config.Default()
		p.Endpoint.ModelNames = []string{model}
		p.Endpoint.APIKey = "sk-wait"
		p.Endpoint.WaitForModel, p.Endpoint.WaitMode, p.Endpoint.WaitInterval = timeout, mode, 10*time.Millisecond
		return p
	}
	in := &inputs{kind: endpoint.Chat, typ: endpoint.Chat.Type()}

	failFirst.Store(3)
	if err := waitForModel(context.Background(), profile(config.WaitInference, "m", 5*time.Second), []target{{base: ts.URL}}, in, io.Discard); err != nil {
		t.Fatal(err)
	}
	if posts.Load() != 4 {
		t.Fatalf("%d inference probes, want 3 refused and 1 answered", posts.Load())
	}
	posts.Store(3) // inference is ready now; the models list is not
	if err := waitForModel(context.Background(), profile(config.WaitBoth, mockserver.DefaultModel, 5*time.Second), []target{{base: ts.URL}}, in, io.Discard); err != nil {
		t.Fatal(err)
	}
	if gets.Load() != 4 || posts.Load() != 4 {
		t.Fatalf("both: %d models and %d inference probes, want 4 (3 refused) then 1", gets.Load(), posts.Load())
	}
	if unauthorized.Load() != 0 {
		t.Fatalf("%d probes without the API key", unauthorized.Load())
	}

	failFirst.Store(0)
	err = waitForModel(context.Background(), profile(config.WaitModels, "not-served", 200*time.Millisecond), []target{{base: ts.URL}}, in, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `does not list "not-served"`) || !strings.Contains(err.Error(), "--wait-for-model-timeout 0.2s") {
		t.Fatalf("a model never listed: %v", err)
	}
	failFirst.Store(1 << 40)
	err = waitForModel(context.Background(), profile(config.WaitInference, "m", 200*time.Millisecond), []target{{base: ts.URL}}, in, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "loading the model") {
		t.Fatalf("a server never ready: %v", err)
	}
}

// TestModelSelection: each prompt is given its model before the run, as
// AIPerf assigns it: round_robin gives the nth prompt (over conversations
// and their turns, in order) model n mod count; random uses every model
// about equally; inputs.json's payloads name the model each is sent to.
func TestModelSelection(t *testing.T) {
	models := []string{"a", "b", "c"}
	convs := []dataset.Conversation{{Turns: make([]dataset.Turn, 2)}, {Turns: make([]dataset.Turn, 1)}, {Turns: make([]dataset.Turn, 4)}}
	in := &inputs{models: models, convs: convs}
	in.assignModels(config.ModelRoundRobin, 1)
	want := [][]string{{"a", "b"}, {"c"}, {"a", "b", "c", "a"}}
	for i := range want {
		if !slices.Equal(in.turnModels[i], want[i]) {
			t.Fatalf("round_robin %v, want %v", in.turnModels, want)
		}
	}
	in.convs = make([]dataset.Conversation, 3000)
	for i := range in.convs {
		in.convs[i].Turns = make([]dataset.Turn, 1)
	}
	in.assignModels(config.ModelRandom, 1)
	counts := map[string]int{}
	for _, m := range in.turnModels {
		counts[m[0]]++
	}
	for _, m := range models {
		if counts[m] < 900 || counts[m] > 1100 { // 1000 ± 3.5 sd
			t.Fatalf("random selection %v", counts)
		}
	}

	p := config.Default()
	p.Endpoint.ModelNames = models
	p.Tokenizer.Name = "builtin"
	p.Loadgen.RequestCount = 4
	p.Input.NumDatasetEntries = 4
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	tok, corpus, err := loadText(context.Background(), p, io.Discard)
	if err != nil || tok == nil {
		t.Fatal(err)
	}
	built, err := buildInputs(p, 1, corpus)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range built.inputsJSON {
		var body struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(s.Payloads[0], &body); err != nil || body.Model != models[i%3] {
			t.Fatalf("inputs.json payload %d names model %q, sent to %q", i, body.Model, models[i%3])
		}
	}
}
