package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/internal/dataset"
)

// finishDataset validates the dataset options: the file and its format,
// the sampling, the fixed schedule, and the synthetic conversation,
// prefix and system-prompt shapes.
func (p *Profile) finishDataset() error {
	in := &p.Input
	if err := p.finishPublicDataset(); err != nil {
		return err
	}
	if in.File != "" && !slices.Contains(dataset.Formats(), in.CustomDatasetType) {
		return fmt.Errorf("--custom-dataset-type %q: use %s", in.CustomDatasetType, strings.Join(dataset.Formats(), ", "))
	}
	switch in.SamplingStrategy {
	case dataset.SampleSequential, dataset.SampleRandom, dataset.SampleShuffle:
	default:
		return fmt.Errorf("--dataset-sampling-strategy %q: use sequential, random or shuffle", in.SamplingStrategy)
	}
	offsets := in.FixedScheduleStart != nil || in.FixedScheduleEnd != nil
	switch {
	case in.FixedSchedule && in.NoFixedSchedule:
		return errors.New("--fixed-schedule and --no-fixed-schedule contradict each other")
	case (in.FixedSchedule || in.FixedScheduleAuto || offsets) && in.File == "":
		return errors.New("--fixed-schedule and its offsets replay the timestamps of a dataset file: give --input-file (with --custom-dataset-type)")
	case in.FixedScheduleAuto && in.FixedScheduleStart != nil:
		return errors.New("--fixed-schedule-auto-offset and --fixed-schedule-start-offset cannot be used together: the auto offset starts the schedule at the first timestamp")
	}
	for name, v := range map[string]*float64{"--fixed-schedule-start-offset": in.FixedScheduleStart, "--fixed-schedule-end-offset": in.FixedScheduleEnd} {
		if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fmt.Errorf("%s %g: want milliseconds, not negative", name, *v)
		}
	}
	if in.FixedScheduleStart != nil && in.FixedScheduleEnd != nil && *in.FixedScheduleEnd < *in.FixedScheduleStart {
		return fmt.Errorf("--fixed-schedule-end-offset %g is before --fixed-schedule-start-offset %g", *in.FixedScheduleEnd, *in.FixedScheduleStart)
	}
	c := in.Conversation
	if c.TurnMean < 1 || c.TurnStddev < 0 || c.DelayMean < 0 || c.DelayStddev < 0 || c.DelayRatio < 0 {
		return errors.New("--conversation-turn-mean must be at least 1; the turn stddev, the delay mean, stddev and ratio cannot be negative")
	}
	pp := in.PrefixPrompt
	switch {
	case pp.PoolSize < 0 || pp.Length < 0 || in.SharedSystemPrompt < 0:
		return errors.New("--prompt-prefix-pool-size, --prompt-prefix-length and --shared-system-prompt-length cannot be negative")
	case pp.PoolSize > 0 && pp.Length == 0:
		return fmt.Errorf("--prompt-prefix-pool-size %d needs --prompt-prefix-length (the tokens of each prefix)", pp.PoolSize)
	case (pp.PoolSize > 0 || in.SharedSystemPrompt > 0) && in.File != "":
		return errors.New("--prompt-prefix-pool-size and --shared-system-prompt-length shape synthetic prompts; a --input-file brings its own")
	case pp.PoolSize > 0 && in.SharedSystemPrompt > 0:
		return errors.New("--prompt-prefix-pool-size and --shared-system-prompt-length both fill the shared start of the prompt; use one")
	}
	if in.File != "" && in.CustomDatasetType == "bailian_trace" && !p.set["prompt-input-tokens-block-size"] {
		// The Bailian traces hash blocks of 16 tokens; AIPerf takes that
		// size for them unless told otherwise.
		in.Prompt.BlockSize = dataset.BailianBlockSize
	}
	if in.Prompt.BlockSize < 1 {
		return fmt.Errorf("--prompt-input-tokens-block-size %d: it must be at least 1 token", in.Prompt.BlockSize)
	}
	p.Loadgen.RequestCountGiven = p.set["request-count"]
	return nil
}
