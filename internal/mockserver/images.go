package mockserver

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// imageRequest is an Images API request, a generation's or an edit's.
type imageRequest struct {
	prompt, model string
	n             int
	width, height int
	size          string // as answered: "1024x1024"
	quality       string
	background    string
	// url answers data: URLs in place of b64_json (response_format url).
	url      bool
	stream   bool
	partials int
	// inputImages are an edit's images.
	inputImages int
	// events prefixes the stream's event types: image_generation or
	// image_edit.
	events string
}

// imageGenerations serves OpenAI's POST /v1/images/generations (JSON).
func (s *Server) imageGenerations(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Prompt         string `json:"prompt"`
		Model          string `json:"model"`
		N              *int   `json:"n"`
		Size           string `json:"size"`
		Quality        string `json:"quality"`
		Background     string `json:"background"`
		ResponseFormat string `json:"response_format"`
		Stream         bool   `json:"stream"`
		PartialImages  *int   `json:"partial_images"`
	}
	if !c.decode(r, &req) {
		return
	}
	n, partials := 1, -1
	if req.N != nil {
		n = *req.N
	}
	if req.PartialImages != nil {
		partials = *req.PartialImages
	}
	ir, err := newImageRequest(req.Prompt, req.Model, req.Size, req.Quality, req.Background, req.ResponseFormat, n, partials, req.Stream)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ir.events = "image_generation"
	s.serveImages(c, r, ir)
}

// imageEdits serves OpenAI's POST /v1/images/edits (multipart): image (or
// image[], or a url field) and prompt are required.
func (s *Server) imageEdits(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	form, ok := parseForm(w, r)
	if !ok {
		return
	}
	images := len(form.File["image"]) + len(form.File["image[]"])
	for _, u := range form.Value["url"] {
		if u != "" {
			images++
		}
	}
	prompt := formValue(form.Value, "prompt")
	if images == 0 || prompt == "" {
		writeError(w, http.StatusBadRequest, "an image (file part image, or url) and a prompt are required")
		return
	}
	n, partials := 1, -1
	var err error
	if v := formValue(form.Value, "n"); v != "" {
		if n, err = strconv.Atoi(v); err != nil {
			writeError(w, http.StatusBadRequest, "n must be a whole number")
			return
		}
	}
	if v := formValue(form.Value, "partial_images"); v != "" {
		if partials, err = strconv.Atoi(v); err != nil {
			writeError(w, http.StatusBadRequest, "partial_images must be a whole number")
			return
		}
	}
	ir, err := newImageRequest(prompt, formValue(form.Value, "model"), formValue(form.Value, "size"), formValue(form.Value, "quality"),
		formValue(form.Value, "background"), formValue(form.Value, "response_format"), n, partials, formValue(form.Value, "stream") == "true")
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ir.inputImages = images
	ir.events = "image_edit"
	s.serveImages(c, r, ir)
}

// newImageRequest checks an Images API request's settings. partials < 0
// means not given: a stream then has 2 partial images (OpenAI's default
// is none; two show the stream's shape).
func newImageRequest(prompt, model, size, quality, background, format string, n, partials int, stream bool) (imageRequest, error) {
	ir := imageRequest{prompt: prompt, model: modelOr(model), n: n, quality: quality, background: background,
		url: format == "url", stream: stream, partials: partials}
	if prompt == "" {
		return ir, fmt.Errorf("prompt is required")
	}
	if n < 1 || n > 10 {
		return ir, fmt.Errorf("n must be between 1 and 10, not %d", n)
	}
	if ir.partials < 0 {
		ir.partials = 2
	}
	if ir.partials > 3 {
		return ir, fmt.Errorf("partial_images must be between 0 and 3, not %d", partials)
	}
	if ir.quality == "" || ir.quality == "auto" {
		ir.quality = "medium"
	}
	if ir.background == "" || ir.background == "auto" {
		ir.background = "opaque"
	}
	ir.width, ir.height = 1024, 1024
	if size != "" && size != "auto" {
		w, h, ok := strings.Cut(size, "x")
		var errW, errH error
		ir.width, errW = strconv.Atoi(w)
		ir.height, errH = strconv.Atoi(h)
		if !ok || errW != nil || errH != nil || ir.width < 1 || ir.height < 1 || ir.width > 8192 || ir.height > 8192 {
			return ir, fmt.Errorf("size %q: want WIDTHxHEIGHT (for example 1024x1024) or auto", size)
		}
	}
	ir.size = strconv.Itoa(ir.width) + "x" + strconv.Itoa(ir.height)
	return ir, nil
}

