package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readExample(t *testing.T, typ, name string, conversations int) []Conversation {
	t.Helper()
	convs, err := ReadFile(filepath.Join("..", "..", "examples", name), FileOptions{Type: typ, Corpus: NewCorpus(builtin(t)), BlockSize: 512, Conversations: conversations, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

func TestReadSingleTurn(t *testing.T) {
	tok := builtin(t)
	convs := readExample(t, "single_turn", "single_turn.jsonl", 0)
	want := []struct {
		text  string
		max   int
		extra string
	}{
		{"What is machine learning?", 0, ""},
		{"Explain neural networks.", 50, ""},
		{"How does backpropagation work?", 120, `{"temperature": 0.2}`},
		{"What are transformers?", 0, ""},
		{"Define reinforcement learning.", 80, ""},
	}
	if len(convs) != len(want) {
		t.Fatalf("%d conversations, want %d", len(convs), len(want))
	}
	for i, w := range want {
		c := convs[i]
		tr := c.Turns[0]
		if len(c.Turns) != 1 || tr.Text != w.text || tr.MaxTokens != w.max || string(tr.Extra) != w.extra || tr.InputTokens != tok.Count(w.text) || tr.HasTimestamp {
			t.Errorf("line %d: %+v, want %+v", i+1, tr, w)
		}
	}
	if MultiTurn(convs) || Timed(convs) {
		t.Error("single_turn without timestamps is neither multi-turn nor timed")
	}
}

// TestSingleTurnDelaysBecomeASchedule: delays add up into timestamps.
func TestSingleTurnDelaysBecomeASchedule(t *testing.T) {
	path := writeFile(t, "d.jsonl", `{"text":"a"}
{"text":"b","delay":100}

{"text":"c","delay":250.5}
{"text":"d"}
`)
	convs, err := ReadFile(path, FileOptions{Type: "single_turn", Corpus: NewCorpus(builtin(t))})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, c := range convs {
		if !c.Turns[0].HasTimestamp || c.Turns[0].DelayMs != 0 {
			t.Fatalf("%s: %+v, want a timestamp and no delay", c.ID, c.Turns[0])
		}
		got = append(got, c.Turns[0].TimestampMs)
	}
	if want := []float64{0, 100, 350.5, 350.5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("timestamps %v, want %v", got, want)
	}
}

func TestReadMultiTurn(t *testing.T) {
	tok := builtin(t)
	convs := readExample(t, "multi_turn", "multi_turn.jsonl", 0)
	if len(convs) != 2 || convs[0].ID != "chat_1" || convs[1].ID != "chat_2" {
		t.Fatalf("conversations %+v", convs)
	}
	sys := "You are a terse assistant. Answer in one sentence."
	if convs[0].System != sys || convs[0].SystemTokens != tok.Count(sys) || convs[1].System != "" {
		t.Fatalf("system prompts %q / %q: the leading system turn is hoisted, once", convs[0].System, convs[1].System)
	}
	if len(convs[0].Turns) != 2 || len(convs[1].Turns) != 3 {
		t.Fatalf("turns %d and %d, want 2 (the system turn is not a request) and 3", len(convs[0].Turns), len(convs[1].Turns))
	}
	c := convs[1]
	if c.Turns[1].Text != "How do they differ from traditional algorithms?" || c.Turns[1].DelayMs != 800 || c.Turns[2].DelayMs != 300 || c.Turns[2].MaxTokens != 30 {
		t.Fatalf("chat_2 turns %+v", c.Turns)
	}
	if !MultiTurn(convs) || Requests(convs) != 5 {
		t.Fatalf("MultiTurn %v, Requests %d; want true, 5", MultiTurn(convs), Requests(convs))
	}
}

// TestReadRandomPool: a directory is one pool per file; every conversation
// takes one entry of each, in file-name order, drawn with replacement.
func TestReadRandomPool(t *testing.T) {
	convs := readExample(t, "random_pool", "random_pool", 200)
	passages := []string{"Refunds are processed within 5 business days.", "Click 'Forgot password' on the login page."}
	queries := []string{"What is your refund policy?", "How do I reset my password?", "Where is my order?"}
	seen := map[string]int{}
	for _, c := range convs {
		p, q, ok := strings.Cut(c.Turns[0].Text, "\n")
		if !ok || !contains(passages, p) || !contains(queries, q) {
			t.Fatalf("%s: %q is not a passage then a query", c.ID, c.Turns[0].Text)
		}
		seen[c.Turns[0].Text]++
		if q == "Where is my order?" && c.Turns[0].MaxTokens != 40 {
			t.Fatalf("%s: output_length of the query entry lost", c.ID)
		}
	}
	if len(convs) != 200 || len(seen) != 6 {
		t.Fatalf("%d conversations with %d distinct pairs, want 200 drawing all 6", len(convs), len(seen))
	}
	single := readExample(t, "random_pool", "random_pool/queries.jsonl", 30)
	if len(single) != 30 || !contains(queries, single[0].Turns[0].Text) {
		t.Fatalf("one pool file: %d conversations, first %q", len(single), single[0].Turns[0].Text)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestReadMooncake: exact lengths, and requests naming the same hash id
// carry the same block of text at the same place.
func TestReadMooncake(t *testing.T) {
	tok := builtin(t)
	convs := readExample(t, "mooncake_trace", "mooncake_trace.jsonl", 0)
	lengths := []int{1200, 1800, 1300, 700, tok.Count("Summarise the trace so far."), 1600}
	stamps := []float64{0, 105, 274, 600, 900, 1200}
	if len(convs) != 6 || !Timed(convs) || MultiTurn(convs) {
		t.Fatalf("%d conversations (timed %v); want 6 timed single turns", len(convs), Timed(convs))
	}
	text := make([]string, len(convs))
	for i, c := range convs {
		tr := c.Turns[0]
		text[i] = tr.Text
		if got := tok.Count(tr.Text); got != lengths[i] || tr.InputTokens != lengths[i] {
			t.Errorf("row %d: %d tokens (recorded %d), want %d", i+1, got, tr.InputTokens, lengths[i])
		}
		if tr.TimestampMs != stamps[i] {
			t.Errorf("row %d: timestamp %g, want %g", i+1, tr.TimestampMs, stamps[i])
		}
	}
	// The blocks, as the trace's hash ids name them.
	b := &blockTexts{corpus: NewCorpus(tok), size: 512, seed: 1, full: map[int64]string{}}
	for id := range int64(8) {
		if n := tok.Count(b.block(id)); n != 512 {
			t.Fatalf("block %d counts %d tokens, want 512", id, n)
		}
	}
	starts := []struct {
		row    int
		blocks []int64
	}{{1, []int64{0, 1}}, {2, []int64{0, 3, 4}}, {3, []int64{1, 4}}, {4, []int64{0}}, {6, []int64{0, 1}}}
	for _, s := range starts {
		var want strings.Builder
		for _, id := range s.blocks {
			want.WriteString(b.block(id))
		}
		if !strings.HasPrefix(text[s.row-1], want.String()) {
			t.Errorf("row %d does not start with blocks %v byte for byte", s.row, s.blocks)
		}
	}
	again := readExample(t, "mooncake_trace", "mooncake_trace.jsonl", 0)
	if !reflect.DeepEqual(again, convs) {
		t.Fatal("the same trace and seed gave other prompts")
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadFileErrors: every malformed input is an error naming the file
// and line (where there is one) and what is wrong.
func TestReadFileErrors(t *testing.T) {
	cases := []struct {
		typ, content string
		want         []string
	}{
		{"single_turn", "{\"text\":\"a\"}\n{\"text\": \"b\"\n", []string{":2:", "not valid JSON"}},
		{"single_turn", `{"txt":"a"}`, []string{":1:", `unknown field "txt"`, "text, texts"}},
		{"single_turn", `{"text":"a","image":"x.png"}`, []string{":1:", "image", "x.png", "no such file"}},
		{"single_turn", `{"text":"a","image":"data:image/png;base64,@@"}`, []string{":1:", "image", "illegal base64"}},
		{"single_turn", `{"text":"a","audio":"wav,AAAA"}`, []string{":1:", "audio", "not a RIFF/WAVE file"}},
		{"single_turn", `{"text":"a","image":"a","images":["b"]}`, []string{":1:", "not both"}},
		{"single_turn", `{"text":"  "}`, []string{":1:", "non-empty"}},
		{"single_turn", `{"text":"a","output_length":0}`, []string{":1:", "output_length 0"}},
		{"single_turn", `{"text":"a","output_length":"ten"}`, []string{":1:", "output_length"}},
		{"single_turn", `{"text":"a","timestamp":-5}`, []string{":1:", "timestamp -5"}},
		{"single_turn", "{\"text\":\"a\",\"timestamp\":1}\n{\"text\":\"b\"}", []string{":2:", "no timestamp", "line 1"}},
		{"single_turn", "{\"text\":\"a\",\"timestamp\":1}\n{\"text\":\"b\",\"timestamp\":2,\"delay\":3}", []string{":2:", "cannot be mixed"}},
		{"single_turn", `{"text":"a","extra":[1]}`, []string{":1:", "extra must be a JSON object"}},
		{"single_turn", `{"text":"a"} {"text":"b"}`, []string{":1:", "more than one JSON value"}},
		{"single_turn", `{"text":"a","role":"assistant"}`, []string{":1:", `role "assistant"`}},
		{"single_turn", "\n\n", []string{"is empty"}},
		{"multi_turn", `{"session_id":"s","turns":[]}`, []string{":1:", "no turns"}},
		{"multi_turn", `{"turns":[{"role":"system","text":"be brief"}]}`, []string{":1:", "no turns"}},
		{"multi_turn", "{\"session_id\":\"s\",\"turns\":[{\"text\":\"a\"}]}\n{\"session_id\":\"s\",\"turns\":[{\"text\":\"b\"}]}", []string{":2:", `"s" is already used on line 1`}},
		{"multi_turn", `{"turns":[{"text":"a"},{"text":""}]}`, []string{":1:", "non-empty", "turn 2"}},
		{"multi_turn", `{"turns":[{"text":"a"},{"role":"system","text":"b"}]}`, []string{":1:", `role "system"`}},
		{"random_pool", `{"text":"a","timestamp":5}`, []string{":1:", "no timestamp or delay"}},
		{"mooncake_trace", `{"timestamp":0,"output_length":5}`, []string{":1:", "no input_length"}},
		{"mooncake_trace", `{"timestamp":0,"input_length":100,"hash_ids":[1,2,3]}`, []string{":1:", "too short for 3 hash blocks of 512"}},
		{"mooncake_trace", `{"timestamp":0,"input_length":10,"text_input":"hi"}`, []string{":1:", "not both"}},
		{"mooncake_trace", `{"timestamp":0,"messages":[{"role":"user","content":"hi"}]}`, []string{":1:", "messages", "not supported"}},
		{"mooncake_trace", `{"timestamp":0,"input_length":0}`, []string{":1:", "input_length 0: it must be 1 to"}},
		{"mooncake_trace", `{"timestamp":0,"input_length":5,"hash_ids":["a"]}`, []string{":1:", "hash_ids"}},
		{"sharegpt", `{"text":"a"}`, []string{"--custom-dataset-type", "single_turn"}},
	}
	corpus := NewCorpus(builtin(t))
	for _, c := range cases {
		path := writeFile(t, "data.jsonl", c.content)
		_, err := ReadFile(path, FileOptions{Type: c.typ, Corpus: corpus, BlockSize: 512, Conversations: 3})
		if err == nil {
			t.Errorf("%s %q: no error", c.typ, c.content)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: error %q does not say %q", c.typ, c.content, err, w)
			}
		}
		if strings.Contains(strings.Join(c.want, ""), ":") && !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", c.typ, err)
		}
	}
	if _, err := ReadFile(filepath.Join("..", "..", "examples", "random_pool"), FileOptions{Type: "single_turn", Corpus: corpus}); err == nil || !strings.Contains(err.Error(), "only random_pool, raw_payload, sagemaker_data_capture read a directory") {
		t.Errorf("a directory for single_turn: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.jsonl"), FileOptions{Type: "single_turn", Corpus: corpus}); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("a missing file: %v", err)
	}
}

// FuzzReadFile: any bytes in any format give conversations of non-empty,
// correctly counted turns, or an error; never a panic.
func FuzzReadFile(f *testing.F) {
	for _, name := range []string{"single_turn.jsonl", "multi_turn.jsonl", "mooncake_trace.jsonl", "random_pool/queries.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
	f.Add([]byte(`{"timestamp":1e308,"input_length":3,"hash_ids":[-9223372036854775808]}`), uint8(3))
	corpus := NewCorpus(builtin(f))
	types := Formats()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, typ uint8) {
		path := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		convs, err := ReadFile(path, FileOptions{Type: types[int(typ)%len(types)], Corpus: corpus, BlockSize: 16, Conversations: 2})
		if err != nil {
			return
		}
		for _, c := range convs {
			for _, tr := range c.Turns {
				if (tr.Body == nil && strings.TrimSpace(tr.Text) == "") || tr.InputTokens != corpus.Count(tr.Text) || tr.MaxTokens < 0 {
					t.Fatalf("%s: turn %+v", c.ID, tr)
				}
			}
		}
	})
}

// TestByteOrderMark: a file that starts with a UTF-8 byte-order mark (as
// some Windows editors write) reads as the same file without it.
func TestByteOrderMark(t *testing.T) {
	path := writeFile(t, "bom.jsonl", "\xef\xbb\xbf{\"text\": \"hello there\"}\n{\"text\": \"second\"}\n")
	convs, err := ReadFile(path, FileOptions{Type: "single_turn", Corpus: NewCorpus(builtin(t)), BlockSize: 512, Seed: 1})
	if err != nil || len(convs) != 2 || convs[0].Turns[0].Text != "hello there" {
		t.Fatalf("%v: %+v", err, convs)
	}
}
