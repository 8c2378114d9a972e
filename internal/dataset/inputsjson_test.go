package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadInputsJSON(t *testing.T) {
	corpus := NewCorpus(builtin(t))
	convs := readExample(t, "inputs_json", "inputs.json", 0)
	want := []struct {
		id    string
		turns []sent
	}{
		{"chat_1", []sent{
			{`{"messages":[{"role":"user","content":"What is machine learning?"}],"model":"mock-model","stream":true,"max_completion_tokens":40}`, "What is machine learning?", 40},
			{`{"messages":[{"role":"user","content":"What is machine learning?"},{"role":"assistant","content":"Machine learning is software that learns patterns from data."},{"role":"user","content":"Can you give me an example?"}],"model":"mock-model","stream":true,"max_completion_tokens":40}`,
				"What is machine learning?\nMachine learning is software that learns patterns from data.\nCan you give me an example?", 40},
		}},
		{"chat_2", []sent{
			{`{"messages":[{"role":"system","content":"Answer in one sentence."},{"role":"user","content":"Explain neural networks."}],"model":"mock-model","stream":true,"max_completion_tokens":60}`, "Answer in one sentence.\nExplain neural networks.", 60},
		}},
	}
	if len(convs) != len(want) {
		t.Fatalf("%d sessions, want %d", len(convs), len(want))
	}
	for i, w := range want {
		c := convs[i]
		got := turnsSent(c)
		if c.ID != w.id || !c.Standalone || len(got) != len(w.turns) {
			t.Fatalf("session %d: %s %+v, want %s %+v", i, c.ID, got, w.id, w.turns)
		}
		for k := range got {
			if got[k] != w.turns[k] || c.Turns[k].InputTokens != corpus.Count(w.turns[k].text) {
				t.Errorf("%s payload %d: %+v, want %+v", w.id, k+1, got[k], w.turns[k])
			}
		}
	}
	if !MultiTurn(convs) || Timed(convs) {
		t.Error("the example has a two-turn session and no timestamps")
	}
}

// TestInputsJSONCompactAndIDs: the file's indentation is not sent (the
// bodies as a run sent them), key order and spacing inside strings stay,
// and a session without an id is named by its position.
func TestInputsJSONCompactAndIDs(t *testing.T) {
	doc := "{\n  \"data\": [\n    {\n      \"payloads\": [\n        {\n          \"prompt\": \"a  b\",\n          \"model\": \"m\"\n        }\n      ]\n    },\n    {\"session_id\": \"\", \"payloads\": [{\"z\": 1, \"a\": [1, 2]}]},\n    {\"session_id\": \"named\", \"payloads\": [{\"input\": \"x\"}, {\"input\": \"y\"}]}\n  ]\n}\n"
	convs, err := ReadFile(writeFile(t, "inputs.json", doc), FileOptions{Type: "inputs_json", Corpus: NewCorpus(builtin(t))})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id     string
		bodies []string
	}{
		{"session_000000", []string{`{"prompt":"a  b","model":"m"}`}},
		{"session_000001", []string{`{"z":1,"a":[1,2]}`}},
		{"named", []string{`{"input":"x"}`, `{"input":"y"}`}},
	}
	if len(convs) != len(want) {
		t.Fatalf("%d sessions, want %d", len(convs), len(want))
	}
	for i, w := range want {
		var bodies []string
		for _, tr := range convs[i].Turns {
			bodies = append(bodies, string(tr.Body))
		}
		if convs[i].ID != w.id || strings.Join(bodies, "|") != strings.Join(w.bodies, "|") {
			t.Errorf("session %d: %s %v, want %s %v", i, convs[i].ID, bodies, w.id, w.bodies)
		}
	}
}

func TestInputsJSONErrors(t *testing.T) {
	cases := []struct{ content, want string }{
		{`[]`, ":1: want the document's opening {"},
		{"{\n\"sessions\": []\n}", `:2: unknown field "sessions" (inputs_json takes data)`},
		{"{\"data\": [\n{\"session_id\": \"a\", \"payloads\": [{}]},\n{\"session_id\": \"b\", \"turns\": []}\n]}", `:3: session 2: unknown field "turns"`},
		{"{\"data\": [\n{\"session_id\": \"a\", \"payloads\": [{}]},\n{\"session_id\": \"a\", \"payloads\": [{}]}\n]}", `:3: session_id "a" is already used on line 2`},
		{"{\"data\": [\n{\"session_id\": \"a\",\n\"payloads\": []}\n]}", `:2: session "a" has no payloads`},
		{"{\"data\": [\n{\"session_id\": \"a\",\n\"payloads\": [{}, [1]]}\n]}", `:2: session "a" payload 2: not a JSON object`},
		{"{\"data\": [\n{\"session_id\": 5, \"payloads\": [{}]}]}", `:2: field "session_id"`},
		{"{\"data\": [\n{\"payloads\": [{}]}\n", `not valid JSON (the file ends inside a value)`},
		{"{\"data\": [\n{\"payloads\": [{}]}\n]\n}\n{}", `:5: more than one JSON value`},
		{"{\"data\": [\n{\"payloads\": [{,}]}]}", `:2: not valid JSON`},
		{`{"data": []}`, "no requests in it"},
	}
	corpus := NewCorpus(builtin(t))
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, "inputs.json", c.content), FileOptions{Type: "inputs_json", Corpus: corpus})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.content, err, c.want)
		}
	}
}

// FuzzInputsJSON: any document gives sessions of JSON-object bodies with
// their text counted, or an error naming the file; never a panic.
func FuzzInputsJSON(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "inputs.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"data":[{"session_id":"a","payloads":[{"messages":[{"content":"x"}]}]}],"data":[]}`))
	corpus := NewCorpus(builtin(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []sourceLine
		for i, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, sourceLine{num: i + 1, data: []byte(l)})
			}
		}
		if len(lines) == 0 {
			return
		}
		src := &sourceFile{name: "inputs.json", format: "inputs_json", lines: lines}
		convs, err := parseInputsJSON(src, corpus)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "inputs.json:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, c := range convs {
			if len(c.Turns) == 0 || !c.Standalone {
				t.Fatalf("session %+v", c)
			}
			for _, tr := range c.Turns {
				if len(tr.Body) == 0 || tr.Body[0] != '{' || tr.InputTokens != corpus.Count(tr.Text) {
					t.Fatalf("%s: turn %+v", c.ID, tr)
				}
			}
		}
	})
}
