package metrics

import (
	"math"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// TestComputeMediaAndTokenSides: the media metrics by their formulas on
// round numbers, and a type without output (or input) tokens leaves those
// metrics absent, in the record and in the aggregate.
func TestComputeMediaAndTokenSides(t *testing.T) {
	clock := record.ClockAt(0)
	// 500 ms, 2 images, 3 s of audio, a video job of 1.25 s and 512 MB.
	r := &record.Record{InputTokens: 40, StartPerf: 1000 * msNs, EndPerf: 1500 * msNs, ResponsePerfs: []int64{1500 * msNs},
		InputImages: 2, InputAudioSeconds: 3, Items: 2, Video: &record.Video{InferenceSeconds: 1.25, PeakMemoryMB: 512},
		Usage: &record.Usage{PromptTokens: 44, CacheReadTokens: 30, CacheCreationTokens: 4, HasCache: true}}
	opts := DefaultOptions()
	opts.NoOutputTokens = true
	v := Compute(r, tokenizer.Words{}, clock, opts)
	want := map[ID]float64{
		RequestLatency:           500,
		InputSequenceLength:      40,
		NumImages:                2,
		ImageThroughput:          4,   // 2 images / 0.5 s
		ImageLatency:             250, // 500 ms / 2 images
		AudioDuration:            3,
		RTFx:                     6, // 3 s of audio in 0.5 s
		VideoInferenceTime:       1250,
		VideoPeakMemory:          512,
		UsagePromptTokens:        44,
		UsagePromptTokensDiffPct: 10, // |44 - 40| / 40
		UsageCacheReadTokens:     30,
		UsageCacheCreationTokens: 4,
	}
	for id, w := range want {
		if !near(v.V[id], w) {
			t.Errorf("%s = %v, want %v", RecordDefs[id].Tag, v.V[id], w)
		}
	}
	for _, id := range []ID{OutputSequenceLength, OutputTokenCount, E2EOutputTokenThroughput, UsageCompletionTokens, UsageTotalTokens, OSLMismatchDiffPct} {
		if v.Has(id) {
			t.Errorf("a type without output tokens has %s = %v", RecordDefs[id].Tag, v.V[id])
		}
	}
	agg := NewAggregator(false).ForTokens(false, true)
	agg.Add(r, &v)
	res := agg.Results()
	for _, tag := range []string{"output_token_throughput", "total_token_throughput", "total_osl", "total_output_tokens", "total_usage_completion_tokens",
		"effective_decode_throughput", "tokens_in_flight"} {
		if m, ok := res.Get(tag); ok {
			t.Errorf("aggregate has %s (%+v)", tag, m)
		}
	}
	for _, tag := range []string{"total_isl", "request_throughput", "image_throughput", "rtfx", "effective_concurrency"} {
		if _, ok := res.Get(tag); !ok {
			t.Errorf("aggregate lacks %s", tag)
		}
	}

	opts.NoInputTokens = true
	v = Compute(r, tokenizer.Words{}, clock, opts)
	if v.Has(InputSequenceLength) || v.Has(UsagePromptTokensDiffPct) {
		t.Errorf("a type without input tokens has isl %v, prompt diff %v", v.V[InputSequenceLength], v.V[UsagePromptTokensDiffPct])
	}
	failed := &record.Record{InputTokens: 9, StartPerf: 0, EndPerf: msNs, Err: &record.Error{Type: "X", Message: "x"}}
	if fv := Compute(failed, tokenizer.Words{}, clock, opts); !math.IsNaN(fv.V[ErrorISL]) {
		t.Errorf("error_isl %v for a type without input tokens", fv.V[ErrorISL])
	}
}
