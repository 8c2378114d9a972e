package endpoint

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestVideoGenBuild(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []part
	}{
		{"prompt and model", Input{Model: "sora-2", Prompt: "a calico cat"},
			[]part{text("prompt", "a calico cat"), text("model", "sora-2")}},
		{"extras as fields; a built name replaced in place", Input{Model: "m", Texts: []string{"first", "second"}, Extra: []Field{
			{"size", json.RawMessage(`"1280x720"`)}, {"seconds", json.RawMessage("8")}, {"model", json.RawMessage(`"wan"`)},
			{"negative_prompt", json.RawMessage(`"blur, \"noise\""`)}, {"enable_teacache", json.RawMessage("true")}}},
			[]part{text("prompt", "first"), text("model", "wan"), text("size", "1280x720"), text("seconds", "8"),
				text("negative_prompt", `blur, "noise"`), text("enable_teacache", "true")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := VideoGeneration.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkParts(t, readParts(t, VideoGeneration, body), tc.want)
		})
	}
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Model: "m"}, "no prompt"},
		{Input{Model: "m", Prompt: "p" + Boundary}, "boundary"},
		{Input{Model: Boundary, Prompt: "p"}, "boundary"},
	} {
		if _, err := VideoGeneration.Body(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one saying %q", tc.in, err, tc.want)
		}
	}
}

func TestVideoGenCapsAndPaths(t *testing.T) {
	c := VideoGeneration.Caps()
	if !c.TokenizesInput || c.Streams || c.ProducesTokens || !c.Multipart || !c.ProducesVideo || c.Media != 0 {
		t.Fatalf("caps %+v", c)
	}
	for _, tc := range []struct{ got, want string }{
		{VideoGeneration.Path(false), "/v1/videos"},
		{VideoStatusPath("video_123"), "/v1/videos/video_123"},
		{VideoContentPath("video_123"), "/v1/videos/video_123/content"},
		{VideoStatusPath("a/b c?"), "/v1/videos/a%2Fb%20c%3F"},
		{VideoContentPath("../x"), "/v1/videos/..%2Fx/content"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestVideoGenRead(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		file  string
		want  VideoJob
		items int
		empty string // a substring of Empty's message; "" for none
	}{
		{"openai-create.json", VideoJob{ID: "video_123", Status: "queued", InferenceSeconds: nan, PeakMemoryMB: nan}, 0, ""},
		{"openai-in-progress.json", VideoJob{ID: "video_123", Status: "in_progress", Progress: 42, InferenceSeconds: nan, PeakMemoryMB: nan}, 0, ""},
		{"openai-completed.json", VideoJob{ID: "video_123", Status: "completed", Progress: 100, InferenceSeconds: nan, PeakMemoryMB: nan}, 1, ""},
		{"sglang-completed.json", VideoJob{ID: "7a1e0c2b", Status: "completed", Progress: 100, URL: "/v1/videos/7a1e0c2b/content",
			InferenceSeconds: 41.75, PeakMemoryMB: 24576.25}, 1, ""},
		{"openai-failed.json", VideoJob{ID: "video_456", Status: "failed", InferenceSeconds: nan, PeakMemoryMB: nan,
			Error: "The request was blocked by our moderation system."}, 0, "blocked by our moderation"},
		{"sglang-failed.json", VideoJob{ID: "9b2f", Status: "failed", InferenceSeconds: nan, PeakMemoryMB: nan,
			Error: "CUDA out of memory"}, 0, `"9b2f" failed: CUDA out of memory`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			dec := VideoGeneration.NewDecoder()
			c, err := dec.Response(fixture(t, VideoGeneration, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			checkJob(t, c.Video, tc.want)
			if c.Items != tc.items || c.HasContent() != (tc.items > 0) {
				t.Errorf("items %d, want %d", c.Items, tc.items)
			}
			msg := dec.Empty(c)
			if (msg == "") != (tc.empty == "") || !strings.Contains(msg, tc.empty) {
				t.Errorf("Empty %q, want %q", msg, tc.empty)
			}
			if c.Video.Finished() != (tc.want.Status == "completed" || tc.want.Status == "failed") {
				t.Errorf("Finished %v", c.Video.Finished())
			}
		})
	}
}

func checkJob(t *testing.T, got *VideoJob, want VideoJob) {
	t.Helper()
	if got == nil {
		t.Fatal("no video job")
	}
	if got.ID != want.ID || got.Status != want.Status || got.Progress != want.Progress || got.URL != want.URL || got.Error != want.Error ||
		!sameFloat(got.InferenceSeconds, want.InferenceSeconds) || !sameFloat(got.PeakMemoryMB, want.PeakMemoryMB) {
		t.Errorf("job\n got %+v\nwant %+v", *got, want)
	}
}

// TestVideoGenOddAnswers: what is not a usable job answer.
func TestVideoGenOddAnswers(t *testing.T) {
	typ := VideoGeneration.Type()
	for _, tc := range []struct {
		data, empty string
	}{
		{`{}`, "not a video job"},
		{`{"object":"video","progress":3}`, "not a video job"},
		{`{"status":"queued"}`, "no id"},
		{`{"id":"v","status":"cancelled"}`, `unknown status "cancelled"`},
		{`{"id":"v","status":"failed","error":"boom"}`, "failed: boom"},
		{`{"id":"v","status":"failed","error":null}`, "failed: no error message"},
		{`{"id":"v","status":"failed","error":{"code":"x"}}`, `failed: {"code":"x"}`},
		{`{"id":"v","status":"queued","inference_time_s":null,"progress":null}`, ""},
	} {
		c, err := typ.Read([]byte(tc.data), false, &State{})
		if err != nil {
			t.Errorf("%s: %v", tc.data, err)
			continue
		}
		if msg := typ.Empty(c); (msg == "") != (tc.empty == "") || !strings.Contains(msg, tc.empty) {
			t.Errorf("%s: Empty %q, want %q", tc.data, msg, tc.empty)
		}
	}
	for _, data := range []string{string(fixture(t, VideoGeneration, "error.json")), `{"object":"error","message":"no","code":404}`} {
		if _, err := typ.Read([]byte(data), false, &State{}); !IsServerError(err) {
			t.Errorf("%s: err %v, want a server error", data, err)
		}
	}
	for _, data := range []string{`{"id":"v","status":"queued","progress":"10%"}`, `{"id":1}`, `[`} {
		if _, err := typ.Read([]byte(data), false, &State{}); err == nil || IsServerError(err) ||
			!strings.Contains(err.Error(), "parse video_generation response") {
			t.Errorf("%s: err %v, want a parse error", data, err)
		}
	}
}
