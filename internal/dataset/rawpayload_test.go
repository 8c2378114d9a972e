package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sent is what one turn of a raw format sends and counts.
type sent struct {
	body, text string
	max        int
}

func turnsSent(c Conversation) []sent {
	var out []sent
	for _, t := range c.Turns {
		out = append(out, sent{string(t.Body), t.Text, t.MaxTokens})
	}
	return out
}

func TestReadRawPayload(t *testing.T) {
	corpus := NewCorpus(builtin(t))
	cases := []struct {
		name, content string
		want          []sent // one conversation each
	}{
		{"bytes as written", "{\"model\": \"m\",  \"messages\": [{\"role\": \"user\", \"content\": \"hi there\"}], \"stream\": true}\n\n  {\"messages\":[{\"role\":\"user\",\"content\":\"second\"}],\"max_tokens\":7}  \n",
			[]sent{
				{`{"model": "m",  "messages": [{"role": "user", "content": "hi there"}], "stream": true}`, "hi there", 0},
				{`{"messages":[{"role":"user","content":"second"}],"max_tokens":7}`, "second", 7},
			}},
		{"every message counted, completion limit first", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"x"}}]}],"max_completion_tokens":5,"max_tokens":9}`,
			[]sent{{`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"x"}}]}],"max_completion_tokens":5,"max_tokens":9}`, "be brief\nlook", 5}}},
		{"completions and embeddings", "{\"prompt\":\"once upon\",\"max_tokens\":3}\n{\"input\":[\"a b\",\"c\"]}",
			[]sent{{`{"prompt":"once upon","max_tokens":3}`, "once upon", 3}, {`{"input":["a b","c"]}`, "a b\nc", 0}}},
		{"no text is still a body", `{"model":"m","max_tokens":0}`, []sent{{`{"model":"m","max_tokens":0}`, "", 0}}},
	}
	for _, c := range cases {
		convs, err := ReadFile(writeFile(t, "p.jsonl", c.content), FileOptions{Type: "raw_payload", Corpus: corpus})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(convs) != len(c.want) {
			t.Fatalf("%s: %d conversations, want %d", c.name, len(convs), len(c.want))
		}
		for i, w := range c.want {
			cv := convs[i]
			got := turnsSent(cv)
			if len(got) != 1 || got[0] != w || !cv.Standalone || cv.Turns[0].InputTokens != corpus.Count(w.text) || cv.Turns[0].HasTimestamp {
				t.Errorf("%s: conversation %d %+v (%+v), want %+v", c.name, i, got, cv, w)
			}
			if want := "session_00000" + string(rune('0'+i)); cv.ID != want {
				t.Errorf("%s: id %q, want %q", c.name, cv.ID, want)
			}
		}
	}
}

// TestRawPayloadDirectory: each .jsonl file of a directory is one
// conversation, in name order, its lines the turns; other files are not
// read.
func TestRawPayloadDirectory(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"b.jsonl":   `{"messages":[{"role":"user","content":"b1"}]}`,
		"a.jsonl":   "{\"messages\":[{\"role\":\"user\",\"content\":\"a1\"}]}\n{\"messages\":[{\"role\":\"user\",\"content\":\"a1\"},{\"role\":\"assistant\",\"content\":\"r\"},{\"role\":\"user\",\"content\":\"a2\"}]}\n",
		"notes.txt": "not json",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	convs, err := ReadFile(dir, FileOptions{Type: "raw_payload", Corpus: NewCorpus(builtin(t))})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"a": {`{"messages":[{"role":"user","content":"a1"}]}`, `{"messages":[{"role":"user","content":"a1"},{"role":"assistant","content":"r"},{"role":"user","content":"a2"}]}`},
		"b": {`{"messages":[{"role":"user","content":"b1"}]}`},
	}
	if len(convs) != 2 || convs[0].ID != "a" || convs[1].ID != "b" {
		t.Fatalf("conversations %+v, want a then b", convs)
	}
	for _, c := range convs {
		if !c.Standalone || len(c.Turns) != len(want[c.ID]) {
			t.Fatalf("%s: %+v", c.ID, c)
		}
		for k, b := range want[c.ID] {
			if string(c.Turns[k].Body) != b {
				t.Errorf("%s turn %d: %s, want %s", c.ID, k+1, c.Turns[k].Body, b)
			}
		}
	}
	if got := convs[0].Turns[1].Text; got != "a1\nr\na2" {
		t.Errorf("the second turn counts %q, want the whole history it carries", got)
	}
}

func TestRawPayloadErrors(t *testing.T) {
	cases := []struct{ content, want string }{
		{"{\"messages\":[]}\n[1, 2]", ":2: not a JSON object"},
		{`{"messages":[`, ":1: not valid JSON"},
		{"{\"a\":1}\n\n\"text\"", ":3: not a JSON object"},
		{"null", ":1: not a JSON object"},
		{`{"a":1} {"b":2}`, ":1: not valid JSON"},
	}
	corpus := NewCorpus(builtin(t))
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, "p.jsonl", c.content), FileOptions{Type: "raw_payload", Corpus: corpus})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.content, err, c.want)
		}
	}
}

// FuzzRawPayloadLine: a line is sent byte for byte with its text counted,
// or refused with the line's number; never a panic.
func FuzzRawPayloadLine(f *testing.F) {
	seedLines(f, "raw_payload.jsonl")
	f.Add([]byte(`{"messages":[{"content":[1,{"text":2},"x"]}],"prompt":{},"max_tokens":1e99}`))
	corpus := NewCorpus(builtin(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &sourceFile{name: "p.jsonl", format: "raw_payload"}
		turn, err := parseRawPayloadLine(src, sourceLine{num: 7, data: data}, corpus)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "p.jsonl:7: ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		if string(turn.Body) != string(data) || turn.InputTokens != corpus.Count(turn.Text) || turn.MaxTokens < 0 {
			t.Fatalf("turn %+v from %q", turn, data)
		}
	})
}

// seedLines adds every line of an example file to a fuzz corpus.
func seedLines(f *testing.F, example string) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", example))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f.Add([]byte(l))
	}
}
