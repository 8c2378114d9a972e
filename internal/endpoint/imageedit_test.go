package endpoint

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/record"
)

// Image signatures followed by a few bytes, each a valid image's start.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9")
	webpBytes = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00;")
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestImageEditBuild(t *testing.T) {
	head := []part{text("prompt", "make it blue"), text("model", "qwen-image-edit"), text("response_format", "b64_json"), text("n", "1")}
	in := func(img MediaItem, extra ...Field) Input {
		return Input{Model: "qwen-image-edit", Prompt: "make it blue", Images: []MediaItem{img}, Extra: extra}
	}
	file := func(filename, contentType string, data []byte) part {
		return part{name: "image", filename: filename, contentType: contentType, data: data}
	}
	tests := []struct {
		name string
		in   Input
		want []part
	}{
		{"png data URI", in(MediaItem{URL: DataURI("image/png", pngBytes), Format: "png"}),
			append(head[:4:4], file("image.png", "image/png", pngBytes))},
		{"the media item's bytes win over the URI's payload", in(MediaItem{URL: "data:image/png;base64,AAAA", Data: pngBytes}),
			append(head[:4:4], file("image.png", "image/png", pngBytes))},
		{"jpeg data URI is image.jpg", in(MediaItem{URL: DataURI("image/jpeg", jpegBytes)}),
			append(head[:4:4], file("image.jpg", "image/jpeg", jpegBytes))},
		{"raw base64 jpeg, sniffed", in(MediaItem{URL: b64(jpegBytes)}),
			append(head[:4:4], file("image.jpg", "image/jpeg", jpegBytes))},
		{"raw base64 webp, sniffed", in(MediaItem{URL: b64(webpBytes)}),
			append(head[:4:4], file("image.webp", "image/webp", webpBytes))},
		{"gif with a non-image data URI type, sniffed", in(MediaItem{URL: DataURI("application/octet-stream", gifBytes)}),
			append(head[:4:4], file("image.gif", "image/gif", gifBytes))},
		{"unpadded base64", in(MediaItem{URL: "data:image/png;base64," + strings.TrimRight(b64(pngBytes), "=")}),
			append(head[:4:4], file("image.png", "image/png", pngBytes))},
		{"http image is a url field", in(MediaItem{URL: "HTTPS://example.com/cat.png"}),
			append(head[:4:4], text("url", "HTTPS://example.com/cat.png"))},
		{"extras: built names replaced in place, reserved ones ignored, others appended",
			in(MediaItem{URL: DataURI("image/png", pngBytes)},
				Field{"n", json.RawMessage("2")}, Field{"prompt", json.RawMessage(`"nope"`)}, Field{"image", json.RawMessage(`"x"`)},
				Field{"url", json.RawMessage(`"http://x"`)}, Field{"mask", json.RawMessage(`"m"`)}, Field{"size", json.RawMessage(`"1024x1024"`)},
				Field{"guidance_scale", json.RawMessage("4.5")}, Field{"obj", json.RawMessage(`{"a": [1]}`)}),
			[]part{head[0], head[1], head[2], text("n", "2"), text("size", "1024x1024"), text("guidance_scale", "4.5"),
				text("obj", `{"a": [1]}`), file("image.png", "image/png", pngBytes)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := ImageEdit.Body(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkParts(t, readParts(t, ImageEdit, body), tc.want)
		})
	}
}

func TestImageEditBuildErrors(t *testing.T) {
	png := MediaItem{URL: DataURI("image/png", pngBytes)}
	tests := []struct {
		name, want string
		in         Input
	}{
		{"no image", "no image", Input{Model: "m", Prompt: "p"}},
		{"no prompt", "no prompt", Input{Model: "m", Images: []MediaItem{png}}},
		{"boundary in the prompt", "boundary", Input{Model: "m", Prompt: "a --" + Boundary + " b", Images: []MediaItem{png}}},
		{"boundary in an extra", "boundary", Input{Model: "m", Prompt: "p", Images: []MediaItem{png},
			Extra: []Field{{"size", json.RawMessage(`"` + Boundary + `"`)}}}},
		{"boundary in the image", "boundary", Input{Model: "m", Prompt: "p", Images: []MediaItem{{Data: append(pngBytes[:8:8], Boundary...)}}}},
		{"not an image", "not a recognised image", Input{Model: "m", Prompt: "p", Images: []MediaItem{{URL: b64([]byte("hello, world"))}}}},
		{"bad base64", "base64", Input{Model: "m", Prompt: "p", Images: []MediaItem{{URL: "data:image/png;base64,!!!"}}}},
		{"data URI without a comma", "no comma", Input{Model: "m", Prompt: "p", Images: []MediaItem{{URL: "data:image/png;base64"}}}},
		{"empty image", "image", Input{Model: "m", Prompt: "p", Images: []MediaItem{{}}}},
		{"invalid extra value", "extra input", Input{Model: "m", Prompt: "p", Images: []MediaItem{png}, Extra: []Field{{"x", json.RawMessage("{")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImageEdit.Body(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "build image_edit body") {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestImageEditCaps(t *testing.T) {
	c := ImageEdit.Caps()
	if !c.TokenizesInput || c.Streams || c.ProducesTokens || !c.Multipart || c.Media != Image {
		t.Fatalf("caps %+v", c)
	}
	if ImageEdit.Path(false) != "/v1/images/edits" || c.ContentType() != "multipart/form-data; boundary="+Boundary {
		t.Fatal(ImageEdit.Path(false), c.ContentType())
	}
}

func TestImageEditRead(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Chunk
	}{
		{"openai-b64.json", Chunk{Items: 1, Usage: &record.Usage{PromptTokens: 100, CompletionTokens: 272, TotalTokens: 372}}},
		{"sglang-url.json", Chunk{Items: 1}},
	} {
		got, err := ImageEdit.ParseResponse(fixture(t, ImageEdit, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v\nwant %+v", tc.file, got, tc.want)
		}
		if msg := ImageEdit.NewDecoder().Empty(got); msg != "" {
			t.Errorf("%s: %s", tc.file, msg)
		}
	}
	got, err := ImageEdit.ParseResponse([]byte(`{"created":1,"data":[{"b64_json":null,"url":null}]}`))
	if err != nil || ImageEdit.NewDecoder().Empty(got) == "" {
		t.Fatalf("an answer without an image: %+v, %v", got, err)
	}
}
