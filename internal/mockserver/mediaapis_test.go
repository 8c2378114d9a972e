package mockserver

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// multipartBody builds a multipart/form-data body of fields and files
// (name → content).
func multipartBody(t *testing.T, fields map[string]string, files map[string][]byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range files {
		fw, err := mw.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(v)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// isPNG reports whether s is a base64 PNG.
func isPNG(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	_, err = png.DecodeConfig(bytes.NewReader(b))
	return err == nil
}

func TestImages(t *testing.T) {
	cfg := typesConfig()
	cfg.ImageTime, cfg.MediaTimeScale = 2*time.Second, 0.02 // 40 ms a 1024x1024 image
	_, url := start(t, cfg)
	var whole struct {
		Created int64 `json:"created"`
		Data    []struct {
			B64 string `json:"b64_json"`
		} `json:"data"`
		Size  string `json:"size"`
		Usage struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	t0 := time.Now()
	decode(t, postOK(t, url+"/v1/images/generations", "application/json", []byte(`{"model":"img","prompt":"a red fox","n":2,"size":"1024x1024","response_format":"b64_json"}`)), &whole)
	if took := time.Since(t0); took < 80*time.Millisecond {
		t.Errorf("two 1024x1024 images took %v, want at least 80 ms", took)
	}
	if whole.Created == 0 || len(whole.Data) != 2 || !isPNG(whole.Data[0].B64) || !isPNG(whole.Data[1].B64) || whole.Size != "1024x1024" || whole.Usage.In != 3 || whole.Usage.Out == 0 {
		t.Fatalf("images: %+v", whole)
	}

	evs := events(t, postOK(t, url+"/v1/images/generations", "text/event-stream", []byte(`{"prompt":"a red fox","size":"256x256","stream":true}`)))
	var types []string
	for _, ev := range evs {
		var e struct {
			Type    string          `json:"type"`
			B64     string          `json:"b64_json"`
			Index   *int            `json:"partial_image_index"`
			Usage   json.RawMessage `json:"usage"`
			Created int64           `json:"created_at"`
		}
		decode(t, ev.data, &e)
		types = append(types, e.Type)
		if e.Type != ev.name || !isPNG(e.B64) || e.Created == 0 {
			t.Fatalf("event %s: %s", ev.name, ev.data)
		}
		if e.Type == "image_generation.partial_image" && (e.Index == nil || *e.Index != len(types)-1) {
			t.Fatalf("partial image %d: %s", len(types)-1, ev.data)
		}
		if e.Type == "image_generation.completed" && len(e.Usage) == 0 {
			t.Fatalf("completed without usage: %s", ev.data)
		}
	}
	want := []string{"image_generation.partial_image", "image_generation.partial_image", "image_generation.completed"}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}

	pngBytes, _ := base64.StdEncoding.DecodeString(whole.Data[0].B64)
	body, ct := multipartBody(t, map[string]string{"prompt": "make it blue", "model": "img", "response_format": "b64_json", "n": "1"}, map[string][]byte{"image": pngBytes})
	code, _, b := post(t, url+"/v1/images/edits", ct, body)
	var edit struct {
		Data []struct {
			B64 string `json:"b64_json"`
		} `json:"data"`
		Usage struct {
			In int `json:"input_tokens"`
		} `json:"usage"`
	}
	decode(t, b, &edit)
	if code != 200 || len(edit.Data) != 1 || !isPNG(edit.Data[0].B64) || edit.Usage.In != 3+imageTokens {
		t.Fatalf("edit: status %d, %.300s", code, b)
	}
	body, ct = multipartBody(t, map[string]string{"prompt": "make it blue", "stream": "true", "partial_images": "1"}, map[string][]byte{"image": pngBytes})
	code, _, b = post(t, url+"/v1/images/edits", ct, body)
	if evs := events(t, b); code != 200 || len(evs) != 2 || evs[0].name != "image_edit.partial_image" || evs[1].name != "image_edit.completed" {
		t.Fatalf("edit stream: status %d, %.300s", code, b)
	}

	for _, tc := range []struct {
		name   string
		fields map[string]string
		files  map[string][]byte
	}{
		{"no image", map[string]string{"prompt": "p"}, nil},
		{"no prompt", nil, map[string][]byte{"image": pngBytes}},
	} {
		body, ct := multipartBody(t, tc.fields, tc.files)
		code, _, b := post(t, url+"/v1/images/edits", ct, body)
		wantError(t, "edit with "+tc.name, code, b, http.StatusBadRequest)
	}
	code, _, b = post(t, url+"/v1/images/edits", "", []byte(`{"prompt":"p"}`))
	wantError(t, "edit not multipart", code, b, http.StatusBadRequest)
	code, _, b = post(t, url+"/v1/images/generations", "", []byte(`{"prompt":"p","size":"huge"}`))
	wantError(t, "generation of a bad size", code, b, http.StatusBadRequest)
}

// wav is a 16 kHz mono 16-bit PCM WAV of the given duration.
func wav(seconds float64) []byte {
	const rate, channels, bits = 16000, 1, 16
	data := int(seconds*rate) * channels * bits / 8
	b := make([]byte, 0, 44+data)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(36+data))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1) // PCM
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(data))
	return append(b, make([]byte, data)...)
}

func TestAudioDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		clip []byte
		want time.Duration
	}{
		{"wav 1.5 s", wav(1.5), 1500 * time.Millisecond},
		// 128 kbit/s MPEG-1 layer III: 16000 bytes a second.
		{"mp3 2 s", append([]byte{0xFF, 0xFB, 0x90, 0x00}, make([]byte, 32000-4)...), 2 * time.Second},
	} {
		got, err := audioDuration(tc.clip)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range [][]byte{nil, []byte("hello"), []byte("RIFF\x00\x00\x00\x00WAVEdata\x04\x00\x00\x00abcd")} {
		if _, err := audioDuration(bad); err == nil {
			t.Errorf("audioDuration(%q) accepted", bad)
		}
	}
}

func TestTranscription(t *testing.T) {
	cfg := typesConfig()
	cfg.TranscriptionRTF = 0.1 // 1 s of audio takes 100 ms
	_, url := start(t, cfg)
	transcribe := func(seconds float64, stream bool) ([]byte, time.Duration) {
		fields := map[string]string{"model": "whisper", "response_format": "json"}
		if stream {
			fields["stream"] = "true"
		}
		body, ct := multipartBody(t, fields, map[string][]byte{"file": wav(seconds)})
		t0 := time.Now()
		code, h, b := post(t, url+"/v1/audio/transcriptions", ct, body)
		took := time.Since(t0)
		want := "application/json"
		if stream {
			want = "text/event-stream"
		}
		if code != 200 || h.Get("Content-Type") != want {
			t.Fatalf("transcription: status %d, type %q, %.300s", code, h.Get("Content-Type"), b)
		}
		return b, took
	}
	var whole struct {
		Text  string `json:"text"`
		Usage struct {
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	b, _ := transcribe(4, false)
	decode(t, b, &whole)
	if wordCount(whole.Text) != 10 || whole.Usage.Out != 10 {
		t.Fatalf("4 s transcribed as %+v, want 10 words", whole)
	}

	// The time grows with the audio: 100 ms against 400 ms, each at its
	// quickest of three.
	short := quickest(3, func() time.Duration { _, d := transcribe(1, false); return d })
	long := quickest(3, func() time.Duration { _, d := transcribe(4, false); return d })
	if ratio := float64(long) / float64(short); long < 400*time.Millisecond || ratio < 2.5 || ratio > 6 {
		t.Errorf("1 s took %v, 4 s %v: ratio %.2f, want about 4", short, long, ratio)
	}

	b, _ = transcribe(2, true)
	evs := events(t, b)
	var text strings.Builder
	for i, ev := range evs {
		var e struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
			Text  string `json:"text"`
		}
		decode(t, ev.data, &e)
		if last := i == len(evs)-1; last {
			if e.Type != "transcript.text.done" || e.Text != text.String() {
				t.Fatalf("last event %s, want transcript.text.done with the text %q", ev.data, text.String())
			}
		} else if e.Type != "transcript.text.delta" {
			t.Fatalf("event %d: %s", i, ev.data)
		}
		text.WriteString(e.Delta)
	}
	if len(evs) != 5+1 {
		t.Fatalf("%d events for 2 s, want 5 deltas and done", len(evs))
	}

	body, ct := multipartBody(t, map[string]string{"model": "whisper"}, map[string][]byte{"file": []byte("not audio")})
	code, _, b := post(t, url+"/v1/audio/transcriptions", ct, body)
	wantError(t, "transcription of no audio", code, b, http.StatusBadRequest)
	body, ct = multipartBody(t, map[string]string{"model": "whisper"}, nil)
	code, _, b = post(t, url+"/v1/audio/transcriptions", ct, body)
	wantError(t, "transcription without a file", code, b, http.StatusBadRequest)
}

// videoObject is a video job as the Videos API answers it.
type videoObject struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	Status        string   `json:"status"`
	Progress      int      `json:"progress"`
	Size          string   `json:"size"`
	Seconds       string   `json:"seconds"`
	InferenceTime *float64 `json:"inference_time_s"`
	PeakMemory    *float64 `json:"peak_memory_mb"`
}

