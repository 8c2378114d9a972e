package metrics

import (
	"math"

	"github.com/llmbench/llmbench/internal/record"
)

// Counter counts tokens in text; the client tokenizer.
type Counter interface {
	Count(text string) int
}

// Options tune how records are measured.
type Options struct {
	// UseServerTokenCount takes ISL and OSL from the server's usage instead
	// of the client tokenizer.
	UseServerTokenCount bool
	// UsageDiffThresholdPct marks a usage discrepancy (default 10).
	UsageDiffThresholdPct float64
	// OSLMismatchPct and OSLMismatchMaxTokens set the OSL mismatch threshold
	// min(requested*pct/100, max tokens) (defaults 5 and 50).
	OSLMismatchPct       float64
	OSLMismatchMaxTokens float64
	// SLOs are --goodput's objectives; none: no goodput metrics.
	SLOs []SLO
	// NoOutputTokens and NoInputTokens: the API type produces no text
	// (embeddings, rankings, images) or takes none (image retrieval), so
	// the token metrics of that side are absent, not zero.
	NoOutputTokens, NoInputTokens bool
}

// DefaultOptions are AIPerf's defaults.
func DefaultOptions() Options {
	return Options{UsageDiffThresholdPct: 10, OSLMismatchPct: 5, OSLMismatchMaxTokens: 50}
}

// Values are one record's metrics. An absent metric is NaN.
type Values struct {
	V [numRecordMetrics]float64
	// ICL holds inter_chunk_latency, in ms: one value per chunk gap.
	ICL              []float64
	UsageDiscrepancy bool
	OSLMismatch      bool
	// Good is set when every SLO holds for a successful record.
	Good bool
	// EndWall is the record's response timestamp (request start + request
	// latency, or the failure time), wall-clock ns.
	StartWall, EndWall int64
	// RequestEndWall is when the last byte (or the failure) was seen,
	// AIPerf's request_end_ns; CreditWall when the request was due (its
	// credit_issued_ns), 0 when unknown. Both are wall-clock ns, set for
	// failed records too: the time-weighted curves and effective_latency
	// count every record.
	RequestEndWall, CreditWall int64
}

// Has reports whether metric id has a value.
func (v *Values) Has(id ID) bool {
	return id != InterChunkLatency && !math.IsNaN(v.V[id]) || id == InterChunkLatency && len(v.ICL) > 0
}

const (
	nsPerMs    = 1e6
	bytesPerKB = 1024 // AIPerf's KILOBYTES
)

func ms(ns int64) float64 { return float64(ns) / nsPerMs }