// serveImages makes the images: ImageTime (times MediaTimeScale) for each
// 1024x1024 of pixels and each image, in a slot of the engine; streamed,
// the partial images come at even intervals and the completed one at the
// end.
func (s *Server) serveImages(c *call, r *http.Request, ir imageRequest) {
	c.stream = ir.stream
	if c.refused(r) {
		return
	}
	defer c.reshape()()
	textTokens := s.lang.Count(ir.prompt)
	promptTokens := textTokens + ir.inputImages*imageTokens
	// About a token per 1024 pixels, as gpt-image's output counts go.
	outTokens := ir.n * max(1, ir.width*ir.height/1024)
	d := s.mediaTime(s.cfg.ImageTime, float64(ir.n)*float64(ir.width*ir.height)/(1024*1024))
	usage := fmt.Appendf(nil, `{"input_tokens":%d,"input_tokens_details":{"image_tokens":%d,"text_tokens":%d},"output_tokens":%d,"total_tokens":%d}`,
		promptTokens, promptTokens-textTokens, textTokens, outTokens, promptTokens+outTokens)
	created := strconv.FormatInt(c.arrival.Unix(), 10)
	meta := appendJSONValue([]byte(`"background":`), ir.background)
	meta = appendJSONValue(append(meta, `,"output_format":"png","quality":`...), ir.quality)
	meta = appendJSONValue(append(meta, `,"size":`...), ir.size)
	if !c.stream {
		if !s.occupy(c, promptTokens, outTokens, d, 1, nil) {
			return
		}
		b := append([]byte(`{"created":`), created...)
		b = append(b, `,"data":[`...)
		for i := range ir.n {
			if i > 0 {
				b = append(b, ',')
			}
			img := base64.StdEncoding.EncodeToString(tinyPNG(c.seq, i))
			if ir.url {
				b = append(b, `{"url":"data:image/png;base64,`...)
			} else {
				b = append(b, `{"b64_json":"`...)
			}
			b = append(b, img...)
			b = append(b, `"}`...)
		}
		b = append(b, "],"...)
		b = append(b, meta...)
		b = append(b, `,"usage":`...)
		b = append(b, usage...)
		c.reply("application/json", append(b, '}'))
		return
	}
	phases := ir.partials + 1
	s.occupy(c, promptTokens, outTokens, d, phases, func(k int) bool {
		typ := ir.events + ".completed"
		if k < ir.partials {
			typ = ir.events + ".partial_image"
		}
		b := fmt.Appendf(nil, "event: %s\ndata: {\"type\":%q,\"b64_json\":\"%s\",\"created_at\":%s,%s", typ, typ,
			base64.StdEncoding.EncodeToString(tinyPNG(c.seq, k)), created, meta)
		if k < ir.partials {
			b = fmt.Appendf(b, `,"partial_image_index":%d`, k)
		} else {
			b = append(append(b, `,"usage":`...), usage...)
		}
		return c.event(k, phases, append(b, "}\n\n"...))
	})
}

// mediaTime is base scaled by factor and Config.MediaTimeScale.
func (s *Server) mediaTime(base time.Duration, factor float64) time.Duration {
	return time.Duration(float64(base) * factor * s.cfg.MediaTimeScale)
}

// tinyPNG is a real 8x8 PNG, a gradient whose colours depend on the
// request and the image's index.
func tinyPNG(seq uint64, i int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	r, g := uint8(seq*37), uint8(i*85)
	for y := range 8 {
		for x := range 8 {
			img.SetRGBA(x, y, color.RGBA{R: r + uint8(x*16), G: g + uint8(y*16), B: 128, A: 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // writing to memory cannot fail
	return buf.Bytes()
}
