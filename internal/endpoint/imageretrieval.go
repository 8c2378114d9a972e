package endpoint

import (
	"bytes"
	"fmt"
)

// imageRetrievalType is NVIDIA NIM's image inference API (/v1/infer), as
// its page-, table- and graphic-element detectors serve it: images in,
// one result per image out.
type imageRetrievalType struct{}

func (imageRetrievalType) Path(bool) string { return "/v1/infer" }

// Caps: its requests carry no text to count and its answers no tokens.
func (imageRetrievalType) Caps() Caps { return Caps{Media: Image} }

type imageInput struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Build makes the body: input [{type: image_url, url}], one per image,
// then --extra-inputs.
func (imageRetrievalType) Build(in Input) ([]byte, error) {
	inputs := make([]imageInput, 0, len(in.Images))
	for _, m := range in.Images {
		if m.URL != "" {
			inputs = append(inputs, imageInput{Type: "image_url", URL: m.URL})
		}
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("build %s body: a request needs at least one image (set --image-width-mean and --image-height-mean, or use a dataset with images)", ImageRetrieval)
	}
	o := object{kind: ImageRetrieval}
	o.add("input", inputs)
	o.merge(in.Extra)
	return o.bytes()
}

// retrievalJSON is an answer: its data are only counted.
type retrievalJSON struct {
	errorMembers
	Data *retrievalData `json:"data"`
}

// retrievalData counts an answer's results: a list's elements, or one
// for a non-empty object.
type retrievalData int

func (n *retrievalData) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*n = 0
	case b[0] == '{':
		*n = 0
		if rest := bytes.TrimLeft(b[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
			*n = 1
		}
	default:
		c, ok := countElements(b)
		if !ok {
			return fmt.Errorf("want a list or an object, got %s", jsonKind(b))
		}
		*n = retrievalData(c)
	}
	return nil
}

// Read counts data: Items is its length, or 1 for an object.
func (imageRetrievalType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	if streaming {
		return Chunk{}, noStream(ImageRetrieval)
	}
	var r retrievalJSON
	if err := unmarshalAnswer(ImageRetrieval, data, &r); err != nil {
		return Chunk{}, err
	}
	if err := r.err(r.Data != nil); err != nil {
		return Chunk{}, err
	}
	var c Chunk
	if r.Data != nil {
		c.Items = int(*r.Data)
	}
	return c, nil
}

func (imageRetrievalType) Empty(c Chunk) string {
	if c.Items > 0 {
		return ""
	}
	return "the response has no data"
}
