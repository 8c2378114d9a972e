package endpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mediaKinds are the types whose answers FuzzMediaRead reads.
var mediaKinds = []Kind{ImageGeneration, ImageEdit, AudioTranscription, VideoGeneration}

// fixture reads testdata/<kind>/<name>.
func fixture(t testing.TB, k Kind, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", string(k), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseData are the data fields of an SSE fixture's events, in order.
func sseData(t testing.TB, k Kind, name string) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(fixture(t, k, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, []byte(d))
		}
	}
	return out
}

// part is one part of a multipart body, as an independent reader sees it.
type part struct {
	name, filename, contentType string
	data                        []byte
}

// readParts parses a built multipart body with mime/multipart, using the
// boundary the type's Content-Type announces, and checks it ends cleanly.
func readParts(t *testing.T, k Kind, body []byte) []part {
	t.Helper()
	mt, params, err := mime.ParseMediaType(k.Caps().ContentType())
	if err != nil || mt != "multipart/form-data" || params["boundary"] != Boundary {
		t.Fatalf("content type %q: %v", k.Caps().ContentType(), err)
	}
	if !bytes.HasSuffix(body, []byte("\r\n--"+Boundary+"--\r\n")) {
		t.Fatalf("body does not end with the closing delimiter: %q", clip(body[max(0, len(body)-80):]))
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out []part
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("multipart: %v", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatalf("multipart part %q: %v", p.FormName(), err)
		}
		out = append(out, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), data})
	}
}

// checkParts compares parts with want, part by part.
func checkParts(t *testing.T, got, want []part) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d parts, want %d:\n got %s\nwant %s", len(got), len(want), partNames(got), partNames(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.name != w.name || g.filename != w.filename || g.contentType != w.contentType || !bytes.Equal(g.data, w.data) {
			t.Errorf("part %d:\n got name=%q filename=%q type=%q data=%q\nwant name=%q filename=%q type=%q data=%q",
				i, g.name, g.filename, g.contentType, clip(g.data), w.name, w.filename, w.contentType, clip(w.data))
		}
	}
}

func partNames(ps []part) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	return strings.Join(names, ",")
}

// text is a text field part.
func text(name, value string) part { return part{name: name, data: []byte(value)} }

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// FuzzMediaRead reads arbitrary answers as every media type, whole and as
// stream events: no panic, errors only for what is not a JSON object's
// answer, and Empty agrees with what was read.
func FuzzMediaRead(f *testing.F) {
	for _, k := range mediaKinds {
		entries, err := os.ReadDir(filepath.Join("testdata", string(k)))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sse") {
				for _, d := range sseData(f, k, e.Name()) {
					f.Add(d)
				}
			} else {
				f.Add(fixture(f, k, e.Name()))
			}
		}
	}
	for _, s := range []string{`{}`, `null`, `[]`, `{"type":"error"}`, `{"error":null,"id":"x","status":"failed"}`,
		`{"data":[null,{}]}`, `{"type":"transcript.text.done"}`, `{"code":"x","object":"error"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range mediaKinds {
			typ := k.Type()
			for _, streaming := range []bool{false, true} {
				var st State
				c, err := typ.Read(data, streaming, &st)
				if err != nil {
					if !IsServerError(err) && !strings.Contains(err.Error(), "parse "+string(k)) {
						t.Fatalf("%s: error without context: %v", k, err)
					}
					continue
				}
				if !json.Valid(data) {
					t.Fatalf("%s read invalid JSON %q", k, data)
				}
				if c.Items < 0 {
					t.Fatalf("%s: Items %d", k, c.Items)
				}
				msg := typ.Empty(c)
				switch k {
				case VideoGeneration:
					if msg == "" && (c.Video == nil || c.Video.ID == "" || c.Video.Finished() && c.Video.Status != "completed") {
						t.Fatalf("video: Empty accepted %+v", c.Video)
					}
					if v := c.Video; v != nil && v.ID != "" && v.Status == "completed" && (msg != "" || c.Items != 1) {
						t.Fatalf("video: a completed job is refused (%s) or not counted (%d)", msg, c.Items)
					}
				default:
					if (msg == "") != (c.Items > 0 || len(c.Text) > 0) {
						t.Fatalf("%s: Empty %q for %+v", k, msg, c)
					}
				}
			}
		}
	})
}
