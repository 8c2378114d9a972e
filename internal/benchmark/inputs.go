package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/servertiming"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// inputs are the run's conversations, prepared before anything is sent:
// the dataset, the order it is sampled in, a fixed schedule when it is
// replayed on its timestamps, and inputs.json's view of it.
type inputs struct {
	kind endpoint.Kind
	// typ is kind's type as --extra-inputs configure it (a raw or
	// template type's response_field); extra then holds what is sent.
	typ    endpoint.Type
	models []string
	// extra is --extra-inputs parsed; turnExtra[i][k], when not nil, is
	// that merged with conversation i's turn k's own extras.
	extra     []endpoint.Field
	turnExtra [][][]endpoint.Field
	convs     []dataset.Conversation
	sampler   *dataset.Sampler
	// times, on a fixed schedule, is when conversation i's first turn is
	// due after profiling starts (conversations sorted by it); originMs
	// is the trace timestamp that maps to the start.
	times    []time.Duration
	originMs float64
	// sessions is the number of profiling sessions to start (the whole
	// plan's, every shard's), expected the requests the progress line
	// counts to (this shard's).
	sessions, expected int
	// warmups is --warmup-request-count: the profiling phase's session g
	// sends the sampler's draw warmups+g, after the warm-up's draws.
	warmups int
	// turnCaps, when --request-count is a budget of requests over
	// multi-turn conversations, is how many turns profiling session g
	// sends: whole conversations in the plan's order until the last,
	// which the budget cuts short. It is fixed before the run, so every
	// run of the seed (and every shard) sends the same requests.
	turnCaps []int
	// planNumbers says each request's session_num is its session's
	// number in the plan (single-turn runs; not a sharded one after a
	// warm-up by duration).
	planNumbers bool
	// warmSampler picks the sessions of a warm-up by duration beyond
	// --warmup-request-count, from a stream of their own.
	warmSampler *dataset.Sampler
	// turnModels[i][k] is the model conversation i's turn k is sent to,
	// assigned per prompt before the run as AIPerf assigns it
	// (--model-selection-strategy: round_robin, the nth prompt the model
	// n mod count; random, drawn from the seed).
	turnModels [][]string
	// inputsJSON holds every turn's body without history for its model,
	// as inputs.json shows it; firstBodies the body each conversation's
	// first turn sends, built before the run.
	inputsJSON  []export.InputSession
	firstBodies [][]byte
}

// assignModels gives every prompt of the dataset its model.
func (in *inputs) assignModels(strategy string, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c)) // its own stream: the prompts stay the same
	in.turnModels = make([][]string, len(in.convs))
	n := 0
	for i, c := range in.convs {
		in.turnModels[i] = make([]string, len(c.Turns))
		for k := range c.Turns {
			switch {
			case len(in.models) == 1:
				in.turnModels[i][k] = in.models[0]
			case strategy == config.ModelRandom:
				in.turnModels[i][k] = in.models[rng.IntN(len(in.models))]
			default:
				in.turnModels[i][k] = in.models[n%len(in.models)]
			}
			n++
		}
	}
}

// seedOf returns the run's seed, drawing one (and recording it in p, so
// the exported configuration reproduces the run) when none was given.
func seedOf(p *config.Profile) uint64 {
	if p.Input.RandomSeed == nil {
		s := int64(rand.Uint64() >> 1)
		p.Input.RandomSeed = &s
	}
	return uint64(*p.Input.RandomSeed)
}

// loadText loads the run's tokenizer and tokenizes the corpus that prompts
// (and the built-in server's answers) are cut from.
func loadText(ctx context.Context, p config.Profile, log io.Writer) (tokenizer.Tokenizer, *dataset.Corpus, error) {
	if p.Tokenizer.ForPlaceholder {
		fmt.Fprintf(log, "WARNING  --model %s looks like a placeholder name, which no model hub has: tokens are counted with the builtin tokenizer (tiktoken o200k_base). Pass --tokenizer to count with the model's own.\n", p.Endpoint.ModelNames[0])
	}
	tok, err := tokenizer.Load(ctx, p.Tokenizer.Name, hfhub.Options{Revision: p.Tokenizer.Revision})
	if err != nil {
		return nil, nil, err
	}
	return tok, dataset.NewCorpus(tok), nil
}

