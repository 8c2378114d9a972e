package config

import "fmt"

// bindSynthesisFlags registers AIPerf's Synthesis group: the
// transformations of a trace file (mooncake_trace) before it is replayed.
func (f *Flags) bindSynthesisFlags() {
	s := &f.p.Input.Synthesis
	f.section("Synthesis")
	f.vars((*floatValue)(&s.SpeedupRatio), "Divide the trace's timestamps by this (2 replays it twice as fast).", "synthesis-speedup-ratio")
	f.vars((*floatValue)(&s.PrefixLenMultiplier), "Scale the shared prefix of each trace row (its leading hash blocks that other rows have too); the unique rest keeps its length.", "synthesis-prefix-len-multiplier")
	f.vars((*intValue)(&s.PrefixRootMultiplier), "Spread the rows at random over this many independent copies of the trace's prefix tree, which share no block.", "synthesis-prefix-root-multiplier")
	f.vars((*floatValue)(&s.PromptLenMultiplier), "Scale the unique (unshared) part of each row's prompt.", "synthesis-prompt-len-multiplier")
	f.vars((*floatValue)(&s.OutputLenMultiplier), "Scale each row's output_length.", "synthesis-output-len-multiplier")
	f.vars((*intValue)(&s.MaxISL), "Leave out rows whose input_length exceeds this, and cap synthesized input lengths at it.", "synthesis-max-isl")
	f.vars((*intValue)(&s.MaxOSL), "Cap each row's output_length at this.", "synthesis-max-osl")
}

// synthesisFlags are the Synthesis group's flags, for the refusal below.
var synthesisFlags = []string{
	"synthesis-speedup-ratio", "synthesis-prefix-len-multiplier", "synthesis-prefix-root-multiplier",
	"synthesis-prompt-len-multiplier", "synthesis-output-len-multiplier", "synthesis-max-isl", "synthesis-max-osl",
}

// finishSynthesis checks the --synthesis-* options: in range, and given
// only with a trace the synthesizer reads.
func (p *Profile) finishSynthesis() error {
	s, in := p.Input.Synthesis, &p.Input
	if err := s.Validate(); err != nil {
		return err
	}
	if in.File != "" && in.CustomDatasetType == "mooncake_trace" {
		return nil
	}
	for _, name := range synthesisFlags {
		if p.set[name] {
			return fmt.Errorf("--%s transforms a trace file: give --input-file with --custom-dataset-type mooncake_trace", name)
		}
	}
	if s.Active() {
		return fmt.Errorf("the synthesis options transform a trace file: give --input-file with --custom-dataset-type mooncake_trace")
	}
	return nil
}
