package benchmark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"

	"github.com/llmbench/llmbench/internal/endpoint"
)

// formJSON shows a multipart body as inputs.json shows a payload: a JSON
// object of its fields in order, each file as its name, type and size
// (the bytes themselves would be megabytes of base64 nobody reads).
func formJSON(body []byte) (json.RawMessage, error) {
	r := multipart.NewReader(bytes.NewReader(body), endpoint.Boundary)
	var fields []endpoint.Field
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the form: %w", err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, fmt.Errorf("read the form's %s: %w", part.FormName(), err)
		}
		var v any = string(data)
		if part.FileName() != "" {
			v = map[string]any{"filename": part.FileName(), "content_type": part.Header.Get("Content-Type"), "bytes": len(data)}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("show the form's %s: %w", part.FormName(), err)
		}
		fields = append(fields, endpoint.Field{Key: part.FormName(), Value: raw})
	}
	return endpoint.EncodeObject(fields), nil
}
