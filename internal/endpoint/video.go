package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
)

// videoGenType is OpenAI's Videos API (/v1/videos), as SGLang serves it:
// a job is submitted (multipart) and then polled at VideoStatusPath until
// it is Finished. Every answer, the submission's and each poll's, is the
// job's state, read into Chunk.Video.
type videoGenType struct{}

func (videoGenType) Path(bool) string { return "/v1/videos" }

func (videoGenType) Caps() Caps {
	return Caps{TokenizesInput: true, Multipart: true, ProducesVideo: true}
}

// VideoStatusPath is the path a video job's status is polled at.
func VideoStatusPath(id string) string { return "/v1/videos/" + url.PathEscape(id) }

// VideoContentPath is the path a finished video job's video is
// downloaded from.
func VideoContentPath(id string) string { return VideoStatusPath(id) + "/content" }

// Build makes the multipart body: prompt, model, then --extra-inputs
// (size, seconds, seed, num_inference_steps…), which may replace them, as
// in AIPerf.
func (videoGenType) Build(in Input) ([]byte, error) {
	prompt, err := firstPrompt(VideoGeneration, in)
	if err != nil {
		return nil, err
	}
	f := form{kind: VideoGeneration}
	f.field("prompt", prompt)
	f.field("model", in.Model)
	if err := f.merge(in.Extra); err != nil {
		return nil, err
	}
	return f.bytes()
}

// videoJSON is a video job: OpenAI's video object, with SGLang's
// inference_time_s and peak_memory_mb. Its error is the job's failure,
// not an error answer.
type videoJSON struct {
	errorJSON
	ID               string   `json:"id"`
	Status           string   `json:"status"`
	Progress         float64  `json:"progress"`
	URL              string   `json:"url"`
	InferenceSeconds *float64 `json:"inference_time_s"`
	PeakMemoryMB     *float64 `json:"peak_memory_mb"`
}

// Read reads a job's state: an answer with an id or a status is a job
// (Video set; a completed one is content, Items 1), one without is an
// error answer (a *ServerError) or nothing (Video nil).
func (videoGenType) Read(data []byte, _ bool, _ *State) (Chunk, error) {
	var r videoJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return Chunk{}, fmt.Errorf("parse %s response %q: %w", VideoGeneration, clip(data), err)
	}
	if r.ID == "" && r.Status == "" {
		return Chunk{}, r.err()
	}
	v := &VideoJob{ID: r.ID, Status: r.Status, Progress: r.Progress, URL: r.URL,
		InferenceSeconds: math.NaN(), PeakMemoryMB: math.NaN(), Error: jobError(r.Error)}
	if r.InferenceSeconds != nil {
		v.InferenceSeconds = *r.InferenceSeconds
	}
	if r.PeakMemoryMB != nil {
		v.PeakMemoryMB = *r.PeakMemoryMB
	}
	c := Chunk{Video: v}
	if v.Status == "completed" {
		c.Items = 1
	}
	return c, nil
}

// jobError is a failed job's message: error.message, or the error itself
// when it is a string or has no message.
func jobError(raw json.RawMessage) string {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(clip(raw))
}

// Empty is the contract the client's poller relies on. It is "" for any
// well-formed job answer that is not failed: an id and a status of queued,
// in_progress or completed, whether the video is ready or not (the poller
// asks Video.Finished when to stop, and Items is 1 only once completed).
// For a failed job it is the failure's message; otherwise it says what is
// wrong (not a job, no id, an unknown status).
func (videoGenType) Empty(c Chunk) string {
	v := c.Video
	switch {
	case v == nil:
		return "the response is not a video job (no id, no status)"
	case v.Status == "failed":
		msg := v.Error
		if msg == "" {
			msg = "no error message"
		}
		return fmt.Sprintf("video job %q failed: %s", v.ID, msg)
	case v.ID == "":
		return "the video job has no id"
	case v.Status != "queued" && v.Status != "in_progress" && v.Status != "completed":
		return fmt.Sprintf("video job %q has an unknown status %q (want queued, in_progress, completed or failed)", v.ID, v.Status)
	}
	return ""
}
