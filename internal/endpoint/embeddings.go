package endpoint

import (
	"bytes"
	"fmt"
)

// embeddingsType is OpenAI's Embeddings API (/v1/embeddings), as vLLM,
// TEI and others serve it: a batch of texts in, one vector per text out.
type embeddingsType struct{}

func (embeddingsType) Path(bool) string { return "/v1/embeddings" }

func (embeddingsType) Caps() Caps { return Caps{TokenizesInput: true, Input: Texts} }

// Build makes the body in AIPerf's key order: model, input (the batch's
// texts), then --extra-inputs.
func (embeddingsType) Build(in Input) ([]byte, error) {
	o := object{kind: Embeddings}
	o.add("model", in.Model)
	o.add("input", nonEmpty(in.PromptTexts()))
	o.merge(in.Extra)
	return o.bytes()
}

func (embeddingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readEmbeddings(Embeddings, data, streaming)
}

func (embeddingsType) Empty(c Chunk) string { return embeddingsEmpty(c) }

// chatEmbeddingsType is vLLM's multimodal embeddings: a chat body
// (messages, images among them) sent to /v1/embeddings.
type chatEmbeddingsType struct{}

func (chatEmbeddingsType) Path(bool) string { return "/v1/embeddings" }

func (chatEmbeddingsType) Caps() Caps { return Caps{TokenizesInput: true, Media: Image} }

// Build makes a chat body without stream or token limit: messages,
// model, then --extra-inputs.
func (chatEmbeddingsType) Build(in Input) ([]byte, error) {
	o := object{kind: ChatEmbeddings}
	o.add("messages", chatMessages(in))
	o.add("model", in.Model)
	o.merge(in.Extra)
	return o.bytes()
}

func (chatEmbeddingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readEmbeddings(ChatEmbeddings, data, streaming)
}

func (chatEmbeddingsType) Empty(c Chunk) string { return embeddingsEmpty(c) }

// nimEmbeddingsType is NVIDIA NIM's embeddings API, OpenAI's with images:
// an input is a text, an image's URL, or a text and an image.
type nimEmbeddingsType struct{}

func (nimEmbeddingsType) Path(bool) string { return "/v1/embeddings" }

func (nimEmbeddingsType) Caps() Caps { return Caps{TokenizesInput: true, Media: Image, Input: Texts} }

// Build makes the body in AIPerf's key order: model, input, then
// --extra-inputs (input_type, which NIM's retrieval models want, comes
// only from them). The inputs are the texts, or the images' URLs, or
// "<text> <image>" pairs when a request has both, one image per text.
func (nimEmbeddingsType) Build(in Input) ([]byte, error) {
	texts := nonEmpty(in.PromptTexts())
	images := make([]string, 0, len(in.Images))
	for _, m := range in.Images {
		if m.URL != "" {
			images = append(images, m.URL)
		}
	}
	inputs := texts
	switch {
	case len(texts) > 0 && len(images) > 0:
		if len(texts) != len(images) {
			return nil, fmt.Errorf("build %s body: %d texts and %d images: a request with both pairs each text with one image (make --image-batch-size equal --prompt-batch-size)",
				NIMEmbeddings, len(texts), len(images))
		}
		inputs = make([]string, len(texts))
		for i, t := range texts {
			inputs[i] = t + " " + images[i]
		}
	case len(images) > 0:
		inputs = images
	}
	o := object{kind: NIMEmbeddings}
	o.add("model", in.Model)
	o.add("input", inputs)
	o.merge(in.Extra)
	return o.bytes()
}

func (nimEmbeddingsType) Read(data []byte, streaming bool, _ *State) (Chunk, error) {
	return readEmbeddings(NIMEmbeddings, data, streaming)
}

func (nimEmbeddingsType) Empty(c Chunk) string { return embeddingsEmpty(c) }

// embeddingsJSON is an embeddings answer. The vectors are only counted:
// decoding thousands of floats per answer would cost more than the
// request being measured.
type embeddingsJSON struct {
	errorMembers
	Data []struct {
		Object    string  `json:"object"`
		Embedding present `json:"embedding"`
	} `json:"data"`
	// Embeddings and Embedding are the other shapes chat_embeddings reads.
	Embeddings *vectors   `json:"embeddings"`
	Embedding  *vectors   `json:"embedding"`
	Usage      *usageJSON `json:"usage"`
}

