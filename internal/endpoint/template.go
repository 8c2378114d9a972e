package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gonja "github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// templateType sends bodies made from a Jinja template (--extra-inputs
// payload_template) to --url as it is, for servers of no known API, and
// reads their answers as the raw type does.
//
// Templates are rendered with autoescaping on, as AIPerf renders them: a
// string printed bare has its quotes turned into HTML entities, so
// strings should be printed as JSON, {"text": {{ text|tojson }}}.
type templateType struct {
	answer answerReader
	tmpl   *exec.Template
	// source names the template in messages: nv-embedqa, a file, or
	// "inline".
	source string
}

// namedTemplates are the templates payload_template can name.
var namedTemplates = map[string]string{
	// NVIDIA NIM's retrieval embedding models (nv-embedqa-*): OpenAI's
	// embeddings body and the input_type they require; --extra-inputs
	// input_type:passage embeds passages instead of queries.
	"nv-embedqa": `{"input": {{ texts|tojson }}, "model": {{ model|tojson }}, "input_type": "query"}`,
}

// templateRoot is the name the inline template is loaded by; other names
// (a template's include or import) are files, relative to the template
// file's directory or to the working directory.
const templateRoot = "\x00payload_template"

func (templateType) Path(bool) string { return "" }

func (templateType) Caps() Caps {
	return Caps{ProducesTokens: true, TokenizesInput: true, Streams: true, Media: Image | Audio | Video}
}

// Configure takes payload_template and response_field from extra; the
// other extras are merged into each rendered body.
func (templateType) Configure(extra []Field) (Type, []Field, error) {
	a, rest, err := configureAnswer(Template, extra, true)
	if err != nil {
		return nil, nil, err
	}
	var spec string
	var given bool
	left := rest[:0:0]
	for _, f := range rest {
		if f.Key == "payload_template" {
			spec, given = extraText(f.Value), true
			continue
		}
		left = append(left, f)
	}
	if !given || strings.TrimSpace(spec) == "" {
		return nil, nil, errors.New("the template endpoint type needs --extra-inputs payload_template:<jinja template, file or nv-embedqa>")
	}
	t := templateType{answer: a, source: "inline"}
	source, dir := spec, ""
	if named, ok := namedTemplates[spec]; ok {
		source, t.source = named, spec
	} else if fi, err := os.Stat(spec); err == nil && fi.Mode().IsRegular() {
		b, err := os.ReadFile(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("template endpoint type: read payload_template: %w", err)
		}
		source, dir, t.source = string(b), filepath.Dir(spec), spec
	}
	if t.tmpl, err = parseTemplate(source, dir); err != nil {
		return nil, nil, fmt.Errorf("template endpoint type: payload_template %s is not a Jinja template: %w", t.source, err)
	}
	return t, left, nil
}

// parseTemplate parses a Jinja template whose includes and imports are
// read relative to dir.
func parseTemplate(source, dir string) (t *exec.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("the template broke the parser: %v", r)
		}
	}()
	files, err := loaders.NewFileSystemLoader(dir)
	if err != nil {
		return nil, err
	}
	loader, err := loaders.NewShiftedLoader(templateRoot, strings.NewReader(source), files)
	if err != nil {
		return nil, err
	}
	cfg := config.New()
	cfg.AutoEscape = true
	return exec.NewTemplate(templateRoot, cfg, loader, gonja.DefaultEnvironment)
}

