package endpoint

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// imageEditType is OpenAI's Images API, edits (/v1/images/edits), as
// SGLang serves it too: a multipart upload of the turn's first image and
// the prompt. Its answers are read as image_generation's.
type imageEditType struct{}

func (imageEditType) Path(bool) string { return "/v1/images/edits" }

func (imageEditType) Caps() Caps { return Caps{TokenizesInput: true, Media: Image, Multipart: true} }

// Build makes the multipart body: prompt, model, response_format
// b64_json, n 1, --extra-inputs (but prompt, image, url and mask, which
// are the endpoint's, as AIPerf ignores them), then the image: a file part
// "image" for a data: URI or raw base64, or the field "url" for an
// http(s) image (SGLang's extension).
func (imageEditType) Build(in Input) ([]byte, error) {
	prompt, err := firstPrompt(ImageEdit, in)
	if err != nil {
		return nil, err
	}
	if len(in.Images) == 0 {
		return nil, errors.New("build image_edit body: no image: image_edit needs a reference image in every turn (a dataset with images, or --image-width-mean and --image-height-mean)")
	}
	f := form{kind: ImageEdit}
	f.field("prompt", prompt)
	f.field("model", in.Model)
	f.field("response_format", "b64_json")
	f.field("n", "1")
	if err := f.merge(in.Extra, "prompt", "image", "url", "mask"); err != nil {
		return nil, err
	}
	img := in.Images[0]
	if isHTTP(img.URL) && img.Data == nil {
		f.field("url", img.URL)
		return f.bytes()
	}
	data, contentType, ext, err := imageFile(img)
	if err != nil {
		return nil, fmt.Errorf("build image_edit body: %w", err)
	}
	f.file("image", "image."+ext, contentType, data)
	return f.bytes()
}

func (imageEditType) Read(data []byte, _ bool, _ *State) (Chunk, error) {
	return readImages(ImageEdit, data, false)
}

func (imageEditType) Empty(c Chunk) string { return imagesEmpty(c) }

// isHTTP reports whether u is an http(s) URL.
func isHTTP(u string) bool {
	return len(u) >= 8 && (strings.EqualFold(u[:7], "http://") || strings.EqualFold(u[:8], "https://"))
}

// imageFile is an image's bytes, MIME type and file extension. The bytes
// are m.Data, or the data: URI's (or raw base64 URL's) payload decoded.
// The type is the data: URI's when it names an image/* type, else the one
// the bytes' signature shows, else m.Format's.
func imageFile(m MediaItem) (data []byte, contentType, ext string, err error) {
	payload, claimed := m.URL, ""
	if rest, ok := strings.CutPrefix(m.URL, "data:"); ok {
		header, p, ok := strings.Cut(rest, ",")
		if !ok {
			return nil, "", "", errors.New("image: malformed data URI (no comma)")
		}
		payload = p
		if mt, _, _ := strings.Cut(header, ";"); strings.HasPrefix(strings.ToLower(mt), "image/") {
			claimed = strings.ToLower(mt)
		}
	}
	data = m.Data
	if data == nil {
		if data, err = decodeBase64(payload); err != nil {
			return nil, "", "", fmt.Errorf("image: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, "", "", errors.New("image: no data")
	}
	contentType = claimed
	if !mimeToken(contentType) {
		contentType = sniffImage(data)
	}
	if contentType == "" && mimeToken("image/"+strings.ToLower(m.Format)) {
		contentType = "image/" + strings.ToLower(m.Format)
	}
	if contentType == "" {
		return nil, "", "", errors.New("image: not a recognised image format: want a data: URI or base64 PNG, JPEG, WebP, GIF or BMP")
	}
	sub, _, _ := strings.Cut(strings.TrimPrefix(contentType, "image/"), "+")
	switch sub {
	case "jpeg", "jpg", "pjpeg":
		return data, "image/jpeg", "jpg", nil
	}
	return data, contentType, sub, nil
}

// decodeBase64 decodes standard base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("no base64 data")
	}
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode base64: %w", err)
	}
	return b, nil
}

// mimeToken reports whether t is a plain type/subtype of lower-case
// letters, digits and .+- (safe in a part header and a file name).
func mimeToken(t string) bool {
	typ, sub, ok := strings.Cut(t, "/")
	if !ok || typ == "" || sub == "" {
		return false
	}
	for _, c := range []byte(sub) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// sniffImage is the image type data's signature shows, "" for none.
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case len(data) >= 12 && bytes.HasPrefix(data, []byte("RIFF")) && string(data[8:12]) == "WEBP":
		return "image/webp"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case bytes.HasPrefix(data, []byte("BM")):
		return "image/bmp"
	}
	return ""
}
