package mockserver

import (
	"net/http"
	"strconv"
	"strings"
)

// imageRetrieval serves NVIDIA NIM's POST /v1/infer (page-elements
// detection): input [{type: "image_url", url}], answered with each
// image's bounding boxes by class, normalized to [0, 1].
func (s *Server) imageRetrieval(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	var req struct {
		Input []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"input"`
	}
	if !c.decode(r, &req) {
		return
	}
	if len(req.Input) == 0 {
		writeError(w, http.StatusBadRequest, `input is required: a list of {"type": "image_url", "url": ...}`)
		return
	}
	var bytes int
	for _, in := range req.Input {
		if in.URL == "" {
			writeError(w, http.StatusBadRequest, "every input needs an image url")
			return
		}
		if _, data, ok := strings.Cut(in.URL, ","); ok && strings.HasPrefix(in.URL, "data:") {
			bytes += len(data) * 3 / 4
		}
	}
	// The page elements a NIM page-elements model finds.
	classes := [...]string{"table", "chart", "title"}
	s.pool(c, r, len(req.Input)*imageTokens, func() []byte {
		b := append(make([]byte, 0, 256*len(req.Input)), `{"data":[`...)
		for i, in := range req.Input {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"bounding_boxes":{`...)
			for k, class := range classes {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, '"')
				b = append(b, class...)
				b = append(b, `":[`...)
				// Zero to two boxes of each class, the same for the same image.
				n := int(unitHash(in.URL, class) * 3)
				for j := range n {
					if j > 0 {
						b = append(b, ',')
					}
					id := class + strconv.Itoa(j)
					x0, y0 := 0.5*unitHash(in.URL, id, "x"), 0.5*unitHash(in.URL, id, "y")
					b = append(b, `{"x_min":`...)
					b = strconv.AppendFloat(b, x0, 'f', 4, 64)
					b = append(b, `,"y_min":`...)
					b = strconv.AppendFloat(b, y0, 'f', 4, 64)
					b = append(b, `,"x_max":`...)
					b = strconv.AppendFloat(b, x0+0.1+0.4*unitHash(in.URL, id, "w"), 'f', 4, 64)
					b = append(b, `,"y_max":`...)
					b = strconv.AppendFloat(b, y0+0.1+0.4*unitHash(in.URL, id, "h"), 'f', 4, 64)
					b = append(b, `,"confidence":`...)
					b = strconv.AppendFloat(b, 0.5+0.5*unitHash(in.URL, id, "c"), 'f', 4, 64)
					b = append(b, '}')
				}
				b = append(b, ']')
			}
			b = append(b, "}}"...)
		}
		b = append(b, `],"usage":{"images_size_mb":`...)
		b = strconv.AppendFloat(b, float64(bytes)/(1<<20), 'f', 6, 64)
		return append(b, "}}"...)
	})
}
