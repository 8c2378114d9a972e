package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/internal/endpoint"
)

// maxMediaFile bounds one image or audio file a dataset names (a request
// carries it whole).
const maxMediaFile = 64 << 20

// readImage reads an image field of a dataset line as AIPerf reads it: an
// http(s) URL (sent as it is), a data: URI, or a file path (relative to
// the dataset's folder) read and sent as a data: URI.
func readImage(v, dir string) (endpoint.MediaItem, error) { return readVisual("image", v, dir) }

// readVideo reads a video field the same way.
func readVideo(v, dir string) (endpoint.MediaItem, error) { return readVisual("video", v, dir) }

// readVisual reads an image or video field (kind "image" or "video", its
// MIME type's top level).
func readVisual(kind, v, dir string) (endpoint.MediaItem, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return endpoint.MediaItem{}, fmt.Errorf("an empty %s", kind)
	case strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://"):
		return endpoint.MediaItem{URL: v}, nil
	case strings.HasPrefix(v, "data:"):
		mime, data, err := decodeDataURI(v)
		if err != nil {
			return endpoint.MediaItem{}, fmt.Errorf("%s: %w", kind, err)
		}
		return endpoint.MediaItem{URL: v, Format: strings.TrimPrefix(mime, kind+"/"), Data: data}, nil
	}
	data, err := readMediaFile(v, dir)
	if err != nil {
		return endpoint.MediaItem{}, fmt.Errorf("%s: %w", kind, err)
	}
	mime := http.DetectContentType(data)
	if !strings.HasPrefix(mime, kind+"/") {
		return endpoint.MediaItem{}, fmt.Errorf("%s: %s holds %s, not %s data", kind, v, mime, kind)
	}
	return endpoint.MediaItem{URL: endpoint.DataURI(mime, data), Format: strings.TrimPrefix(mime, kind+"/"), Data: data}, nil
}

// readAudio reads an audio field: AIPerf's "format,<base64>" form, a
// data: URI, or a file path (relative to the dataset's folder). A WAV
// clip's length is read from its header; another format's is unknown (0).
func readAudio(v, dir string) (endpoint.MediaItem, error) {
	v = strings.TrimSpace(v)
	var data []byte
	var format string
	var err error
	switch {
	case v == "":
		return endpoint.MediaItem{}, fmt.Errorf("an empty audio clip")
	case strings.HasPrefix(v, "data:"):
		var mime string
		if mime, data, err = decodeDataURI(v); err != nil {
			return endpoint.MediaItem{}, fmt.Errorf("audio: %w", err)
		}
		format = audioFormat(mime, data)
	case isFormatBase64(v):
		f, payload, _ := strings.Cut(v, ",")
		if data, err = base64.StdEncoding.DecodeString(payload); err != nil {
			return endpoint.MediaItem{}, fmt.Errorf("audio %q…: the base64 after %q: %w", clipString(v), f+",", err)
		}
		format = strings.ToLower(f)
	default:
		if data, err = readMediaFile(v, dir); err != nil {
			return endpoint.MediaItem{}, fmt.Errorf("audio: %w", err)
		}
		format = audioFormat(strings.TrimPrefix(strings.ToLower(filepath.Ext(v)), "."), data)
	}
	item := endpoint.MediaItem{Format: format, Data: data, URL: endpoint.DataURI("audio/"+format, data)}
	if format == "wav" {
		if item.Seconds, err = wavSeconds(data); err != nil {
			return endpoint.MediaItem{}, fmt.Errorf("audio: %w", err)
		}
	}
	return item, nil
}

// isFormatBase64 recognises AIPerf's "wav,<base64>" audio strings.
func isFormatBase64(v string) bool {
	f, rest, ok := strings.Cut(v, ",")
	return ok && len(rest) > 0 && (f == "wav" || f == "mp3" || f == "flac" || f == "ogg")
}

// audioFormat names a clip's format from its bytes, else from hint (a
// MIME type or a file extension).
func audioFormat(hint string, data []byte) string {
	switch {
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(data, []byte("ID3")) || len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0:
		return "mp3"
	}
	hint = strings.TrimPrefix(hint, "audio/")
	if hint == "mpeg" {
		return "mp3"
	}
	return hint
}

// wavSeconds is a WAV clip's length: its data chunk's bytes over the fmt
// chunk's byte rate.
func wavSeconds(data []byte) (float64, error) {
	if len(data) < 12 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return 0, fmt.Errorf("not a RIFF/WAVE file")
	}
	byteRate := uint32(0)
	for p := 12; p+8 <= len(data); {
		id, size := string(data[p:p+4]), binary.LittleEndian.Uint32(data[p+4:p+8])
		body := p + 8
		switch id {
		case "fmt ":
			if size < 16 || body+16 > len(data) {
				return 0, fmt.Errorf("a WAV fmt chunk of %d bytes", size)
			}
			byteRate = binary.LittleEndian.Uint32(data[body+8 : body+12])
		case "data":
			if byteRate == 0 {
				return 0, fmt.Errorf("a WAV file whose data comes before its format, or a byte rate of 0")
			}
			n := min(int64(size), int64(len(data)-body))
			return float64(n) / float64(byteRate), nil
		}
		p = body + int(size) + int(size&1)
	}
	return 0, fmt.Errorf("a WAV file without a data chunk")
}

// decodeDataURI splits a base64 data: URI into its MIME type and bytes.
func decodeDataURI(v string) (string, []byte, error) {
	head, payload, ok := strings.Cut(strings.TrimPrefix(v, "data:"), ",")
	mime, isBase64 := strings.CutSuffix(head, ";base64")
	if !ok || !isBase64 {
		return "", nil, fmt.Errorf("%q…: want a base64 data: URI (data:<type>;base64,<data>)", clipString(v))
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("%q…: %w", clipString(v), err)
	}
	return mime, data, nil
}

// readMediaFile reads a file a dataset line names, relative to the
// dataset's folder.
func readMediaFile(path, dir string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxMediaFile {
		return nil, fmt.Errorf("%s is %d MB; a request carries at most %d MB", path, st.Size()>>20, maxMediaFile>>20)
	}
	return os.ReadFile(path)
}

func clipString(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
