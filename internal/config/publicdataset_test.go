package config

import (
	"strings"
	"testing"
)

func TestPublicDatasetFlags(t *testing.T) {
	p, err := parse(t, "--model", "m", "--public-dataset", "sharegpt", "--public-dataset-path", "s.json")
	if err != nil {
		t.Fatal(err)
	}
	if p.Input.PublicDataset != "sharegpt" || p.Input.PublicDatasetPath != "s.json" || p.Input.File != "" {
		t.Errorf("input %+v", p.Input.PublicInput)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--public-dataset-path", "s.json"}, "--public-dataset-path is a copy of a --public-dataset's file: give --public-dataset too"},
		{[]string{"--public-dataset", "sharegpt", "--input-file", "x.jsonl"}, "--public-dataset sharegpt brings its own prompts: drop --input-file and --custom-dataset-type"},
		{[]string{"--public-dataset", "sharegpt", "--custom-dataset-type", "mooncake_trace"}, "drop --input-file and --custom-dataset-type"},
		{[]string{"--public-dataset", "sharegpt", "--shared-system-prompt-length", "10"}, "a --public-dataset brings its own"},
		{[]string{"--public-dataset", "gigaspeech"}, "--public-dataset gigaspeech is not supported: its clips are streamed audio"},
		{[]string{"--public-dataset", "shargpt"}, `--public-dataset "shargpt": llmbench sends aimo, aimo_aime,`},
		{[]string{"--public-dataset", "spec_bench"}, "--public-dataset spec_bench is published at https://raw.githubusercontent.com/hemingkx/Spec-Bench/"},
	}
	for _, tc := range tests {
		_, err := parse(t, append([]string{"--model", "m"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}
