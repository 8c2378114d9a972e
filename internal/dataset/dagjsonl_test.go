package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadDagExample(t *testing.T) {
	convs, err := ReadFile("../../examples/dag.jsonl", FileOptions{Type: "dag_jsonl", Corpus: words()})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 {
		t.Fatalf("%d conversations, want 2", len(convs))
	}
	// support-1 accumulates: its first turn's system message is the
	// conversation's, each turn one user message.
	s := convs[0]
	if s.ID != "support-1" || s.Standalone || s.System != "You answer billing questions." || s.SystemTokens != 5 {
		t.Errorf("support-1: %q standalone %v system %q (%d tokens)", s.ID, s.Standalone, s.System, s.SystemTokens)
	}
	if got := turnsOf(convs[:1]); !reflect.DeepEqual(got, [][]wantTurn{{{"Why was I charged twice?", 6, 64}, {"Can you refund one of them?", 7, 0}}}) {
		t.Errorf("support-1 turns %+v", got)
	}
	if s.Turns[0].Extra != nil || s.Turns[1].DelayMs != 1500 || string(s.Turns[1].Extra) != `{"temperature":0}` {
		t.Errorf("support-1: extra %s, %s; delay %g", s.Turns[0].Extra, s.Turns[1].Extra, s.Turns[1].DelayMs)
	}
	// agent-step sends its whole message array, with its own model.
	a := convs[1]
	if a.ID != "agent-step" || !a.Standalone || a.System != "" || len(a.Turns) != 1 {
		t.Fatalf("agent-step: %+v", a)
	}
	tu := a.Turns[0]
	if tu.Text != "Plan, then act.\nList the files.\nls\nNow count them." || tu.InputTokens != 14 || tu.MaxTokens != 8 {
		t.Errorf("agent-step: %q %d tokens, max %d", tu.Text, tu.InputTokens, tu.MaxTokens)
	}
	want := `{"messages":[{"role":"system","content":"Plan, then act."},{"role":"user","content":"List the files."},{"role":"assistant","content":"ls"},{"role":"user","content":"Now count them."}],"model":"planner-model"}`
	if !reflect.DeepEqual(jsonOf(t, string(tu.Extra)), jsonOf(t, want)) {
		t.Errorf("agent-step extra %s, want %s", tu.Extra, want)
	}
}

func TestReadDagRefusals(t *testing.T) {
	user := `{"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct{ line, want string }{
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"forks":["c"]}]}`, "session p: turn 1's forks and spawns start and join other sessions, scheduling llmbench does not have"},
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"spawns":[{"children":["c"],"join_at":1}]}]}`, "turn 1's forks and spawns"},
		{`{"session_id":"o","orchestrator":true,"spawns":["a"]}`, "orchestrators (orchestrator, spawns, rounds)"},
		{`{"session_id":"p","pre_session_spawns":["c"],"turns":[` + user + `]}`, "pre_session_spawns start and join"},
		{`{"session_id":"p","context_mode":"deltas_with_responses","turns":[` + user + `]}`, `context_mode "deltas_with_responses"`},
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}]}`, "one user message of text"},
		{`{"session_id":"p","turns":[{"messages":[]}]}`, `"messages" is not a non-empty list`},
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"max_tokens":true}]}`, "max_tokens true"},
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"delay":-1}]}`, "delay -1"},
		{`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"temperature":0}]}`, `unknown field "temperature"`},
		{`{"session_id":"p","turns":[]}`, "session p: no turns"},
		{`{"turns":[` + user + `]}`, "no session_id"},
		{`{"session_id":"first","turns":[` + user + `]}`, `session_id "first" is already used on line 1`},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "dag.jsonl")
		if err := os.WriteFile(path, []byte(`{"session_id":"first","turns":[`+user+`]}`+"\n"+tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path, FileOptions{Type: "dag_jsonl", Corpus: words()})
		if err == nil || !strings.Contains(err.Error(), path+":2: ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n  error %v\n  want one line at :2 with %q", tc.line, err, tc.want)
		}
	}
}

// FuzzDagLine: any line gives a conversation of turns with text, or an
// error naming the line.
func FuzzDagLine(f *testing.F) {
	data, err := os.ReadFile("../../examples/dag.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"session_id":"p","turns":[{"messages":[{"role":"user","content":"hi"}],"forks":[{"child":"c","background":true}]}]}`))
	corpus := words()
	f.Fuzz(func(t *testing.T, line []byte) {
		src := &sourceFile{name: "fuzz.jsonl", format: "dag_jsonl"}
		c, err := parseDagLine(src, sourceLine{num: 1, data: line}, corpus)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl:1: ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		if c.ID == "" || len(c.Turns) == 0 {
			t.Fatalf("accepted %q as %+v", line, c)
		}
		for _, tu := range c.Turns {
			if tu.MaxTokens < 0 || tu.DelayMs < 0 {
				t.Fatalf("accepted %q with turn %+v", line, tu)
			}
		}
	})
}
