package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	defaultEmbeddingDim = 384
	maxEmbeddingDim     = 65536
	// imageTokens is what an input image costs a pooling request (NIM's
	// image embeddings and retrieval, chat embeddings' image parts), in
	// tokens of PoolingPerToken, and an image edit in input tokens.
	imageTokens = 256
)

// embeddingsRequest is OpenAI's embeddings body, NIM's (input texts,
// images as data: URIs, or "<text> <image>" pairs) and vLLM's chat
// embeddings (a chat body answered with one embedding).
type embeddingsRequest struct {
	Model    string          `json:"model"`
	Input    json.RawMessage `json:"input"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Dimensions     int    `json:"dimensions"`
	EncodingFormat string `json:"encoding_format"`
}

// embedInput is one text to embed: its text (or its token ids, for a
// pre-tokenized input) and its count of tokens.
type embedInput struct {
	text   string
	ids    []int
	tokens int
}

// embeddings serves POST /v1/embeddings.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req embeddingsRequest
	if !c.decode(r, &req) {
		return
	}
	inputs, ok := s.embedInputs(req)
	if !ok || len(inputs) == 0 {
		writeError(w, http.StatusBadRequest, "input is required: a string, a list of strings, token ids, or a chat body's messages")
		return
	}
	dim := s.cfg.EmbeddingDim
	if dim == 0 {
		dim = defaultEmbeddingDim
	}
	if req.Dimensions != 0 {
		if req.Dimensions < 1 || req.Dimensions > maxEmbeddingDim {
			writeError(w, http.StatusBadRequest, "dimensions must be between 1 and "+strconv.Itoa(maxEmbeddingDim))
			return
		}
		dim = req.Dimensions
	}
	useBase64 := req.EncodingFormat == "base64"
	tokens := 0
	for _, in := range inputs {
		tokens += in.tokens
	}
	s.pool(c, r, tokens, func() []byte {
		b := make([]byte, 0, 64+len(inputs)*(dim*12+64))
		b = append(b, `{"object":"list","data":[`...)
		vec := make([]float32, dim)
		for i, in := range inputs {
			if i > 0 {
				b = append(b, ',')
			}
			embed(vec, in)
			b = append(b, `{"object":"embedding","index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"embedding":`...)
			b = appendVector(b, vec, useBase64)
			b = append(b, '}')
		}
		b = append(b, `],"model":`...)
		b = appendJSONValue(b, modelOr(req.Model))
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(tokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(tokens), 10)
		return append(b, "}}"...)
	})
}

// embedInputs reads the texts to embed: input as a string, a list of
// strings, a list of token ids or a list of lists of them; else the
// messages of a chat body, as one text.
func (s *Server) embedInputs(req embeddingsRequest) ([]embedInput, bool) {
	if len(req.Input) == 0 || string(req.Input) == "null" {
		if len(req.Messages) == 0 {
			return nil, false
		}
		var texts []string
		images := 0
		for _, m := range req.Messages {
			texts = append(texts, promptText(m.Content))
			images += imageParts(m.Content)
		}
		text := strings.Join(texts, "\n")
		return []embedInput{{text: text, tokens: s.poolTokens(text) + images*imageTokens}}, true
	}
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		return []embedInput{{text: one, tokens: s.poolTokens(one)}}, true
	}
	var list []json.RawMessage
	if json.Unmarshal(req.Input, &list) != nil {
		return nil, false
	}
	var ids []int
	if json.Unmarshal(req.Input, &ids) == nil {
		return []embedInput{{ids: ids, tokens: len(ids)}}, len(ids) > 0
	}
	inputs := make([]embedInput, 0, len(list))
	for _, item := range list {
		var text string
		if json.Unmarshal(item, &text) == nil {
			inputs = append(inputs, embedInput{text: text, tokens: s.poolTokens(text)})
			continue
		}
		var itemIDs []int
		if json.Unmarshal(item, &itemIDs) != nil {
			return nil, false
		}
		inputs = append(inputs, embedInput{ids: itemIDs, tokens: len(itemIDs)})
	}
	return inputs, true
}

// imageParts counts the image parts of a chat message's content.
func imageParts(raw json.RawMessage) int {
	var parts []struct {
		Type string `json:"type"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return 0
	}
	n := 0
	for _, p := range parts {
		if p.Type == "image_url" || p.Type == "input_image" || p.Type == "image" {
			n++
		}
	}
	return n
}

// poolTokens counts an input's tokens for a pooling request: its text's,
// and imageTokens for each image in it as a data: URI (NIM's inputs),
// which as text would count as however many tokens its base64 makes.
func (s *Server) poolTokens(text string) int {
	if !strings.Contains(text, "data:") {
		return s.lang.Count(text)
	}
	var rest []string
	images := 0
	for _, f := range strings.Fields(text) {
		if strings.HasPrefix(f, "data:") {
			images++
		} else {
			rest = append(rest, f)
		}
	}
	return s.lang.Count(strings.Join(rest, " ")) + images*imageTokens
}

// embed fills vec with in's embedding: unit length, and the same for the
// same text (or ids) in every run.
func embed(vec []float32, in embedInput) {
	h := fnv.New64a()
	if in.ids != nil {
		var buf [8]byte
		for _, id := range in.ids {
			binary.LittleEndian.PutUint64(buf[:], uint64(id))
			_, _ = h.Write(buf[:])
		}
	} else {
		_, _ = h.Write([]byte(in.text))
	}
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(len(vec))))
	var norm float64
	for i := range vec {
		v := rng.NormFloat64()
		vec[i] = float32(v)
		norm += v * v
	}
	if norm = math.Sqrt(norm); norm > 0 {
		for i := range vec {
			vec[i] = float32(float64(vec[i]) / norm)
		}
	}
}

// appendVector appends vec as a JSON list of floats, or as OpenAI's
// base64 form (the little-endian float32s, base64-encoded, as a string).
func appendVector(b []byte, vec []float32, useBase64 bool) []byte {
	if useBase64 {
		raw := make([]byte, 4*len(vec))
		for i, v := range vec {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"')
	}
	b = append(b, '[')
	for i, v := range vec {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
	}
	return append(b, ']')
}

// pool serves a request that generates nothing (embeddings, rankings,
// image retrieval): after the faults, it holds the engine for
// PoolingOverhead plus PoolingPerToken for each of its tokens, then
// answers body().
func (s *Server) pool(c *call, r *http.Request, tokens int, body func() []byte) {
	if c.refused(r) {
		return
	}
	defer c.reshape()()
	d := s.cfg.PoolingOverhead + time.Duration(tokens)*s.cfg.PoolingPerToken
	if !s.occupy(c, tokens, 0, d, 1, nil) {
		return
	}
	c.reply("application/json", body())
}

// unitHash is a number in [0, 1) that depends only on parts: a stable
// stand-in for a model's score.
func unitHash(parts ...string) float64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return float64(h.Sum64()>>11) / (1 << 53)
}

// modelOr is the model a request named, or DefaultModel.
func modelOr(model string) string {
	if model == "" {
		return DefaultModel
	}
	return model
}

// appendJSONValue appends s as a JSON string, quotes included.
func appendJSONValue(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONString(b, s)
	return append(b, '"')
}
