package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/browsertest"
)

// TestEndpointCombinationsRefused: a combination of an endpoint type and
// flags that cannot work is one line and exit 2, before anything is sent.
func TestEndpointCombinationsRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint-type", "embeddings", "--streaming"}, "the embeddings endpoint type does not stream"},
		{[]string{"--endpoint-type", "completions", "--image-width-mean", "64", "--image-height-mean", "64"}, "the completions endpoint type takes no images"},
		{[]string{"--endpoint-type", "embeddings", "--audio-length-mean", "1"}, "the embeddings endpoint type takes no audio"},
		{[]string{"--endpoint-type", "cohere_rankings", "--rankings-passages-mean", "0"}, "needs a query and passages"},
		{[]string{"--endpoint-type", "chat", "--rankings-passages-mean", "3"}, "is not a rankings type"},
		{[]string{"--endpoint-type", "audio_transcription"}, "set --audio-length-mean"},
		{[]string{"--endpoint-type", "image_edit"}, "set --image-width-mean and --image-height-mean"},
		{[]string{"--endpoint-type", "chat", "--prompt-batch-size", "4"}, "batches are for embeddings and nim_embeddings"},
		{[]string{"--endpoint-type", "chat", "--video-width", "64", "--video-height", "64"}, "synthetic video needs a webm or mp4 encoder"},
		{[]string{"--endpoint-type", "chat", "--audio-length-mean", "1", "--audio-format", "mp3"}, "only wav is made"},
		{[]string{"--endpoint-type", "chat", "--image-width-mean", "8", "--image-height-mean", "8", "--image-source", "assets"}, "bundles no photos"},
		{[]string{"--endpoint-type", "embeddings", "--conversation-turn-mean", "3"}, "has no conversations"},
		{[]string{"--endpoint-type", "chat", "--download-video-content"}, "is for the video_generation endpoint type"},
		{[]string{"--endpoint-type", "chat", "--request-content-type", "multipart/form-data"}, "the chat endpoint type sends application/json"},
		{[]string{"--endpoint-type", "rankings"}, `unknown endpoint type "rankings"`},
		{[]string{"--endpoint-type", "raw"}, "use --custom-dataset-type raw_payload or inputs_json"},
		{[]string{"--endpoint-type", "template"}, "needs --extra-inputs payload_template"},
		{[]string{"--endpoint-type", "raw", "--extra-inputs", "response_field:[[["}, "response_field"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"llmbench", "profile", "-m", "m", "--mock", "--request-count", "1", "--ui-type", "none", "--artifact-dir", t.TempDir()}, tc.args...)
			code := run(args, &stdout, &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code != exitUsage || !strings.Contains(msg, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, msg, exitUsage, tc.want)
			}
			if strings.Count(msg, "\n") > 0 {
				t.Fatalf("want one line, got %q", msg)
			}
		})
	}
}

