package config

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/tracesynth"
)

func TestSynthesisFlags(t *testing.T) {
	p, err := parse(t, "-m", "x", "--input-file", "t.jsonl", "--synthesis-speedup-ratio", "2",
		"--synthesis-prefix-len-multiplier", "1.5", "--synthesis-prefix-root-multiplier", "3",
		"--synthesis-prompt-len-multiplier", "0.5", "--synthesis-output-len-multiplier", "2.5",
		"--synthesis-max-isl", "4096", "--synthesis-max-osl", "300")
	if err != nil {
		t.Fatal(err)
	}
	want := tracesynth.Options{SpeedupRatio: 2, PrefixLenMultiplier: 1.5, PrefixRootMultiplier: 3, PromptLenMultiplier: 0.5, OutputLenMultiplier: 2.5, MaxISL: 4096, MaxOSL: 300}
	if p.Input.Synthesis != want {
		t.Errorf("synthesis %+v, want %+v", p.Input.Synthesis, want)
	}
	if p, err := parse(t, "-m", "x"); err != nil || p.Input.Synthesis != tracesynth.Defaults() {
		t.Errorf("defaults %+v, %v", p.Input.Synthesis, err)
	}
}

// A synthesis option needs a mooncake trace; each refusal is one line
// naming the flag.
func TestSynthesisRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--synthesis-speedup-ratio", "2"}, "--synthesis-speedup-ratio transforms a trace file"},
		{[]string{"--synthesis-max-osl", "10"}, "--synthesis-max-osl transforms a trace file"},
		{[]string{"--synthesis-speedup-ratio", "1"}, "--synthesis-speedup-ratio transforms a trace file"},
		{[]string{"--input-file", "t.jsonl", "--custom-dataset-type", "single_turn", "--synthesis-prefix-root-multiplier", "2"}, "--synthesis-prefix-root-multiplier transforms a trace file: give --input-file with --custom-dataset-type mooncake_trace"},
		{[]string{"--input-file", "t.jsonl", "--synthesis-speedup-ratio", "0"}, "--synthesis-speedup-ratio 0: it must be positive"},
		{[]string{"--input-file", "t.jsonl", "--synthesis-max-isl", "-5"}, "--synthesis-max-isl -5: it must be at least 1"},
	} {
		_, err := parse(t, append([]string{"-m", "x"}, c.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want %q…", c.args, err, c.msg)
		}
	}
}
