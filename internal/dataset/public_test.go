package dataset

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/llmbench/llmbench/internal/tokenizer"
)

var updatePublic = flag.Bool("update-public", false, "rewrite the Parquet files under testdata/public")

// words counts as tokenizer.Words does: by hand.
func words() *Corpus { return NewCorpus(tokenizer.Words{}) }

type wantTurn struct {
	text       string
	in, maxOut int
}

func turnsOf(convs []Conversation) [][]wantTurn {
	var got [][]wantTurn
	for _, c := range convs {
		var ts []wantTurn
		for _, t := range c.Turns {
			ts = append(ts, wantTurn{t.Text, t.InputTokens, t.MaxTokens})
		}
		got = append(got, ts)
	}
	return got
}

func TestReadShareGPT(t *testing.T) {
	hamlet := wantTurn{"Summarize the plot of Hamlet in two sentences.", 9, 13}
	// The fifth entry starts with the assistant's greeting: 0.12 takes the
	// first message whatever its role, and the haiku request as the reply.
	greeting := wantTurn{"Hello! How can I help you today?", 9, 8}
	france := wantTurn{"What is the capital city of France?", 8, 2}
	tests := []struct {
		name        string
		outputGiven bool
		want        [][]wantTurn
	}{
		// Entry 2 has one message, entry 3's prompt is 2 tokens, entry 4's
		// reply is 2 tokens: all three are left out.
		{"default filter", false, [][]wantTurn{{hamlet}, {greeting}}},
		// --output-tokens-mean lifts the reply's minimum only.
		{"output length given", true, [][]wantTurn{{hamlet}, {france}, {greeting}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			convs, err := ReadPublic("sharegpt", "testdata/public/sharegpt.json", PublicOptions{Corpus: words(), OutputGiven: tc.outputGiven})
			if err != nil {
				t.Fatal(err)
			}
			if got := turnsOf(convs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
			for i, c := range convs {
				if want := []string{"session_000000", "session_000001", "session_000002"}[i]; c.ID != want {
					t.Errorf("conversation %d: id %s, want %s", i, c.ID, want)
				}
			}
		})
	}
}

func TestShareGPTKeeps(t *testing.T) {
	tests := []struct {
		in, out     int
		outputGiven bool
		want        bool
	}{
		{4, 4, false, true},
		{3, 100, false, false},     // prompt under 4
		{100, 3, false, false},     // reply under 4
		{100, 3, true, true},       // … unless the output length is given
		{1024, 1024, false, true},  // both limits met exactly
		{1025, 10, false, false},   // prompt over 1024
		{1000, 1049, false, false}, // together over 2048
	}
	for _, tc := range tests {
		if got := shareGPTKeeps(tc.in, tc.out, tc.outputGiven); got != tc.want {
			t.Errorf("shareGPTKeeps(%d, %d, %v) = %v, want %v", tc.in, tc.out, tc.outputGiven, got, tc.want)
		}
	}
}

func TestReadShareGPTRefusesOtherShapes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"conversations": []}`, "not a ShareGPT JSON array"},
		{`[{"conversations": "hi"}]`, "entry 0"},
	} {
		path := filepath.Join(dir, "s.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPublic("sharegpt", path, PublicOptions{Corpus: words()})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tc.body, err, tc.want)
		}
	}
}

// writeParquet writes one record batch of string (or list of string)
// columns, as the Hub's parquet conversion holds them.
func writeParquet(t *testing.T, path string, cols map[string]any, order []string) {
	t.Helper()
	var fields []arrow.Field
	var arrays []arrow.Array
	mem := memory.DefaultAllocator
	for _, name := range order {
		switch v := cols[name].(type) {
		case []string:
			b := array.NewStringBuilder(mem)
			b.AppendValues(v, nil)
			fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true})
			arrays = append(arrays, b.NewArray())
		case [][]string:
			b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
			vb := b.ValueBuilder().(*array.StringBuilder)
			for _, l := range v {
				b.Append(true)
				vb.AppendValues(l, nil)
			}
			fields = append(fields, arrow.Field{Name: name, Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})
			arrays = append(arrays, b.NewArray())
		}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrays, int64(arrays[0].Len()))
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

func TestUpdatePublicParquet(t *testing.T) {
	if !*updatePublic {
		t.Skip("run with -update-public to rewrite testdata/public/*.parquet")
	}
	writeParquet(t, "testdata/public/gsm8k_main_test.parquet", map[string]any{
		"question": []string{"Natalia sold clips to 48 of her friends in April.", "   ", "Weng earns $12 an hour for babysitting."},
		"answer":   []string{"#### 72", "#### 0", "#### 10"},
	}, []string{"question", "answer"})
	writeParquet(t, "testdata/public/mt_bench_train.parquet", map[string]any{
		"prompt":    [][]string{{"Compose a short poem about the sea.", "Now make it rhyme."}, {"Explain recursion to a child."}},
		"category":  []string{"writing", "stem"},
		"prompt_id": []string{"81", "82"},
	}, []string{"prompt", "category", "prompt_id"})
}

func TestReadPublicSets(t *testing.T) {
	dir := t.TempDir()
	blazedit := filepath.Join(dir, "edit.jsonl")
	if err := os.WriteFile(blazedit, []byte(`{"code": "def add(a, b):\n    return a - b", "change_request": "Fix the subtraction bug.", "new_code": "ignored"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	math500 := filepath.Join(dir, "test.json")
	if err := os.WriteFile(math500, []byte(`[{"problem": "Find x if 2x = 10.", "answer": "5"}, {"problem": ""}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       [][]wantTurn
	}{
		{"spec_al_gsm8k", "testdata/public/gsm8k_main_test.parquet", [][]wantTurn{
			{{"Natalia sold clips to 48 of her friends in April.", 11, 0}},
			{{"Weng earns $12 an hour for babysitting.", 9, 0}}, // the blank row is left out
		}},
		{"spec_al_mtbench", "testdata/public/mt_bench_train.parquet", [][]wantTurn{
			{{"Compose a short poem about the sea.", 8, 0}, {"Now make it rhyme.", 5, 0}},
			{{"Explain recursion to a child.", 6, 0}},
		}},
		{"spec_bench", "testdata/public/spec_bench.jsonl", [][]wantTurn{
			{{"Compose an engaging travel blog post about a recent trip to Hawaii.", 13, 0}},
			{{"What is 17 times 23?", 6, 0}}, // question 82's first turn is empty
		}},
		{"blazedit_5k", blazedit, [][]wantTurn{{{
			"Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\ndef add(a, b):\n    return a - b\n```\n\nChange request:\nFix the subtraction bug.\n\nPlease generate the new code file in the \"New file\" section below.",
			words().Count(fillTemplate(blazeditTemplate, row{"code": "def add(a, b):\n    return a - b", "change_request": "Fix the subtraction bug."})), 0}}}},
		{"spec_al_math500", math500, [][]wantTurn{{{"Find x if 2x = 10.", 7, 0}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			convs, err := ReadPublic(tc.name, tc.path, PublicOptions{Corpus: words()})
			if err != nil {
				t.Fatal(err)
			}
			if got := turnsOf(convs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadPublicMissingColumn(t *testing.T) {
	// gsm8k's file read as MATH-500, whose column is "problem".
	_, err := ReadPublic("spec_al_math500", "testdata/public/gsm8k_main_test.parquet", PublicOptions{Corpus: words()})
	if err == nil || !strings.Contains(err.Error(), `"problem"`) {
		t.Fatalf("error %v, want one naming the column", err)
	}
}

func TestLookupPublic(t *testing.T) {
	if n := len(PublicDatasets()); n != 42 {
		t.Errorf("%d names, want AIPerf 0.12's 42", n)
	}
	supported := SupportedPublicDatasets()
	want := []string{"aimo", "aimo_aime", "aimo_numina_1_5", "aimo_numina_cot", "blazedit_10k", "blazedit_5k", "instruct_coder",
		"sharegpt", "spec_al_gsm8k", "spec_al_humaneval", "spec_al_math500", "spec_al_mbpp", "spec_al_mtbench", "spec_bench"}
	if !reflect.DeepEqual(supported, want) {
		t.Errorf("supported %v, want %v", supported, want)
	}
	d, err := LookupPublic("spec_al_gsm8k")
	if err != nil || d.Repo != "openai/gsm8k" || d.Revision != "refs/convert/parquet" || d.File != "main/test/0000.parquet" {
		t.Errorf("spec_al_gsm8k: %+v, %v", d, err)
	}
	for name, want := range map[string]string{
		"librispeech":                        "--public-dataset librispeech is not supported: its clips are streamed audio",
		"mmstar":                             "images",
		"semianalysis_cc_traces_weka_062126": "Weka agentic trace",
		"nope":                               "--public-dataset \"nope\": llmbench sends aimo,",
	} {
		_, err := LookupPublic(name)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, want)
		}
	}
}

func TestReadRowsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.jsonl")
	if err := os.WriteFile(path, []byte("\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRows(path, []string{"x"}); err == nil {
		t.Fatal("an empty file read without error")
	}
	_, err := ReadPublic("aimo", path, PublicOptions{Corpus: words()})
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("error %v", err)
	}
	var pe *os.PathError
	if _, err := ReadPublic("aimo", filepath.Join(t.TempDir(), "none"), PublicOptions{Corpus: words()}); !errors.As(err, &pe) {
		t.Fatalf("missing file: %v", err)
	}
}

// FuzzPublicRows feeds the ShareGPT and row parsers arbitrary bytes: they
// must return conversations or an error, never panic.
func FuzzPublicRows(f *testing.F) {
	for _, name := range []string{"sharegpt.json", "spec_bench.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", "public", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"prompt": ["a b c d", 3]}]`))
	corpus := words()
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = readShareGPT(strings.NewReader(string(data)), PublicOptions{Corpus: corpus})
		_, _ = jsonRows(strings.NewReader(string(data)), []string{"prompt", "turns"})
	})
}