// Build renders the template with in's variables (templateVars), checks
// that it made JSON and merges the extras into it when it is an object.
func (t templateType) Build(in Input) ([]byte, error) {
	if t.tmpl == nil {
		return nil, errors.New("build template body: the template endpoint type needs --extra-inputs payload_template:<jinja template, file or nv-embedqa>")
	}
	out, err := t.render(in)
	if err != nil {
		return nil, fmt.Errorf("build template body: render payload_template %s: %w", t.source, err)
	}
	out = bytes.TrimSpace(out)
	var body bytes.Buffer
	if err := json.Compact(&body, out); err != nil {
		return nil, fmt.Errorf("build template body: payload_template %s rendered no JSON (%v): %q: print strings as JSON, e.g. {\"text\": {{ text|tojson }}}",
			t.source, err, clip(out))
	}
	if len(in.Extra) == 0 {
		return body.Bytes(), nil
	}
	members, err := objectMembers(body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("build template body: payload_template %s rendered %s, into which --extra-inputs cannot be merged: render an object, or drop the other extras",
			t.source, jsonKind(body.Bytes()))
	}
	o := object{kind: Template, fields: members}
	o.merge(in.Extra)
	return o.bytes()
}

// render executes the template; gonja is not hardened against every
// template, so a panic is an error like any other.
func (t templateType) render(in Input) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the template broke the renderer: %v", r)
		}
	}()
	var b bytes.Buffer
	if err := t.tmpl.Execute(&b, exec.NewContext(templateVars(in))); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// templateVars are the variables a template sees, AIPerf's: texts,
// images, audios, videos (lists of strings: texts, data: URIs or URLs)
// and the first of each (text, image, audio, video: "" when none);
// query, queries, passage, passages and texts_by_name (query, passages);
// model, max_tokens (None when not set), role ("user"), stream, system;
// turn (this turn: role, texts, images, audios, videos, model,
// max_tokens) and turns (the earlier ones as role, content and texts,
// then turn).
func templateVars(in Input) map[string]any {
	texts := nonEmpty(in.PromptTexts())
	var queries []string
	if in.Query != "" {
		queries = []string{in.Query}
	}
	passages := nonEmpty(in.Passages)
	if len(texts) == 0 {
		// A rankings entry's texts are its query and passages.
		texts = append(append(texts, queries...), passages...)
	}
	images, audios, videos := mediaURLs(in.Images, "image"), mediaURLs(in.Audios, "audio"), mediaURLs(in.Videos, "video")
	var maxTokens any
	if in.MaxTokens > 0 {
		maxTokens = in.MaxTokens
	}
	byName := map[string]any{}
	if len(queries) > 0 {
		byName["query"] = queries
	}
	if len(passages) > 0 {
		byName["passages"] = passages
	}
	turn := map[string]any{
		"role": "user", "texts": texts, "images": images, "audios": audios, "videos": videos,
		"model": in.Model, "max_tokens": maxTokens,
	}
	turns := make([]any, 0, len(in.History)+1)
	for _, m := range in.History {
		turns = append(turns, map[string]any{"role": m.Role, "content": m.Content, "texts": []string{m.Content}})
	}
	turns = append(turns, turn)
	return map[string]any{
		"texts": texts, "images": images, "audios": audios, "videos": videos,
		"text": first(texts), "image": first(images), "audio": first(audios), "video": first(videos),
		"query": first(queries), "queries": orEmpty(queries), "passage": first(passages), "passages": passages,
		"texts_by_name": byName, "images_by_name": map[string]any{}, "audios_by_name": map[string]any{}, "videos_by_name": map[string]any{},
		"model": in.Model, "max_tokens": maxTokens, "role": "user", "stream": in.Streaming, "system": in.System,
		"turn": turn, "turns": turns,
	}
}

// mediaURLs are media's URLs: given, or made of their data.
func mediaURLs(media []MediaItem, kind string) []string {
	out := make([]string, 0, len(media))
	for _, m := range media {
		switch {
		case m.URL != "":
			out = append(out, m.URL)
		case m.Data != nil:
			out = append(out, DataURI(kind+"/"+m.Format, m.Data))
		}
	}
	return out
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

func orEmpty(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func (t templateType) Read(data []byte, _ bool, st *State) (Chunk, error) {
	a := t.answer
	a.kind = Template
	return a.read(data, st)
}

func (t templateType) Empty(c Chunk) string { return t.answer.empty(c) }