func buildInputs(p config.Profile, seed uint64, corpus *dataset.Corpus) (*inputs, error) {
	kind, err := endpoint.Parse(p.Endpoint.Type)
	if err != nil {
		return nil, err
	}
	extra, err := endpoint.ParseExtraInputs(p.Endpoint.ExtraInputs)
	if err != nil {
		return nil, err
	}
	typ, extra, err := endpoint.Configure(kind, extra)
	if err != nil {
		return nil, fmt.Errorf("--endpoint-type %s: %w", kind, err)
	}
	convs, err := conversations(p, seed, corpus)
	if err != nil {
		return nil, err
	}
	if err := attachMedia(p, seed, convs); err != nil {
		return nil, err
	}
	in := &inputs{kind: kind, typ: typ, models: p.Endpoint.ModelNames, extra: extra, convs: convs}
	if err := in.schedule(p); err != nil {
		return nil, err
	}
	// A trace's prompts are built once its schedule's offsets have left
	// out what is not sent, if the machine can hold them.
	if err := config.ReadMachine().CheckDataset(dataset.PendingTokens(in.convs), fmt.Sprintf("the prompts of %s", p.Input.File),
		"replay part of it (--fixed-schedule-start-offset, --fixed-schedule-end-offset)"); err != nil {
		return nil, err
	}
	if err := dataset.BuildPrompts(in.convs); err != nil {
		return nil, err
	}
	if in.sampler, err = dataset.NewSampler(p.Input.SamplingStrategy, len(in.convs), seed); err != nil {
		return nil, err
	}
	if in.warmSampler, err = dataset.NewSampler(p.Input.SamplingStrategy, len(in.convs), seed^0x7761726d); err != nil { // "warm"
		return nil, err
	}
	l := p.Loadgen
	in.warmups = l.WarmupRequestCount
	in.sessions = l.RequestCount
	switch {
	case in.times != nil:
		in.sessions = len(in.times)
	case dataset.MultiTurn(in.convs) && l.RequestCountGiven:
		for left := l.RequestCount; left > 0; {
			turns := min(len(in.convs[in.sampler.At(in.warmups+len(in.turnCaps))].Turns), left)
			in.turnCaps = append(in.turnCaps, turns)
			left -= turns
		}
		in.sessions = len(in.turnCaps)
	case dataset.MultiTurn(in.convs) && l.BenchmarkDuration == 0:
		// Every conversation once, as AIPerf's --conversation-num.
		in.sessions = len(in.convs)
	}
	in.expected = in.shardRequests(p.Shard)
	in.planNumbers = !dataset.MultiTurn(in.convs) && !(p.Shard.Sharded() && l.WarmupDuration > 0)
	in.assignModels(p.Endpoint.ModelSelection, seed)
	in.inputsJSON = make([]export.InputSession, len(in.convs))
	in.firstBodies = make([][]byte, len(in.convs))
	in.turnExtra = make([][][]endpoint.Field, len(in.convs))
	for i, c := range in.convs {
		s := export.InputSession{SessionID: c.ID}
		for k, t := range c.Turns {
			if t.Body != nil {
				if err := rawStreamMatches(t.Body, p.Endpoint.Streaming); err != nil {
					return nil, fmt.Errorf("%s: session %s request %d: %w", p.Input.File, c.ID, k+1, err)
				}
			}
			if len(t.Extra) > 0 {
				if in.turnExtra[i] == nil {
					in.turnExtra[i] = make([][]endpoint.Field, len(c.Turns))
				}
				merged, err := endpoint.ParseExtraInputs(append(slices.Clip(p.Endpoint.ExtraInputs), string(t.Extra)))
				if err != nil {
					return nil, fmt.Errorf("conversation %s turn %d: extra: %w", c.ID, k+1, err)
				}
				if _, merged, err = endpoint.Configure(kind, merged); err != nil {
					return nil, fmt.Errorf("conversation %s turn %d: extra: %w", c.ID, k+1, err)
				}
				in.turnExtra[i][k] = merged
			}
			body, err := in.body(p, in.turnModels[i][k], i, k, nil)
			if err != nil {
				return nil, fmt.Errorf("conversation %s turn %d: %w", c.ID, k+1, err)
			}
			if k == 0 {
				in.firstBodies[i] = body
			}
			shown := json.RawMessage(body)
			if in.kind.Caps().Multipart {
				// inputs.json shows a form as JSON: its fields, and
				// each file's name, type and size.
				if shown, err = formJSON(body); err != nil {
					return nil, fmt.Errorf("conversation %s turn %d: %w", c.ID, k+1, err)
				}
			}
			s.Payloads = append(s.Payloads, shown)
		}
		in.inputsJSON[i] = s
	}
	return in, nil
}

