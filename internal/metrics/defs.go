// Package metrics turns raw request records into AIPerf's client-side
// metrics: per-record values (latencies, token counts, throughputs),
// aggregates across records, and metrics derived from both, with the
// formulas of the metrics reference.
package metrics

// Flag says when a metric applies and how it is shown.
type Flag uint32

// Metric flags, as in AIPerf's metrics reference.
const (
	StreamingOnly Flag = 1 << iota
	ErrorOnly
	ProducesTokensOnly
	NoConsole
	LargerIsBetter
	UsageOnly
	HTTPTraceOnly
	NoIndividualRecords
	// Internal metrics are computed but, as in AIPerf's newest exports,
	// neither shown nor exported.
	Internal
	// Goodput metrics exist only when --goodput sets SLOs.
	Goodput
	// Own metrics are llmbench's, not AIPerf's: exporters list them after
	// AIPerf's, so rows AIPerf users' scripts find by position stay put.
	Own
	// ServerTimingOnly metrics exist only when servers gave per-request
	// timings (--server-timings).
	ServerTimingOnly
	// Effective and Active are console groups: such metrics are shown in
	// their own tables ("…: Effective", "…: Active") before the default one.
	Effective
	Active
)

// Kind is when a metric is computed.
type Kind int

// Metric kinds.
const (
	Record Kind = iota
	Aggregate
	Derived
	// TimeWeighted metrics are statistics of a step function over a time
	// window (the sweep line): avg, min, max, p50…p99 and std, no count.
	TimeWeighted
)

// Def describes one metric.
type Def struct {
	Tag    string
	Header string
	// Unit is the unit the metric is exported and shown in.
	Unit  string
	Kind  Kind
	Flags Flag
}

// Has reports whether d has every flag in f.
func (d Def) Has(f Flag) bool { return d.Flags&f == f }

// ID indexes a record metric in Values.
type ID int

// Record metric IDs. Times are stored in milliseconds, the export unit.
const (
	RequestLatency ID = iota
	TimeToFirstToken
	TimeToSecondToken
	TimeToFirstOutputToken
	InterTokenLatency
	DecodeDuration
	InterChunkLatency // a list per record
	OutputTokenThroughputPerUser
	PrefillThroughputPerUser
	E2EOutputTokenThroughput
	InputSequenceLength
	OutputTokenCount
	ReasoningTokenCount
	OutputSequenceLength
	UsagePromptTokens
	UsageCompletionTokens
	UsageTotalTokens
	UsageReasoningTokens
	UsagePromptTokensDiffPct
	UsageCompletionTokensDiffPct
	UsageReasoningTokensDiffPct
	OSLMismatchDiffPct
	ErrorISL
	HTTPReqBlocked
	HTTPReqDNSLookup
	HTTPReqConnecting
	HTTPReqSending
	HTTPReqWaiting
	HTTPReqReceiving
	HTTPReqDuration
	HTTPReqConnectionOverhead
	HTTPReqTotal
	HTTPReqConnectionReused
	HTTPReqDataSent
	HTTPReqDataReceived
	HTTPReqChunksSent
	HTTPReqChunksReceived
	// Media metrics: the images and audio a request sent (AIPerf's
	// SUPPORTS_IMAGE_ONLY and SUPPORTS_AUDIO_ONLY) and a video job's
	// server figures (PRODUCES_VIDEO_ONLY).
	NumImages
	ImageThroughput
	ImageLatency
	AudioDuration
	RTFx
	VideoInferenceTime
	VideoPeakMemory
	// llmbench's own, on the client's timing (README): how late each
	// request went out, and latencies measured from when it was due.
	ScheduleLateness
	TimeToFirstTokenFromSchedule
	RequestLatencyFromSchedule
	// llmbench's own: where a request's time went by the server's own
	// account of it (--server-timings) and the client's timing
	// (servertimes.go).
	ServerQueueTime
	ServerPrefillTime
	ServerTimeToFirstToken
	ServerDecodeTime
	RequestSendTime
	TTFTDelivery
	ServerTimingConflict
	// llmbench's own: the prompt-cache counts a server reported
	// (Anthropic's cache_read_input_tokens, cache_creation_input_tokens).
	UsageCacheReadTokens
	UsageCacheCreationTokens
	numRecordMetrics
)