// TestEveryEndpointType runs each endpoint type against the built-in
// server and reads its exports: every request succeeds, the type's own
// metrics are there with the values its inputs fix (ISL of a batch or a
// ranking request, images and audio sent, the video job's figures), and a
// metric the type cannot have is absent, not zero.
func TestEveryEndpointType(t *testing.T) {
	tokenMetrics := []string{"output_sequence_length", "output_token_throughput", "total_osl", "inter_token_latency", "time_to_first_token"}
	streamMetrics := []string{"time_to_first_token", "inter_token_latency"}
	tests := []struct {
		name   string
		args   []string
		exact  map[string]float64 // metric tag → its avg
		has    []string
		absent []string
	}{
		{"chat streaming", []string{"--endpoint-type", "chat", "--streaming", "--osl", "16"},
			map[string]float64{"output_sequence_length": 16, "input_sequence_length": 100}, streamMetrics, []string{"num_images", "audio_duration"}},
		{"completions", []string{"--endpoint-type", "completions", "--osl", "16"},
			map[string]float64{"output_sequence_length": 16}, nil, streamMetrics},
		{"responses", []string{"--endpoint-type", "responses", "--osl", "16"}, map[string]float64{"output_sequence_length": 16}, nil, streamMetrics},
		{"responses streaming", []string{"--endpoint-type", "responses", "--streaming", "--osl", "16"},
			map[string]float64{"output_sequence_length": 16}, streamMetrics, nil},
		{"messages", []string{"--endpoint-type", "messages", "--osl", "16"}, map[string]float64{"output_sequence_length": 16}, nil, streamMetrics},
		{"messages streaming", []string{"--endpoint-type", "messages", "--streaming", "--osl", "16", "--use-server-token-count"},
			map[string]float64{"output_sequence_length": 16, "usage_completion_tokens": 16}, streamMetrics, nil},
		{"huggingface_generate", []string{"--endpoint-type", "huggingface_generate", "--osl", "16"}, map[string]float64{"output_sequence_length": 16}, nil, streamMetrics},
		{"huggingface_generate streaming", []string{"--endpoint-type", "huggingface_generate", "--streaming", "--osl", "16"},
			map[string]float64{"output_sequence_length": 16}, streamMetrics, nil},
		{"solido_rag streaming", []string{"--endpoint-type", "solido_rag", "--streaming"}, nil, append(streamMetrics, "output_sequence_length"), nil},
		{"embeddings", []string{"--endpoint-type", "embeddings", "--prompt-batch-size", "4", "--isl", "32"},
			map[string]float64{"input_sequence_length": 128}, []string{"request_latency", "request_throughput"}, tokenMetrics},
		{"chat_embeddings", []string{"--endpoint-type", "chat_embeddings", "--isl", "32"}, map[string]float64{"input_sequence_length": 32}, nil, tokenMetrics},
		{"nim_embeddings", []string{"--endpoint-type", "nim_embeddings", "--prompt-batch-size", "2", "--isl", "32"},
			map[string]float64{"input_sequence_length": 64}, nil, tokenMetrics},
		{"cohere_rankings", []string{"--endpoint-type", "cohere_rankings", "--rankings-passages-mean", "3", "--rankings-query-prompt-token-mean", "10", "--rankings-passages-prompt-token-mean", "20"},
			map[string]float64{"input_sequence_length": 70}, nil, tokenMetrics},
		{"hf_tei_rankings", []string{"--endpoint-type", "hf_tei_rankings", "--rankings-passages-mean", "2", "--rankings-query-prompt-token-mean", "5", "--rankings-passages-prompt-token-mean", "7"},
			map[string]float64{"input_sequence_length": 19}, nil, tokenMetrics},
		{"nim_rankings", []string{"--endpoint-type", "nim_rankings", "--rankings-passages-mean", "4", "--rankings-query-prompt-token-mean", "8", "--rankings-passages-prompt-token-mean", "8"},
			map[string]float64{"input_sequence_length": 40}, nil, tokenMetrics},
		{"image_generation", []string{"--endpoint-type", "image_generation", "--isl", "20"}, map[string]float64{"input_sequence_length": 20}, nil, append(tokenMetrics, "num_images")},
		{"image_generation streaming", []string{"--endpoint-type", "image_generation", "--streaming", "--isl", "20"}, nil, nil, tokenMetrics},
		{"image_edit", []string{"--endpoint-type", "image_edit", "--image-width-mean", "32", "--image-height-mean", "24", "--isl", "20"},
			map[string]float64{"num_images": 1, "input_sequence_length": 20}, []string{"image_throughput", "image_latency"}, tokenMetrics},
		{"image_retrieval", []string{"--endpoint-type", "image_retrieval", "--image-width-mean", "16", "--image-height-mean", "16", "--image-batch-size", "2"},
			map[string]float64{"num_images": 2}, []string{"image_throughput"}, append(tokenMetrics, "input_sequence_length")},
		{"chat with images and audio", []string{"--endpoint-type", "chat", "--image-width-mean", "16", "--image-height-mean", "16", "--image-batch-size", "3", "--audio-length-mean", "0.5", "--osl", "4"},
			map[string]float64{"num_images": 3, "audio_duration": 0.5}, []string{"image_latency", "rtfx"}, nil},
		{"audio_transcription", []string{"--endpoint-type", "audio_transcription", "--audio-length-mean", "2"},
			map[string]float64{"audio_duration": 2}, []string{"rtfx", "output_sequence_length"}, []string{"input_sequence_length"}},
		{"video_generation", []string{"--endpoint-type", "video_generation", "--download-video-content", "--isl", "12"},
			map[string]float64{"input_sequence_length": 12}, []string{"video_inference_time", "video_peak_memory"}, tokenMetrics},
		{"raw", []string{"--endpoint-type", "raw", "--endpoint", "/v1/chat/completions", "--input-file", "../../examples/raw_payload.jsonl", "--custom-dataset-type", "raw_payload", "--streaming"},
			nil, append(streamMetrics, "output_sequence_length", "input_sequence_length"), nil},
		{"raw with response_field", []string{"--endpoint-type", "raw", "--endpoint", "/v1/completions", "--input-file", rawCompletions(t), "--custom-dataset-type", "raw_payload",
			"--extra-inputs", "response_field:choices[0].text"}, map[string]float64{"output_sequence_length": 5}, nil, streamMetrics},
		{"template", []string{"--endpoint-type", "template", "--endpoint", "/v1/embeddings", "--extra-inputs", `payload_template:{"input": {{ texts|tojson }}, "model": {{ model|tojson }}}`, "--isl", "16"},
			map[string]float64{"input_sequence_length": 16}, nil, nil},
	}
	quickRuns(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // counts, not timings, are asserted
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			args := append([]string{"llmbench", "profile", "-m", "m", "--mock", "--request-count", "6", "--concurrency", "2", "--random-seed", "1", "--isl", "100",
				"--ui-type", "none", "--artifact-dir", dir, "--mock-media-time-scale", "0.01", "--mock-ttft-ms", "5", "--mock-itl-ms", "1"}, tc.args...)
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			agg, lines := readArtifacts(t, dir)
			if len(lines) != 6 {
				t.Fatalf("%d records, want 6", len(lines))
			}
			for _, l := range lines {
				if l.Error != nil {
					t.Fatalf("request %d failed: %s: %s", l.Metadata.SessionNum, l.Error.Type, l.Error.Message)
				}
			}
			if m := metric(t, agg, "request_count"); m.Avg != 6 {
				t.Fatalf("request_count %v", m.Avg)
			}
			for tag, want := range tc.exact {
				if m := metric(t, agg, tag); m.Avg != want || m.Min != want || m.Max != want {
					t.Errorf("%s avg %v (min %v, max %v), want %v", tag, m.Avg, m.Min, m.Max, want)
				}
			}
			for _, tag := range tc.has {
				if m := metric(t, agg, tag); !(m.Avg > 0) {
					t.Errorf("%s = %v, want a positive value", tag, m.Avg)
				}
			}
			for _, tag := range tc.absent {
				if _, ok := agg[tag]; ok {
					t.Errorf("%s exported for %s, which cannot have it", tag, tc.name)
				}
				for _, l := range lines {
					if _, ok := l.Metrics[tag]; ok {
						t.Fatalf("record %d has %s", l.Metadata.SessionNum, tag)
					}
				}
			}
		})
	}
}