// readEmbeddings reads an embeddings answer of kind k: Items is the number
// of vectors in data[] (items of object "embedding"; any other object is
// an error, as in AIPerf), or for chat_embeddings in the top-level
// embeddings or embedding member.
func readEmbeddings(k Kind, data []byte, streaming bool) (Chunk, error) {
	if streaming {
		return Chunk{}, noStream(k)
	}
	if c, ok := scanEmbeddings(data); ok {
		return c, nil
	}
	return parseEmbeddings(k, data)
}

// parseEmbeddings reads an answer with encoding/json: the reference
// scanEmbeddings must agree with, and the reader of unusual shapes (error
// objects among them).
func parseEmbeddings(k Kind, data []byte) (Chunk, error) {
	var r embeddingsJSON
	if err := unmarshalAnswer(k, data, &r); err != nil {
		return Chunk{}, err
	}
	chat := k == ChatEmbeddings
	if err := r.err(r.Data != nil || chat && (r.Embeddings != nil || r.Embedding != nil)); err != nil {
		return Chunk{}, err
	}
	c := Chunk{Usage: usageOf(r.Usage)}
	for i, d := range r.Data {
		if d.Object != "embedding" {
			if chat {
				continue
			}
			return Chunk{}, fmt.Errorf("parse %s response: data[%d] is of object %q, not an embedding", k, i, d.Object)
		}
		if d.Embedding {
			c.Items++
		}
	}
	if chat && c.Items == 0 {
		if r.Embeddings != nil && *r.Embeddings > 0 {
			c.Items = int(*r.Embeddings)
		} else if r.Embedding != nil {
			c.Items = int(*r.Embedding)
		}
	}
	return c, nil
}

// embeddingsEmpty explains an embeddings answer without vectors.
func embeddingsEmpty(c Chunk) string {
	if c.Items > 0 {
		return ""
	}
	return "the response has no embeddings"
}

// vectors counts the vectors of an embeddings or embedding member: a list
// of numbers is one, a list of lists that many, anything else none.
type vectors int

func (v *vectors) UnmarshalJSON(b []byte) error {
	*v = 0
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' {
		return nil
	}
	switch first := bytes.TrimLeft(b[1:], " \t\r\n"); {
	case len(first) == 0:
	case first[0] == '[':
		n, _ := countElements(b)
		*v = vectors(n)
	case first[0] == '-' || first[0] >= '0' && first[0] <= '9':
		*v = 1
	}
	return nil
}

// The members of an embeddings answer the fast path reads, by object.
// From "error" on, only null is read there: anything else leaves the
// answer to encoding/json.
var (
	embeddingsKeys    = []string{"data", "usage", "object", "error", "message", "code", "embeddings", "embedding"}
	embeddingItemKeys = []string{"object", "embedding"}
)

// scanEmbeddings counts the vectors of an answer of the usual shape in one
// pass, on Decoder.scan's terms: false (for encoding/json) on anything
// else, so that what it reads is what parseEmbeddings reads, for every
// embeddings type (FuzzNonTextRead). encoding/json's checking alone of a
// batch of long vectors costs several times this.
func scanEmbeddings(data []byte) (Chunk, bool) {
	s := scanner{data: data}
	var c Chunk
	ok := s.peek() == '{' && s.fields(embeddingsKeys, func(i int) bool {
		switch i {
		case 0:
			return s.array(func() bool {
				var isEmbedding, has bool
				ok := s.peek() == '{' && s.fields(embeddingItemKeys, func(j int) bool {
					if j == 0 {
						v, ok := s.plainStr()
						isEmbedding = string(v) == "embedding"
						return ok
					}
					if s.peek() == 'n' {
						return s.null()
					}
					has = true
					return s.skip()
				})
				if has {
					c.Items++
				}
				return ok && isEmbedding
			})
		case 1:
			return s.scanUsage(&c)
		case 2:
			v, ok := s.plainStr()
			return ok && string(v) != "error"
		}
		return s.null()
	})
	if !ok || !s.end() {
		return Chunk{}, false
	}
	if u := c.Usage; u != nil {
		c.Usage = usageOf(&usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens})
	}
	return c, true
}
