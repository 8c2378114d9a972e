// Package servertiming reads what an inference server says about the time it
// spent on one request — queue, prefill, decode — from a response's headers
// or its final body / SSE payload, so a request record can show whether its
// TTFT went to the server's queue, to prefill, or to the client and network.
//
// Every value is converted to milliseconds (float64). A value the server did
// not send stays NaN (durations) or -1 (token counts); a value it sent but
// that cannot be used (wrong JSON type, negative, NaN/Inf, over MaxMs) is
// dropped and counted in Timings.Rejected.
//
// Formats, their sources and mappings:
//
// vLLM ("vllm"), server flag --enable-per-request-metrics. Source:
// https://docs.vllm.ai/en/latest/features/per_request_metrics
// (docs/features/per_request_metrics.md). Top-level "metrics" object in
// non-streaming responses; when streaming it rides on the final usage chunk,
// which exists only with stream_options.include_usage=true (or the server's
// --enable-force-include-usage), hence VLLM.Ask. Fields are already in ms:
//
//	queue_time_ms          -> QueueMs   (waiting in the scheduler queue)
//	time_to_first_token_ms -> PrefillMs (scheduled -> first token, queue excluded)
//	generation_time_ms     -> DecodeMs  (first -> last token)
//	mean_itl_ms            -> MeanITLMs
//	PrefillMs+DecodeMs     -> InferenceMs (derived)
//	tokens_per_second      -> not used (a rate over scheduled -> last token)
//
// llama.cpp server ("llamacpp"). Source: tools/server/README.md, section
// "Timings and context usage" of POST /v1/chat/completions, and the /completion
// option timings_per_token. A top-level "timings" object is in every final
// response and final stream chunk without any request option
// (timings_per_token=true would add it to every chunk; not needed, not sent):
//
//	prompt_ms              -> PrefillMs (processing the prompt_n uncached tokens)
//	predicted_ms           -> DecodeMs  (generating predicted_n tokens)
//	prompt_ms+predicted_ms -> InferenceMs (derived)
//	cache_n                -> CachedPromptTokens
//	prompt_n+cache_n       -> PromptTokens (README: context = prompt_n+cache_n+predicted_n)
//	predicted_n            -> OutputTokens
//
// llama.cpp does not report time spent waiting for a free slot: QueueMs stays NaN.
//
// SGLang ("sglang"), native /generate API only: its "meta_info" object. The
// SGLang docs show no meta_info example and document none of its timing keys;
// this mapping is read from python/sglang/srt/managers/tokenizer_manager.py.
// Durations are in seconds (x1000), timestamps in Unix seconds:
//
//	e2e_latency                             -> TotalMs (tokenizer received -> finished)
//	queue_time (see below)                  -> QueueMs (wait queue -> forward entry)
//	inference_time (--enable-metrics)       -> InferenceMs (forward entry -> finished)
//	decode_finished_ts - prefill_finished_ts -> DecodeMs (--enable-metrics)
//	InferenceMs - DecodeMs                  -> PrefillMs (derived)
//	prompt_tokens, cached_tokens, completion_tokens -> token counts
//
// queue_time is not in the tokenizer_manager.py read here; a downstream
// consumer documents it as meta_info["queue_time"] = forward_entry_time -
// wait_queue_entry_time (seconds), so it is read when present. SGLang's
// OpenAI-compatible endpoints carry no meta_info.
//
// Hugging Face TGI ("tgi"), response headers of non-streaming /generate, /
// and /v1/chat/completions. TGI's docs do not list them; names and meaning
// come from router/src/server.rs. All are integer milliseconds (truncated):
//
//	x-queue-time       -> QueueMs (validation end -> batch start)
//	x-inference-time   -> InferenceMs (batch start -> last token: prefill+decode)
//	x-total-time       -> TotalMs (arrival -> response)
//	x-prompt-tokens    -> PromptTokens
//	x-generated-tokens -> OutputTokens
//
// x-validation-time is not mapped (time before the queue); x-time-per-token
// is inference time over generated tokens, prefill included, so not an ITL;
// x-compute-time changed units (ms, later seconds) across versions: not read.
// Streams carry no timing headers (they are sent before generation).
//
// NVIDIA NIM for LLMs ("nim"), env NIM_PER_REQ_METRICS_ENABLE=1, experimental.
// Source: https://docs.nvidia.com/nim/large-language-models/latest/nim-per-request-metrics.html.
// A top-level "stats" object (non-streaming and streaming; the docs do not say
// which chunk carries it when streaming):
//
//	time_in_queue_in_ms                         -> QueueMs ("vLLM only")
//	response_tokens.time_to_first_token_in_ms   -> PrefillMs ("processing start -> first token")
//	generation_time_in_ms                       -> InferenceMs ("total time for LLM processing")
//	InferenceMs - PrefillMs                     -> DecodeMs (derived)
//	llm_input_token_length                      -> PromptTokens
//	llm_output_token_length (response_token_length) -> OutputTokens
//
// The docs do not say whether "processing start" excludes the queue; since
// the queue is reported apart, it is read as excluding it. The inter-token
// field's name was cut off in the stored copy of the docs ("token_to_token_time_…"),
// so it is not read.
//
// Use Read on a non-streaming body, or on each of the last SSE data payloads
// of a stream (those with finish_reason or usage), and Merge the results.
package servertiming
