package endpoint

import (
	"encoding/base64"
	"strings"
)

// base64Of is a medium's bytes in base64: its data, or a data: URI's
// payload.
func base64Of(m MediaItem) string {
	if m.Data != nil {
		return base64.StdEncoding.EncodeToString(m.Data)
	}
	if rest, ok := strings.CutPrefix(m.URL, "data:"); ok {
		if _, payload, ok := strings.Cut(rest, ","); ok {
			return payload
		}
	}
	return m.URL
}

// DataURI is the data: URI of encoded media of MIME type mime.
func DataURI(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}