// shardRequests is the number of profiling requests the shard sends
// (every one when not sharded): its sessions' turns.
func (in *inputs) shardRequests(sh config.Shard) int {
	plan := schedule.Shard{Index: sh.Index, Count: sh.Count}
	if !dataset.MultiTurn(in.convs) && in.times == nil {
		return plan.Part(in.sessions)
	}
	n := 0
	for g := range in.sessions {
		if plan.Owns(g) {
			n += in.turns(record.PhaseProfiling, g)
		}
	}
	return n
}

// conversation is the index of the conversation the phase's session g
// sends: on a fixed schedule the g-th by time, else the sampler's draw,
// the warm-up's first.
func (in *inputs) conversation(phase record.Phase, g int) int {
	switch {
	case phase == record.PhaseProfiling && in.times != nil:
		return g
	case phase == record.PhaseProfiling:
		return in.sampler.At(in.warmups + g)
	case g < in.warmups:
		return in.sampler.At(g)
	}
	return in.warmSampler.At(g - in.warmups)
}

// turns is how many turns the phase's session g sends.
func (in *inputs) turns(phase record.Phase, g int) int {
	if phase == record.PhaseProfiling && in.turnCaps != nil {
		return in.turnCaps[g]
	}
	return len(in.convs[in.conversation(phase, g)].Turns)
}

// conversations are the run's dataset: the --input-file, or synthetic.
func conversations(p config.Profile, seed uint64, corpus *dataset.Corpus) ([]dataset.Conversation, error) {
	in := p.Input
	var convs []dataset.Conversation
	var err error
	if in.PublicDataset != "" {
		return publicConversations(p, corpus)
	}
	if in.File != "" {
		convs, err = dataset.ReadFile(in.File, dataset.FileOptions{
			Type: in.CustomDatasetType, Corpus: corpus, BlockSize: in.Prompt.BlockSize, Conversations: in.NumDatasetEntries, Seed: seed,
			Defer: true, Synthesis: in.Synthesis,
		})
		if err != nil {
			return nil, err
		}
		// The file's think times, scaled as the synthetic ones are.
		for i := range convs {
			for k := range convs[i].Turns {
				convs[i].Turns[k].DelayMs *= in.Conversation.DelayRatio
			}
		}
		return convs, nil
	}
	c := in.Conversation
	syn := dataset.Synthetic{
		Conversations: in.NumDatasetEntries,
		InputMean:     in.Prompt.InputTokens.Mean, InputStddev: in.Prompt.InputTokens.Stddev,
		OutputMean: in.Prompt.OutputTokens.Mean, OutputStddev: in.Prompt.OutputTokens.Stddev,
		TurnMean: c.TurnMean, TurnStddev: c.TurnStddev, DelayMean: c.DelayMean, DelayStddev: c.DelayStddev, DelayRatio: c.DelayRatio,
		PrefixPool: in.PrefixPrompt.PoolSize, PrefixLength: in.PrefixPrompt.Length, SharedSystemLength: in.SharedSystemPrompt,
		Seed: seed,
	}
	switch caps := endpoint.Kind(p.Endpoint.Type).Caps(); caps.Input {
	case endpoint.Texts:
		syn.Batch = in.Media.PromptBatchSize
	case endpoint.Ranking:
		r := in.Media.Rankings
		syn.Rankings = &dataset.Rankings{PassagesMean: r.PassagesMean, PassagesStddev: r.PassagesStddev,
			PassageTokensMean: r.PassageTokensMean, PassageTokensStddev: r.PassageTokensStddev,
			QueryTokensMean: r.QueryTokensMean, QueryTokensStddev: r.QueryTokensStddev}
	}
	return syn.Generate(corpus)
}

