package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"
)

// form builds a multipart/form-data body with Boundary, part by part, in
// order: the multipart counterpart of object.
type form struct {
	kind  Kind
	parts []formPart
}

// formPart is a text field (no filename) or a file.
type formPart struct {
	name, filename, contentType string
	value                       []byte
}

// field appends a text field.
func (f *form) field(name, value string) {
	f.parts = append(f.parts, formPart{name: name, value: []byte(value)})
}

// file appends a file part.
func (f *form) file(name, filename, contentType string, data []byte) {
	f.parts = append(f.parts, formPart{name: name, filename: filename, contentType: contentType, value: data})
}

// merge sets each extra field as a text field (a JSON string's value, any
// other value's JSON text): one with a built name replaces its value where
// it stands, others are appended; names in ignore are skipped.
func (f *form) merge(extra []Field, ignore ...string) error {
	for _, x := range extra {
		if slices.Contains(ignore, x.Key) {
			continue
		}
		v, err := formValue(x.Value)
		if err != nil {
			return fmt.Errorf("build %s body: extra input %q: %w", f.kind, x.Key, err)
		}
		if i := slices.IndexFunc(f.parts, func(p formPart) bool { return p.name == x.Key && p.filename == "" }); i >= 0 {
			f.parts[i].value = []byte(v)
		} else {
			f.field(x.Key, v)
		}
	}
	return nil
}

// formValue is an extra input's value as a form field: a string's text,
// or the JSON of a number, boolean, object…
func formValue(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("invalid JSON value %q", clip(raw))
	}
	return string(raw), nil
}

// bytes encodes the parts. A part that contains Boundary is refused: it
// would end the part early.
func (f *form) bytes() ([]byte, error) {
	var buf bytes.Buffer
	n := 0
	for _, p := range f.parts {
		n += len(p.value) + len(p.name) + len(p.filename) + 128
	}
	buf.Grow(n + 64)
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(Boundary); err != nil {
		return nil, fmt.Errorf("build %s body: %w", f.kind, err)
	}
	for _, p := range f.parts {
		if strings.Contains(p.name, Boundary) || strings.Contains(p.filename, Boundary) || bytes.Contains(p.value, []byte(Boundary)) {
			return nil, fmt.Errorf("build %s body: part %q contains the multipart boundary", f.kind, clip([]byte(p.name)))
		}
		if strings.ContainsAny(p.contentType, "\r\n") {
			return nil, fmt.Errorf("build %s body: part %q: bad content type %q", f.kind, p.name, p.contentType)
		}
		var pw io.Writer
		var err error
		if p.filename != "" {
			h := make(textproto.MIMEHeader, 2)
			h.Set("Content-Disposition", multipart.FileContentDisposition(p.name, p.filename))
			h.Set("Content-Type", p.contentType)
			pw, err = w.CreatePart(h)
		} else {
			pw, err = w.CreateFormField(p.name)
		}
		if err == nil {
			_, err = pw.Write(p.value)
		}
		if err != nil {
			return nil, fmt.Errorf("build %s body: part %q: %w", f.kind, p.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("build %s body: %w", f.kind, err)
	}
	return buf.Bytes(), nil
}
