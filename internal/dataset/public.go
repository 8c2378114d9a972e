package dataset

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// PublicDataset is one of AIPerf's --public-dataset names: where its
// file lives and how its rows become conversations, or why llmbench does
// not send it.
type PublicDataset struct {
	Name string
	// Repo, Revision and File locate the file on the Hugging Face Hub
	// (a dataset repository). Sets AIPerf loads with the datasets library
	// are read from the Hub's own Parquet conversion of the split
	// (revision refs/convert/parquet, <config>/<split>/0000.parquet): its
	// first shard, which for every set here but NuminaMath-CoT and
	// NuminaMath-1.5 is the whole split.
	Repo, Revision, File string
	// URL is where a set not on the Hub is published (spec_bench): it is
	// read only from --public-dataset-path.
	URL string
	// Refused says why llmbench does not send it ("" when it does).
	Refused string
	read    func(path string, o PublicOptions) ([]Conversation, error)
}

// PublicOptions are what reading a public dataset needs.
type PublicOptions struct {
	// Corpus counts the prompts with the run's tokenizer.
	Corpus *Corpus
	// OutputGiven says --output-tokens-mean was given (ShareGPT then keeps
	// replies shorter than 4 tokens).
	OutputGiven bool
}

// parquetFile is the first shard of a split in the Hub's Parquet conversion.
func parquetFile(config, split string) string { return config + "/" + split + "/0000.parquet" }

const parquetRevision = "refs/convert/parquet"

// instruction is a set of one prompt per row (AIPerf's
// HFInstructionResponseDatasetLoader): the prompt column, or a template
// of {column} fields.
func instruction(name, repo, config, split, column, template string) PublicDataset {
	return PublicDataset{Name: name, Repo: repo, Revision: parquetRevision, File: parquetFile(config, split),
		read: func(path string, o PublicOptions) ([]Conversation, error) {
			return readInstructionRows(path, column, template, o)
		}}
}

const blazeditTemplate = "Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\n{code}\n```\n\nChange request:\n{change_request}\n\nPlease generate the new code file in the \"New file\" section below."

// Refusal reasons, one per family.
const (
	refuseImages = "its questions come with images stored in the dataset's Parquet rows, which llmbench does not decode; send images from a file with --input-file (single_turn lines with \"image\")"
	refuseVideo  = "its questions come with videos, which llmbench does not fetch from a dataset; send videos from a file with --input-file (single_turn lines with \"video\")"
	refuseAudio  = "its clips are streamed audio arrays that AIPerf re-encodes as WAV, which llmbench does not do; send audio from a file with --input-file (single_turn lines with \"audio\")"
	refuseAgent  = "it replays recorded agent sessions (message and tool snapshots with their own request controls), for which llmbench has no loader"
	refuseWeka   = "it is a Weka agentic trace whose subagent sessions are started and joined by the parent's turns, scheduling llmbench does not have"
)

// publicDatasets are AIPerf 0.12's 42 --public-dataset names.
var publicDatasets = func() map[string]PublicDataset {
	list := []PublicDataset{
		{Name: "sharegpt", Repo: "anon8231489123/ShareGPT_Vicuna_unfiltered", Revision: "main", File: "ShareGPT_V3_unfiltered_cleaned_split.json",
			read: func(path string, o PublicOptions) ([]Conversation, error) {
				f, err := os.Open(path)
				if err != nil {
					return nil, err
				}
				defer f.Close()
				return readShareGPT(f, o)
			}},
		instruction("aimo", "AI-MO/NuminaMath-TIR", "default", "train", "problem", ""),
		instruction("aimo_aime", "AI-MO/aimo-validation-aime", "default", "train", "problem", ""),
		instruction("aimo_numina_cot", "AI-MO/NuminaMath-CoT", "default", "train", "problem", ""),
		instruction("aimo_numina_1_5", "AI-MO/NuminaMath-1.5", "default", "train", "problem", ""),
		instruction("spec_al_gsm8k", "openai/gsm8k", "main", "test", "question", ""),
		instruction("spec_al_math500", "HuggingFaceH4/MATH-500", "default", "test", "problem", ""),
		instruction("spec_al_humaneval", "openai/openai_humaneval", "openai_humaneval", "test", "prompt", ""),
		instruction("spec_al_mbpp", "google-research-datasets/mbpp", "full", "test", "text", ""),
		instruction("instruct_coder", "likaixin/InstructCoder", "default", "train", "instruction", ""),
		instruction("blazedit_5k", "vdaita/edit_5k_char", "default", "train", "change_request", blazeditTemplate),
		instruction("blazedit_10k", "vdaita/edit_10k_char", "default", "train", "change_request", blazeditTemplate),
		{Name: "spec_al_mtbench", Repo: "HuggingFaceH4/mt_bench_prompts", Revision: parquetRevision, File: parquetFile("default", "train"),
			read: readMTBench},
		{Name: "spec_bench", URL: "https://raw.githubusercontent.com/hemingkx/Spec-Bench/fd2c1cd7d2201ef71db4c5f4e455008f017967bf/data/spec_bench/question.jsonl",
			read: readSpecBench},

		{Name: "mmstar", Refused: refuseImages},
		{Name: "vision_arena", Refused: refuseImages},
		{Name: "llava_onevision", Refused: refuseImages},
		{Name: "mmvu", Refused: refuseVideo},
		{Name: "librispeech", Refused: refuseAudio},
		{Name: "voxpopuli", Refused: refuseAudio},
		{Name: "gigaspeech", Refused: refuseAudio},
		{Name: "ami", Refused: refuseAudio},
		{Name: "spgispeech", Refused: refuseAudio},
		{Name: "exgentic", Refused: refuseAgent},
		{Name: "exgentic_v2", Refused: refuseAgent},
		{Name: "weka_hf", Refused: refuseWeka},
	}
	for _, s := range []string{"", "_no_subagents", "_with_subagents", "_with_subagents_256k",
		"_with_subagents_060226", "_with_subagents_060226_256k", "_with_subagents_060526", "_with_subagents_060526_256k",
		"_with_subagents_060826", "_with_subagents_060826_256k", "_061326", "_061326_256k",
		"_061526", "_061526_256k", "_062126", "_062126_256k"} {
		list = append(list, PublicDataset{Name: "semianalysis_cc_traces_weka" + s, Refused: refuseWeka})
	}
	m := make(map[string]PublicDataset, len(list))
	for _, d := range list {
		m[d.Name] = d
	}
	return m
}()