// Compute measures one record with the metrics reference's formulas.
func Compute(r *record.Record, tok Counter, clock record.Clock, opts Options) Values {
	var v Values
	for i := range v.V {
		v.V[i] = math.NaN()
	}
	v.StartWall = clock.Wall(r.StartPerf)
	v.RequestEndWall = clock.Wall(r.EndPerf)
	if r.CreditIssuedPerf > 0 {
		v.CreditWall = clock.Wall(r.CreditIssuedPerf)
	}

	isl := float64(r.InputTokens)
	if opts.UseServerTokenCount && r.Usage != nil {
		isl = float64(r.Usage.PromptTokens)
	}
	if opts.NoInputTokens {
		isl = math.NaN()
	}
	if !r.Valid() {
		v.V[ErrorISL] = isl
		v.EndWall = clock.Wall(r.EndPerf)
		return v
	}
	v.V[InputSequenceLength] = isl

	// request_latency = content_responses[-1].perf_ns - start_perf_ns
	last := r.EndPerf
	if n := len(r.ResponsePerfs); n > 0 {
		last = r.ResponsePerfs[n-1]
	}
	latencyNs := last - r.StartPerf
	v.V[RequestLatency] = ms(latencyNs)
	v.EndWall = clock.Wall(last)
	if due := r.CreditIssuedPerf; due > 0 {
		// schedule_lateness = start_perf_ns - credit_issued_perf_ns; with a
		// schedule fixed in advance, latencies from the due instant count
		// the client's delay that the usual ones leave out. It is AIPerf's
		// credit_to_start_latency (effective.go) per record, unclamped and
		// over successful records only; credit_to_start_latency also
		// counts failed ones.
		v.V[ScheduleLateness] = ms(r.StartPerf - due)
		if r.Scheduled {
			v.V[RequestLatencyFromSchedule] = ms(last - due)
			if r.Streaming && len(r.ResponsePerfs) > 0 {
				v.V[TimeToFirstTokenFromSchedule] = ms(r.ResponsePerfs[0] - due)
			}
		}
	}

	media(r, &v, latencyNs)
	if u := r.Usage; u != nil && u.HasCache {
		v.V[UsageCacheReadTokens], v.V[UsageCacheCreationTokens] = float64(u.CacheReadTokens), float64(u.CacheCreationTokens)
	}
	if opts.NoOutputTokens {
		noOutputTokens(r, &v, opts)
		return v
	}

	var outputTokens, reasoningTokens float64
	hasReasoning := r.ReasoningText != ""
	if opts.UseServerTokenCount && r.Usage != nil {
		reasoningTokens = float64(r.Usage.ReasoningTokens)
		hasReasoning = hasReasoning || r.Usage.HasReasoning
		outputTokens = float64(r.Usage.CompletionTokens) - reasoningTokens
	} else {
		outputTokens = float64(tok.Count(r.OutputText))
		if hasReasoning {
			reasoningTokens = float64(tok.Count(r.ReasoningText))
		}
	}
	osl := outputTokens + reasoningTokens
	v.V[OutputTokenCount] = outputTokens
	if hasReasoning {
		v.V[ReasoningTokenCount] = reasoningTokens
	}
	v.V[OutputSequenceLength] = osl
	if latencyNs > 0 {
		v.V[E2EOutputTokenThroughput] = osl / (float64(latencyNs) / 1e9)
	}

	if r.Streaming && len(r.ResponsePerfs) > 0 {
		ttftNs := r.ResponsePerfs[0] - r.StartPerf
		v.V[TimeToFirstToken] = ms(ttftNs)
		// decode_duration = request_latency - ttft; negative is an error
		// for this metric of this record (AIPerf raises, and the record
		// goes without it), impossible on a monotonic clock.
		if d := latencyNs - ttftNs; d >= 0 {
			v.V[DecodeDuration] = ms(d)
		}
		if ttftNs > 0 {
			v.V[PrefillThroughputPerUser] = isl / (float64(ttftNs) / 1e9)
		}
		if r.FirstOutputPerf > 0 {
			v.V[TimeToFirstOutputToken] = ms(r.FirstOutputPerf - r.StartPerf)
		}
		if n := len(r.ResponsePerfs); n >= 2 {
			v.V[TimeToSecondToken] = ms(r.ResponsePerfs[1] - r.ResponsePerfs[0])
			v.ICL = make([]float64, n-1)
			for i := 1; i < n; i++ {
				v.ICL[i-1] = ms(r.ResponsePerfs[i] - r.ResponsePerfs[i-1])
			}
			if osl >= 2 {
				// (request_latency - ttft) / (osl - 1)
				itlNs := float64(latencyNs-ttftNs) / (osl - 1)
				v.V[InterTokenLatency] = itlNs / nsPerMs
				if itlNs > 0 {
					v.V[OutputTokenThroughputPerUser] = 1 / (itlNs / 1e9)
				}
			}
		}
	}

	if u := r.Usage; u != nil {
		v.V[UsagePromptTokens] = float64(u.PromptTokens)
		v.V[UsageCompletionTokens] = float64(u.CompletionTokens)
		v.V[UsageTotalTokens] = float64(u.TotalTokens)
		threshold := opts.UsageDiffThresholdPct
		diff := func(id ID, server, client float64) {
			if client > 0 {
				v.V[id] = math.Abs((server-client)/client) * 100
				if v.V[id] > threshold {
					v.UsageDiscrepancy = true
				}
			}
		}
		diff(UsagePromptTokensDiffPct, float64(u.PromptTokens), isl)
		diff(UsageCompletionTokensDiffPct, float64(u.CompletionTokens), osl)
		if u.HasReasoning {
			v.V[UsageReasoningTokens] = float64(u.ReasoningTokens)
			if hasReasoning {
				diff(UsageReasoningTokensDiffPct, float64(u.ReasoningTokens), reasoningTokens)
			}
		}
	}

	if req := float64(r.RequestedOutputTokens); req > 0 {
		v.V[OSLMismatchDiffPct] = (osl - req) / req * 100
		threshold := math.Min(req*opts.OSLMismatchPct/100, opts.OSLMismatchMaxTokens)
		v.OSLMismatch = math.Abs(osl-req) > threshold
	}

	computeHTTP(&v, &r.Trace)
	if len(opts.SLOs) > 0 {
		v.Good = true
		for _, s := range opts.SLOs {
			v.Good = v.Good && s.Met(&v)
		}
	}
	serverTimes(r, &v)
	return v
}

