package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonOf decodes raw for comparing JSON by value.
func jsonOf(t *testing.T, raw string) any {
	t.Helper()
	var v any
	if raw == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

func TestReadSageMakerExample(t *testing.T) {
	convs, err := ReadFile("../../examples/sagemaker_data_capture.jsonl", FileOptions{Type: "sagemaker_data_capture", Corpus: words()})
	if err != nil {
		t.Fatal(err)
	}
	weather := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	// Sorted by inferenceTime, the earliest (the second line) at 0 ms.
	want := []struct {
		text  string
		in    int
		max   int
		at    float64
		extra string
	}{
		{"What is the weather in Paris?", 7, 32, 0,
			`{"messages":[{"role":"user","content":"What is the weather in Paris?"}],"tools":` + weather + `}`},
		{"You are a terse assistant.\nName three primary colors.", 11, 16, 2250,
			`{"messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Name three primary colors."}]}`},
		{"Translate 'good morning' into Spanish.", 8, 0, 3500,
			`{"messages":[{"role":"user","content":"Translate 'good morning' into Spanish."}]}`},
	}
	if len(convs) != len(want) {
		t.Fatalf("%d conversations, want %d", len(convs), len(want))
	}
	for i, w := range want {
		c := convs[i]
		if !c.Standalone || len(c.Turns) != 1 || c.ID != []string{"session_000000", "session_000001", "session_000002"}[i] {
			t.Fatalf("conversation %d: %+v", i, c)
		}
		tu := c.Turns[0]
		if tu.Text != w.text || tu.InputTokens != w.in || tu.MaxTokens != w.max || !tu.HasTimestamp || tu.TimestampMs != w.at {
			t.Errorf("request %d: %q %d tokens, max %d, at %g (%v); want %q %d, %d, %g", i, tu.Text, tu.InputTokens, tu.MaxTokens, tu.TimestampMs, tu.HasTimestamp, w.text, w.in, w.max, w.at)
		}
		if got, exp := jsonOf(t, string(tu.Extra)), jsonOf(t, w.extra); !reflect.DeepEqual(got, exp) {
			t.Errorf("request %d: extra %s, want %s", i, tu.Extra, w.extra)
		}
	}
}

func TestReadSageMakerDirectory(t *testing.T) {
	// Captures are kept as <endpoint>/<variant>/yyyy/mm/dd/hh/*.jsonl.
	dir := t.TempDir()
	line := func(at, prompt string) string {
		body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": prompt}}})
		rec, _ := json.Marshal(map[string]any{
			"captureData":   map[string]any{"endpointInput": map[string]any{"data": string(body), "encoding": "JSON"}},
			"eventMetadata": map[string]any{"eventId": "e", "inferenceTime": at},
		})
		return string(rec) + "\n"
	}
	files := map[string]string{
		"ep/AllTraffic/2025/03/04/11/b.jsonl":   line("2025-03-04T11:00:00Z", "third"),
		"ep/AllTraffic/2025/03/04/10/a.jsonl":   line("2025-03-04T10:59:59Z", "second") + line("2025-03-04T10:00:00Z", "first"),
		"ep/AllTraffic/2025/03/04/10/notes.txt": "not a capture",
		".hidden/c.jsonl":                       "not read",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	convs, err := ReadFile(dir, FileOptions{Type: "sagemaker_data_capture", Corpus: words()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var at []float64
	for _, c := range convs {
		got = append(got, c.Turns[0].Text)
		at = append(at, c.Turns[0].TimestampMs)
	}
	if !reflect.DeepEqual(got, []string{"first", "second", "third"}) || !reflect.DeepEqual(at, []float64{0, 3599000, 3600000}) {
		t.Errorf("got %v at %v", got, at)
	}
}

func TestReadSageMakerErrors(t *testing.T) {
	ok := `{"eventMetadata":{"inferenceTime":"2025-03-04T10:00:00Z"},"captureData":{"endpointInput":{"data":"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}","encoding":"JSON"}}}`
	tests := []struct{ line, want string }{
		{`{"captureData":{}}`, "no eventMetadata.inferenceTime"},
		{strings.Replace(ok, "2025-03-04T10:00:00Z", "yesterday", 1), `inferenceTime "yesterday": want ISO 8601`},
		{`{"eventMetadata":{"inferenceTime":"2025-03-04T10:00:00Z"},"captureData":{}}`, "no captureData.endpointInput"},
		{strings.Replace(ok, `"JSON"`, `"CSV"`, 1), `encoding "CSV"`},
		{strings.Replace(ok, `"JSON"`, `"BASE64"`, 1), "data is not base64"},
		{strings.Replace(ok, `messages`, `prompt`, 1), `no "messages"; only OpenAI-compatible chat requests can be replayed`},
		{strings.Replace(ok, `\"role\":\"user\",`, ``, 1), `message 1 has no "role"`},
		{strings.Replace(ok, `]}"`, `],\"max_tokens\":0}"`, 1), "max_tokens 0"},
		{`{"eventMetadata":`, "not a capture record"},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "capture.jsonl")
		if err := os.WriteFile(path, []byte(ok+"\n"+tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path, FileOptions{Type: "sagemaker_data_capture", Corpus: words()})
		if err == nil || !strings.Contains(err.Error(), path+":2: ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n  error %v\n  want one line at :2 with %q", tc.line, err, tc.want)
		}
	}
}

// FuzzSageMakerLine: any line gives a chat request with messages and a
// finite timestamp, or an error naming the line.
func FuzzSageMakerLine(f *testing.F) {
	data, err := os.ReadFile("../../examples/sagemaker_data_capture.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		src := &sourceFile{name: "fuzz.jsonl"}
		r, err := parseSageMakerLine(src, sourceLine{num: 1, data: line})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl:1: ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		if !json.Valid(r.messages) || r.maxTokens < 0 {
			t.Fatalf("accepted %q as messages %s, max %d", line, r.messages, r.maxTokens)
		}
	})
}