// RecordDefs describes the record metrics, indexed by ID.
var RecordDefs = [numRecordMetrics]Def{
	RequestLatency:               {"request_latency", "Request Latency", "ms", Record, 0},
	TimeToFirstToken:             {"time_to_first_token", "Time to First Token", "ms", Record, StreamingOnly | ProducesTokensOnly},
	TimeToSecondToken:            {"time_to_second_token", "Time to Second Token", "ms", Record, StreamingOnly | ProducesTokensOnly},
	TimeToFirstOutputToken:       {"time_to_first_output_token", "Time to First Output Token", "ms", Record, StreamingOnly | ProducesTokensOnly | NoConsole},
	InterTokenLatency:            {"inter_token_latency", "Inter Token Latency", "ms", Record, StreamingOnly | ProducesTokensOnly},
	DecodeDuration:               {"decode_duration", "Decode Duration", "ms", Record, StreamingOnly | ProducesTokensOnly},
	InterChunkLatency:            {"inter_chunk_latency", "Inter Chunk Latency", "ms", Record, StreamingOnly | ProducesTokensOnly | NoConsole},
	OutputTokenThroughputPerUser: {"output_token_throughput_per_user", "Output Token Throughput Per User", "tokens/sec/user", Record, StreamingOnly | ProducesTokensOnly | LargerIsBetter},
	PrefillThroughputPerUser:     {"prefill_throughput_per_user", "Prefill Throughput Per User", "tokens/sec/user", Record, StreamingOnly | ProducesTokensOnly | LargerIsBetter | NoConsole},
	E2EOutputTokenThroughput:     {"e2e_output_token_throughput", "E2E Output Token Throughput", "tokens/sec/user", Record, ProducesTokensOnly | LargerIsBetter | NoConsole},
	InputSequenceLength:          {"input_sequence_length", "Input Sequence Length", "tokens", Record, ProducesTokensOnly},
	OutputTokenCount:             {"output_token_count", "Output Token Count", "tokens", Record, ProducesTokensOnly | NoConsole},
	ReasoningTokenCount:          {"reasoning_token_count", "Reasoning Token Count", "tokens", Record, ProducesTokensOnly},
	OutputSequenceLength:         {"output_sequence_length", "Output Sequence Length", "tokens", Record, ProducesTokensOnly},
	UsagePromptTokens:            {"usage_prompt_tokens", "Usage Prompt Tokens", "tokens", Record, UsageOnly | NoConsole},
	UsageCompletionTokens:        {"usage_completion_tokens", "Usage Completion Tokens", "tokens", Record, UsageOnly | NoConsole},
	UsageTotalTokens:             {"usage_total_tokens", "Usage Total Tokens", "tokens", Record, UsageOnly | NoConsole},
	UsageReasoningTokens:         {"usage_reasoning_tokens", "Usage Reasoning Tokens", "tokens", Record, UsageOnly | NoConsole},
	UsagePromptTokensDiffPct:     {"usage_prompt_tokens_diff_pct", "Usage Prompt Diff %", "%", Record, UsageOnly | NoConsole},
	UsageCompletionTokensDiffPct: {"usage_completion_tokens_diff_pct", "Usage Completion Diff %", "%", Record, UsageOnly | NoConsole},
	UsageReasoningTokensDiffPct:  {"usage_reasoning_tokens_diff_pct", "Usage Reasoning Diff %", "%", Record, UsageOnly | NoConsole},
	OSLMismatchDiffPct:           {"osl_mismatch_diff_pct", "OSL Mismatch Diff %", "%", Record, ProducesTokensOnly | NoConsole},
	ErrorISL:                     {"error_isl", "Error Input Sequence Length", "tokens", Record, ErrorOnly | NoConsole},
	HTTPReqBlocked:               {"http_req_blocked", "HTTP Blocked", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqDNSLookup:             {"http_req_dns_lookup", "HTTP DNS Lookup", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqConnecting:            {"http_req_connecting", "HTTP Connecting", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqSending:               {"http_req_sending", "HTTP Sending", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqWaiting:               {"http_req_waiting", "HTTP Waiting (TTFB)", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqReceiving:             {"http_req_receiving", "HTTP Receiving", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqDuration:              {"http_req_duration", "HTTP Duration (excl. conn)", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqConnectionOverhead:    {"http_req_connection_overhead", "HTTP Connection Overhead", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqTotal:                 {"http_req_total", "HTTP Total Time", "ms", Record, HTTPTraceOnly | NoConsole},
	HTTPReqConnectionReused:      {"http_req_connection_reused", "HTTP Connection Reused", "ratio", Record, HTTPTraceOnly | NoConsole},
	// Bytes on the wire, headers included, in KB of 1024 bytes as AIPerf's;
	// chunks are the transport's reads and writes.
	HTTPReqDataSent:              {"http_req_data_sent", "HTTP Data Sent", "KB", Record, HTTPTraceOnly | NoConsole},
	HTTPReqDataReceived:          {"http_req_data_received", "HTTP Data Received", "KB", Record, HTTPTraceOnly | NoConsole},
	HTTPReqChunksSent:            {"http_req_chunks_sent", "HTTP Chunks Sent", "count", Record, HTTPTraceOnly | NoConsole},
	HTTPReqChunksReceived:        {"http_req_chunks_received", "HTTP Chunks Received", "count", Record, HTTPTraceOnly | NoConsole},
	NumImages:                    {"num_images", "Number of Images", "images", Record, NoConsole},
	ImageThroughput:              {"image_throughput", "Image Throughput", "images/sec", Record, LargerIsBetter},
	ImageLatency:                 {"image_latency", "Image Latency", "ms/image", Record, 0},
	AudioDuration:                {"audio_duration", "Audio Duration", "sec", Record, NoConsole},
	RTFx:                         {"rtfx", "RTFx", "x", Record, LargerIsBetter},
	VideoInferenceTime:           {"video_inference_time", "Video Inference Time", "ms", Record, 0},
	VideoPeakMemory:              {"video_peak_memory", "Video Peak Memory", "MB", Record, 0},
	ScheduleLateness:             {"schedule_lateness", "Schedule Lateness", "ms", Record, NoConsole | Own},
	TimeToFirstTokenFromSchedule: {"time_to_first_token_from_schedule", "Time to First Token From Schedule", "ms", Record, StreamingOnly | ProducesTokensOnly | NoConsole | Own},
	RequestLatencyFromSchedule:   {"request_latency_from_schedule", "Request Latency From Schedule", "ms", Record, NoConsole | Own},
	ServerQueueTime:              {"server_queue_time", "Server Queue Time", "ms", Record, ServerTimingOnly | NoConsole | Own},
	ServerPrefillTime:            {"server_prefill_time", "Server Prefill Time", "ms", Record, ServerTimingOnly | NoConsole | Own},
	ServerTimeToFirstToken:       {"server_time_to_first_token", "Server Time to First Token", "ms", Record, ServerTimingOnly | NoConsole | Own},
	ServerDecodeTime:             {"server_decode_time", "Server Decode Time", "ms", Record, ServerTimingOnly | NoConsole | Own},
	RequestSendTime:              {"request_send_time", "Connect and Send", "ms", Record, ServerTimingOnly | StreamingOnly | NoConsole | Own},
	TTFTDelivery:                 {"ttft_delivery_time", "First Token Delivery", "ms", Record, ServerTimingOnly | StreamingOnly | NoConsole | Own},
	// 1 on a record whose client time is shorter than the server's own
	// account of it: an impossible order (a clock or attribution error),
	// which keeps the record's server times out of every statistic.
	ServerTimingConflict:     {"server_timing_conflict", "Server Timing Conflict", "count", Record, ServerTimingOnly | NoConsole | Own},
	UsageCacheReadTokens:     {"usage_cache_read_tokens", "Usage Cache Read Tokens", "tokens", Record, UsageOnly | NoConsole | Own},
	UsageCacheCreationTokens: {"usage_cache_creation_tokens", "Usage Cache Creation Tokens", "tokens", Record, UsageOnly | NoConsole | Own},
}

// Aggregate and derived metric definitions, in the order they are exported.
var (
	DefRequestCount         = Def{"request_count", "Request Count", "requests", Aggregate, LargerIsBetter | NoIndividualRecords}
	DefErrorRequestCount    = Def{"error_request_count", "Error Request Count", "requests", Aggregate, ErrorOnly | NoIndividualRecords}
	DefMinRequestTimestamp  = Def{"min_request_timestamp", "Minimum Request Timestamp", "ns", Aggregate, Internal | NoConsole | NoIndividualRecords}
	DefMaxResponseTimestamp = Def{"max_response_timestamp", "Maximum Response Timestamp", "ns", Aggregate, Internal | NoConsole | NoIndividualRecords}
	DefGoodRequestCount     = Def{"good_request_count", "Good Request Count", "requests", Aggregate, Goodput | NoConsole | NoIndividualRecords}
	DefUsageDiscrepancy     = Def{"usage_discrepancy_count", "Usage Discrepancy Count", "requests", Aggregate, UsageOnly | NoConsole | NoIndividualRecords}
	DefOSLMismatchCount     = Def{"osl_mismatch_count", "OSL Mismatch Count", "requests", Aggregate, NoConsole | NoIndividualRecords}

	DefBenchmarkDuration     = Def{"benchmark_duration", "Benchmark Duration", "sec", Derived, NoConsole}
	DefRequestThroughput     = Def{"request_throughput", "Request Throughput", "requests/sec", Derived, LargerIsBetter}
	DefGoodput               = Def{"goodput", "Goodput", "requests/sec", Derived, Goodput | LargerIsBetter}
	DefGoodRequestFraction   = Def{"good_request_fraction", "GoodRequestFraction", "ratio", Derived, Goodput | LargerIsBetter | NoConsole}
	DefOutputTokenThroughput = Def{"output_token_throughput", "Output Token Throughput", "tokens/sec", Derived, ProducesTokensOnly | LargerIsBetter}
	DefTotalTokenThroughput  = Def{"total_token_throughput", "Total Token Throughput", "tokens/sec", Derived, ProducesTokensOnly | LargerIsBetter | NoConsole}
	DefTotalOutputTokens     = Def{"total_output_tokens", "Total Output Tokens", "tokens", Derived, ProducesTokensOnly | NoConsole}
	DefTotalReasoningTokens  = Def{"total_reasoning_tokens", "Total Reasoning Tokens", "tokens", Derived, ProducesTokensOnly | NoConsole}
	DefTotalOSL              = Def{"total_osl", "Total Output Sequence Length", "tokens", Derived, ProducesTokensOnly | NoConsole}
	DefTotalISL              = Def{"total_isl", "Total Input Sequence Length", "tokens", Derived, ProducesTokensOnly | NoConsole}
	DefTotalUsagePrompt      = Def{"total_usage_prompt_tokens", "Total Usage Prompt Tokens", "tokens", Derived, UsageOnly | NoConsole}
	DefTotalUsageCompletion  = Def{"total_usage_completion_tokens", "Total Usage Completion Tokens", "tokens", Derived, UsageOnly | NoConsole}
	DefTotalUsageTotal       = Def{"total_usage_total_tokens", "Total Usage Total Tokens", "tokens", Derived, UsageOnly | NoConsole}
	DefTotalErrorISL         = Def{"total_error_isl", "Total Error Input Sequence Length", "tokens", Derived, ErrorOnly | NoConsole}
)