// schedule sets up the fixed schedule when the run replays timestamps:
// asked for, or a file whose every conversation has one (as AIPerf turns
// it on for traces) unless --no-fixed-schedule. The conversations are
// kept within the offsets and sorted by time.
func (in *inputs) schedule(p config.Profile) error {
	opt := p.Input
	timed := dataset.Timed(in.convs)
	if opt.FixedSchedule && !timed {
		return fmt.Errorf("--fixed-schedule: %s has requests without a timestamp; every conversation's first request needs one", opt.File)
	}
	if !timed || opt.NoFixedSchedule || opt.File == "" {
		return nil
	}
	sort.SliceStable(in.convs, func(i, j int) bool { return in.convs[i].Turns[0].TimestampMs < in.convs[j].Turns[0].TimestampMs })
	kept := in.convs[:0]
	before, after := 0, 0
	for _, c := range in.convs {
		ts := c.Turns[0].TimestampMs
		switch {
		case opt.FixedScheduleStart != nil && ts < *opt.FixedScheduleStart:
			before++
		case opt.FixedScheduleEnd != nil && ts > *opt.FixedScheduleEnd:
			after++
		default:
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("the fixed schedule's offsets leave no request: %d are before --fixed-schedule-start-offset and %d after --fixed-schedule-end-offset", before, after)
	}
	in.convs = kept
	switch {
	case opt.FixedScheduleStart != nil:
		in.originMs = *opt.FixedScheduleStart
	case opt.FixedScheduleAuto:
		in.originMs = kept[0].Turns[0].TimestampMs
	}
	// Guard against a schedule that would sit silent: a first request due
	// years away (epoch timestamps without --fixed-schedule-auto-offset),
	// or a timestamp too large for any run (1e300), which would overflow.
	if first := kept[0].Turns[0].TimestampMs - in.originMs; first > maxFirstDueMs {
		return fmt.Errorf("%s: the first request is due %v after the start (timestamp %.0f ms): the timestamps look like epoch times; add --fixed-schedule-auto-offset to send the first at once, or set --fixed-schedule-start-offset",
			opt.File, time.Duration(math.Min(first, math.MaxInt64/1e6)*float64(time.Millisecond)).Round(time.Second), kept[0].Turns[0].TimestampMs)
	}
	for _, c := range kept {
		if ts := c.Turns[0].TimestampMs; math.IsNaN(ts) || math.IsInf(ts, 0) || ts-in.originMs > maxTraceSpanMs {
			return fmt.Errorf("%s: timestamp %g ms (conversation %s) lies beyond %v from the schedule's start, longer than any run: fix the trace or leave the request out with --fixed-schedule-end-offset",
				opt.File, ts, c.ID, time.Duration(maxTraceSpanMs*float64(time.Millisecond)))
		}
	}
	in.times = make([]time.Duration, len(kept))
	for i, c := range kept {
		in.times[i] = in.offset(c.Turns[0].TimestampMs)
	}
	return nil
}

// maxFirstDueMs is the stated horizon for a fixed schedule's first
// request (one hour after the start); maxTraceSpanMs the longest a trace
// may run (100 days), well inside what a time.Duration holds.
const (
	maxFirstDueMs  = 3_600_000
	maxTraceSpanMs = 100 * 24 * 3_600_000
)

// offset is when a trace timestamp falls after profiling starts.
func (in *inputs) offset(ms float64) time.Duration {
	return time.Duration(max(0, ms-in.originMs) * float64(time.Millisecond))
}

// body builds conversation i's turn k for model after history, with the
// system message, --extra-inputs and the turn's own extras.
func (in *inputs) body(p config.Profile, model string, i, k int, history []endpoint.Message) ([]byte, error) {
	c, t := &in.convs[i], &in.convs[i].Turns[k]
	if t.Body != nil {
		return t.Body, nil // sent as it is, as AIPerf sends raw payloads
	}
	extra := in.extra
	if in.turnExtra != nil && in.turnExtra[i] != nil && in.turnExtra[i][k] != nil {
		extra = in.turnExtra[i][k]
	}
	return in.typ.Build(endpoint.Input{
		Model: model, Prompt: t.Text, System: c.System, History: history, MaxTokens: t.MaxTokens, Streaming: p.Endpoint.Streaming, Extra: extra,
		LegacyMaxTokens: p.Endpoint.LegacyMaxTokens, IncludeUsage: p.Tokenizer.UseServerTokenCount || askUsageForTimings(p),
		Texts: t.Texts, Query: t.Query, Passages: t.Passages, Images: t.Images, Audios: t.Audios, Videos: t.Videos,
	})
}

// rawStreamMatches checks that a body sent as it is asks for the answer
// the way --streaming reads it: its own "stream" decides what the server
// sends, and a mismatch would fail every request.
func rawStreamMatches(body []byte, streaming bool) error {
	var b struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &b) // a non-boolean stream reads as false
	switch {
	case b.Stream && !streaming:
		return errors.New(`the body asks "stream": true, and it is sent as it is: add --streaming`)
	case !b.Stream && streaming:
		return errors.New(`the body does not ask "stream": true, and it is sent as it is: drop --streaming (or set "stream": true in the file)`)
	}
	return nil
}

// askUsageForTimings reports whether a request asks for its stream's usage
// chunk for the server's timings (servertiming.AsksForUsage: vLLM sends its
// per-request metrics on that chunk alone). stream_options is OpenAI's own
// field, which every compatible server accepts on a stream.
func askUsageForTimings(p config.Profile) bool {
	return p.Endpoint.ServerTimings == config.ServerTimingsAuto && servertiming.AsksForUsage(p.Endpoint.Streaming)
}