// rawCompletions writes a raw_payload file of completions bodies that ask
// for 5 tokens each.
func rawCompletions(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "raw.jsonl")
	body := `{"model":"m","prompt":"Once upon a time","max_tokens":5,"stream":false}` + "\n"
	if err := os.WriteFile(path, []byte(strings.Repeat(body, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNonTextReportInBrowser: the report of a type without output tokens
// (embeddings) draws what the run has and no empty chart: no TTFT or
// token-rate chart where no request could have one.
func TestNonTextReportInBrowser(t *testing.T) {
	if browsertest.Chromium() == "" && os.Getenv("CI") == "" {
		t.Skip("no Chromium: install Debian's chromium (.ci/run does)")
	}
	quickRuns(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--mock", "--model", "m", "--endpoint-type", "cohere_rankings", "--rankings-passages-mean", "3",
		"--concurrency", "2", "--request-count", "30", "--random-seed", "1", "--slice-duration", "0.05", "--ui-type", "none",
		"--output-artifact-dir", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	shown := openReport(t, filepath.Join(dir, "report.html"))
	if !shown.has("latency_over_time") {
		t.Error("no request latency chart")
	}
	for _, id := range []string{"ttft_over_time", "itl_over_time", "ttft_cdf", "timeslices_ttft"} {
		if shown.has(id) {
			t.Errorf("chart %s drawn for a type without tokens", id)
		}
	}
}