// PublicDatasets lists AIPerf's --public-dataset names.
func PublicDatasets() []string {
	names := make([]string, 0, len(publicDatasets))
	for n := range publicDatasets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SupportedPublicDatasets lists the names llmbench sends.
func SupportedPublicDatasets() []string {
	var names []string
	for _, n := range PublicDatasets() {
		if publicDatasets[n].Refused == "" {
			names = append(names, n)
		}
	}
	return names
}

// LookupPublic returns the named set, or an error that lists the names
// or says why llmbench does not send it.
func LookupPublic(name string) (PublicDataset, error) {
	d, ok := publicDatasets[name]
	switch {
	case !ok:
		return d, fmt.Errorf("--public-dataset %q: llmbench sends %s", name, strings.Join(SupportedPublicDatasets(), ", "))
	case d.Refused != "":
		return d, fmt.Errorf("--public-dataset %s is not supported: %s", name, d.Refused)
	}
	return d, nil
}

// ReadPublic reads the named set from its file (the Hub's, found in the
// cache, or --public-dataset-path) as conversations, their prompts counted.
func ReadPublic(name, path string, o PublicOptions) ([]Conversation, error) {
	d, err := LookupPublic(name)
	if err != nil {
		return nil, err
	}
	if o.Corpus == nil {
		return nil, fmt.Errorf("read %s: no corpus to count tokens with", name)
	}
	convs, err := d.read(path, o)
	if err != nil {
		return nil, fmt.Errorf("--public-dataset %s: %s: %w", name, path, err)
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("--public-dataset %s: %s: no entry is left to send (every row was empty or filtered out)", name, path)
	}
	return convs, nil
}

// readInstructionRows makes a one-turn conversation of each row's prompt:
// the column, or the template with its {column} fields filled. Rows
// whose prompt is blank are left out, as in AIPerf.
func readInstructionRows(path, column, template string, o PublicOptions) ([]Conversation, error) {
	cols := []string{column}
	if template != "" {
		cols = templateFields(template)
	}
	rows, err := readRows(path, cols)
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 {
		for _, c := range cols {
			if _, ok := rows[0][c]; !ok {
				return nil, fmt.Errorf("the first row has no text column %q", c)
			}
		}
	}
	var convs []Conversation
	for _, r := range rows {
		prompt, _ := r[column].(string)
		if template != "" {
			prompt = fillTemplate(template, r)
		}
		if strings.TrimSpace(prompt) == "" {
			continue
		}
		convs = append(convs, Conversation{ID: fmt.Sprintf("session_%06d", len(convs)),
			Turns: []Turn{{Text: prompt, InputTokens: o.Corpus.Count(prompt)}}})
	}
	return convs, nil
}

// templateFields are the {name} fields of a template, in order.
func templateFields(t string) []string {
	var names []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, t[i+1:i+j])
		t = t[i+j+1:]
	}
}

func fillTemplate(t string, r row) string {
	for _, name := range templateFields(t) {
		v, _ := r[name].(string)
		t = strings.Replace(t, "{"+name+"}", v, 1)
	}
	return t
}

// readMTBench makes a conversation of each row's prompts (MT-Bench's two
// turns, in its "prompt" column).
func readMTBench(path string, o PublicOptions) ([]Conversation, error) {
	rows, err := readRows(path, []string{"prompt"})
	if err != nil {
		return nil, err
	}
	var convs []Conversation
	for _, r := range rows {
		var prompts []string
		switch v := r["prompt"].(type) {
		case []string:
			prompts = v
		case string:
			prompts = []string{v}
		}
		c := Conversation{ID: fmt.Sprintf("session_%06d", len(convs))}
		for _, p := range prompts {
			if strings.TrimSpace(p) != "" {
				c.Turns = append(c.Turns, Turn{Text: p, InputTokens: o.Corpus.Count(p)})
			}
		}
		if len(c.Turns) > 0 {
			convs = append(convs, c)
		}
	}
	return convs, nil
}

// readSpecBench makes a one-turn conversation of each question's first
// turn, as AIPerf's SpecBench loader does by default.
func readSpecBench(path string, o PublicOptions) ([]Conversation, error) {
	rows, err := readRows(path, []string{"turns"})
	if err != nil {
		return nil, err
	}
	var convs []Conversation
	for _, r := range rows {
		turns, _ := r["turns"].([]string)
		if len(turns) == 0 || strings.TrimSpace(turns[0]) == "" {
			continue
		}
		convs = append(convs, Conversation{ID: fmt.Sprintf("session_%06d", len(convs)),
			Turns: []Turn{{Text: turns[0], InputTokens: o.Corpus.Count(turns[0])}}})
	}
	return convs, nil
}