// media computes the metrics of the images, audio and video a request
// sent or made: num_images, image_throughput = num_images /
// request_latency_s, image_latency = request_latency_ms / num_images;
// audio_duration (s) and rtfx = audio_duration / request_latency_s (how
// many times faster than real time); a video job's server figures.
func media(r *record.Record, v *Values, latencyNs int64) {
	latencyMs := float64(latencyNs) / nsPerMs
	if n := float64(r.InputImages); n > 0 {
		v.V[NumImages] = n
		if latencyNs > 0 {
			v.V[ImageThroughput] = n / (latencyMs / 1e3)
			v.V[ImageLatency] = latencyMs / n
		}
	}
	if d := r.InputAudioSeconds; d > 0 {
		v.V[AudioDuration] = d
		if latencyNs > 0 {
			v.V[RTFx] = d / (latencyMs / 1e3)
		}
	}
	if vid := r.Video; vid != nil {
		v.V[VideoInferenceTime] = vid.InferenceSeconds * 1e3 // NaN stays NaN
		v.V[VideoPeakMemory] = vid.PeakMemoryMB
	}
}

// noOutputTokens finishes a record of a type that makes no text: the
// metrics every type has (HTTP phases, usage prompt tokens, goodput,
// server timings) and none of the output-token ones.
func noOutputTokens(r *record.Record, v *Values, opts Options) {
	if u := r.Usage; u != nil {
		v.V[UsagePromptTokens] = float64(u.PromptTokens)
		if isl := v.V[InputSequenceLength]; isl > 0 {
			v.V[UsagePromptTokensDiffPct] = math.Abs((float64(u.PromptTokens)-isl)/isl) * 100
			v.UsageDiscrepancy = v.V[UsagePromptTokensDiffPct] > opts.UsageDiffThresholdPct
		}
	}
	computeHTTP(v, &r.Trace)
	if len(opts.SLOs) > 0 {
		v.Good = true
		for _, s := range opts.SLOs {
			v.Good = v.Good && s.Met(v)
		}
	}
	serverTimes(r, v)
}

// computeHTTP derives k6-style HTTP phases from the trace. Go's GetConn to
// GotConn spans both the pool wait and any dial, so the pool wait (blocked)
// is that span less DNS, connect and TLS.
func computeHTTP(v *Values, t *record.HTTPTrace) {
	if t.GotConn == 0 || t.WroteRequest == 0 || t.FirstByte == 0 || t.LastByte == 0 {
		return
	}
	span := func(a, b int64) int64 {
		if a == 0 || b < a {
			return 0
		}
		return b - a
	}
	dns := span(t.DNSStart, t.DNSDone)
	connecting := span(t.ConnectStart, t.ConnectDone) + span(t.TLSStart, t.TLSDone)
	blocked := max(0, span(t.GetConn, t.GotConn)-dns-connecting)
	sending := span(t.GotConn, t.WroteRequest)
	waiting := span(t.WroteRequest, t.FirstByte)
	receiving := span(t.FirstByte, t.LastByte)
	v.V[HTTPReqBlocked] = ms(blocked)
	v.V[HTTPReqDNSLookup] = ms(dns)
	v.V[HTTPReqConnecting] = ms(connecting)
	v.V[HTTPReqSending] = ms(sending)
	v.V[HTTPReqWaiting] = ms(waiting)
	v.V[HTTPReqReceiving] = ms(receiving)
	v.V[HTTPReqDuration] = ms(sending + waiting + receiving)
	v.V[HTTPReqConnectionOverhead] = ms(blocked + dns + connecting)
	v.V[HTTPReqTotal] = ms(blocked + dns + connecting + sending + waiting + receiving)
	v.V[HTTPReqConnectionReused] = 0
	if t.ConnReused {
		v.V[HTTPReqConnectionReused] = 1
	}
	if t.HaveWire {
		v.V[HTTPReqDataSent] = float64(t.BytesSent) / bytesPerKB
		v.V[HTTPReqDataReceived] = float64(t.BytesReceived) / bytesPerKB
		v.V[HTTPReqChunksSent] = float64(t.Writes)
		v.V[HTTPReqChunksReceived] = float64(t.Reads)
	}
}