func getVideo(t *testing.T, url string) (int, videoObject, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v videoObject
	if resp.StatusCode == 200 && resp.Header.Get("Content-Type") == "application/json" {
		decode(t, b, &v)
	}
	return resp.StatusCode, v, b
}

func TestVideos(t *testing.T) {
	cfg := typesConfig()
	cfg.VideoTime, cfg.MediaTimeScale = 10*time.Second, 0.03 // 300 ms a job
	_, url := start(t, cfg)
	submit := func() videoObject {
		body, ct := multipartBody(t, map[string]string{"prompt": "a cat surfing", "model": "wan", "size": "1280x720", "seconds": "4"}, nil)
		code, _, b := post(t, url+"/v1/videos", ct, body)
		var v videoObject
		decode(t, b, &v)
		if code != 200 || !strings.HasPrefix(v.ID, "video_") || v.Object != "video" || v.Status != "queued" || v.Progress != 0 {
			t.Fatalf("submit: status %d, %s", code, b)
		}
		return v
	}
	first, second := submit(), submit()
	// Jobs run one at a time: the second waits for the first, then runs.
	jobs := []videoObject{first, second}
	seen := [][]string{{"queued"}, {"queued"}}
	deadline := time.Now().Add(5 * time.Second)
	for seen[1][len(seen[1])-1] != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("statuses %v after 5 s", seen)
		}
		for i, j := range jobs {
			code, v, b := getVideo(t, url+"/v1/videos/"+j.ID)
			if code != 200 {
				t.Fatalf("poll: status %d, %s", code, b)
			}
			if v.Status != seen[i][len(seen[i])-1] {
				seen[i] = append(seen[i], v.Status)
			}
			jobs[i] = v
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := []string{"queued", "in_progress", "completed"}; !slices.Equal(seen[1], want) || !slices.Equal(seen[0][1:], want[1:]) {
		t.Fatalf("statuses %v, want %v for each", seen, want)
	}
	done := jobs[0]
	if done.Progress != 100 || done.InferenceTime == nil || math.Abs(*done.InferenceTime-0.3) > 0.001 || done.PeakMemory == nil || *done.PeakMemory <= 0 ||
		done.Size != "1280x720" || done.Seconds != "4" {
		t.Fatalf("completed job %+v", done)
	}

	resp, err := http.Get(url + "/v1/videos/" + first.ID + "/content")
	if err != nil {
		t.Fatal(err)
	}
	mp4, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "video/mp4" || len(mp4) < 12 || string(mp4[4:8]) != "ftyp" {
		t.Fatalf("content: status %d, type %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(mp4))
	}
	for _, path := range []string{"/v1/videos/video_nope", "/v1/videos/video_nope/content"} {
		code, _, b := getVideo(t, url+path)
		wantError(t, path, code, b, http.StatusNotFound)
	}
	code, _, b := post(t, url+"/v1/videos", "", []byte(`{"model":"wan"}`))
	wantError(t, "video without a prompt", code, b, http.StatusBadRequest)
}
