package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/llmbench/llmbench/internal/tracesynth"
)

// FileOptions are what reading a dataset file needs.
type FileOptions struct {
	// Type is --custom-dataset-type.
	Type string
	// Corpus counts the file's text and makes the text of traces that give
	// only lengths.
	Corpus *Corpus
	// BlockSize is the tokens per trace hash block
	// (--prompt-input-tokens-block-size, 512).
	BlockSize int
	// Conversations is how many conversations random_pool draws
	// (--conversation-num).
	Conversations int
	Seed          uint64
	// Defer leaves the prompts of trace rows (mooncake_trace,
	// bailian_trace, burst_gpt_trace) to BuildPrompts.
	Defer bool
	// Synthesis reshapes mooncake_trace rows before their prompts are made
	// (--synthesis-*, mooncake_synth.go).
	Synthesis tracesynth.Options
}

// formatReader reads one dataset format from its files (several when
// --input-file is a directory). Adding a format is one file and one entry
// in formats.
type formatReader func(files []sourceFile, o FileOptions) ([]Conversation, error)

// format is a --custom-dataset-type: its reader and, when it reads a
// directory too, which of the directory's files it takes.
type format struct {
	read formatReader
	dir  func(name string) bool
	// walk reads the directory's subdirectories too.
	walk bool
}

var formats = map[string]format{
	"single_turn":     {read: readSingleTurn},
	"multi_turn":      {read: readMultiTurn},
	"random_pool":     {read: readRandomPool, dir: func(string) bool { return true }},
	"mooncake_trace":  {read: readMooncake},
	"raw_payload":     {read: readRawPayload, dir: func(name string) bool { return strings.HasSuffix(name, ".jsonl") }},
	"inputs_json":     {read: readInputsJSON},
	"burst_gpt_trace": {read: readBurstGPT},
	"bailian_trace":   {read: readBailian},

	"sagemaker_data_capture": {read: readSageMaker, dir: func(name string) bool { return strings.HasSuffix(name, ".jsonl") }, walk: true},
	"dag_jsonl":              {read: readDag},
}

// listDir lists the directory's files that fm reads, in lexical order,
// its subdirectories' too when fm.walk. Hidden files and folders are
// skipped.
func listDir(root string, fm format) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == root:
			return nil
		case strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir() && !fm.walk:
			return filepath.SkipDir
		case !d.IsDir() && fm.dir(d.Name()):
			paths = append(paths, p)
		}
		return nil
	})
	return paths, err
}

// Formats lists the supported --custom-dataset-type values.
func Formats() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// dirFormats lists the formats that read a directory.
func dirFormats() []string {
	var names []string
	for _, n := range Formats() {
		if formats[n].dir != nil {
			names = append(names, n)
		}
	}
	return names
}

// sourceFile is a JSONL file's non-blank lines, with their numbers.
type sourceFile struct {
	name, format string
	lines        []sourceLine
	// inDir says the file is one of a directory's.
	inDir bool
}

type sourceLine struct {
	num  int
	data []byte
}

// errorf is an error about one line, named as editors jump to it.
func (f *sourceFile) errorf(l sourceLine, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", f.name, l.num, fmt.Sprintf(format, args...))
}

// ReadFile reads the dataset at path (a JSONL file, or for random_pool a
// directory of them) as conversations. Any malformed line is an error
// naming the file and line, and nothing is read past it.
func ReadFile(path string, o FileOptions) ([]Conversation, error) {
	fm, ok := formats[o.Type]
	if !ok {
		return nil, fmt.Errorf("--custom-dataset-type %q: use %s", o.Type, strings.Join(Formats(), ", "))
	}
	if o.Corpus == nil {
		return nil, errors.New("read dataset: no corpus to count tokens with")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--input-file: %w", err)
	}
	var paths []string
	if st.IsDir() {
		if fm.dir == nil {
			return nil, fmt.Errorf("--input-file %s is a directory; only %s read a directory, %s needs one file", path, strings.Join(dirFormats(), ", "), o.Type)
		}
		if paths, err = listDir(path, fm); err != nil {
			return nil, fmt.Errorf("--input-file: %w", err)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("--input-file %s: the directory has no files", path)
		}
	} else {
		paths = []string{path}
	}
	files := make([]sourceFile, 0, len(paths))
	for _, p := range paths {
		f, err := readLines(p)
		if err != nil {
			return nil, err
		}
		f.format, f.inDir = o.Type, st.IsDir()
		files = append(files, f)
	}
	convs, err := fm.read(files, o)
	if err != nil {
		return nil, err
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("--input-file %s: no requests in it", path)
	}
	if !o.Defer {
		if err := BuildPrompts(convs); err != nil {
			return nil, err
		}
	}
	return convs, nil
}

// readLines reads a JSONL file's non-blank lines.
func readLines(path string) (sourceFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return sourceFile{}, fmt.Errorf("--input-file: %w", err)
	}
	defer f.Close()
	src := sourceFile{name: path}
	r := bufio.NewReaderSize(f, 64<<10)
	for num := 1; ; num++ {
		line, err := r.ReadBytes('\n')
		if num == 1 {
			// A UTF-8 byte-order mark, as some editors on Windows write.
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			src.lines = append(src.lines, sourceLine{num: num, data: t})
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return sourceFile{}, fmt.Errorf("read %s: %w", path, err)
		}
	}
	if len(src.lines) == 0 {
		return sourceFile{}, fmt.Errorf("--input-file %s is empty", path)
	}
	return src, nil
}

// decodeLine decodes one line's JSON object into v, refusing unknown
// fields (a typo must not silently drop a setting) and trailing data.
func decodeLine(f *sourceFile, l sourceLine, v any, fields string) error {
	dec := json.NewDecoder(bytes.NewReader(l.data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return f.errorf(l, "not valid JSON (the line ends inside a value)")
		case errors.As(err, &syn):
			return f.errorf(l, "not valid JSON (%v at byte %d)", syn, syn.Offset)
		case errors.As(err, &typ):
			return f.errorf(l, "field %q: %s is not a %s", typ.Field, typ.Value, typ.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.TrimPrefix(err.Error(), "json: unknown field ")
			if media(strings.Trim(name, `"`)) {
				return f.errorf(l, "field %s: image, audio and video inputs are not supported; llmbench sends text", name)
			}
			return f.errorf(l, "unknown field %s (%s takes %s)", name, f.format, fields)
		}
		return f.errorf(l, "%v", err)
	}
	if dec.More() {
		return f.errorf(l, "more than one JSON value on the line")
	}
	return nil
}

func media(name string) bool {
	return slices.Contains([]string{"image", "images", "audio", "audios", "video", "videos"}, name)
}

// turnFields are a turn's fields as AIPerf's single_turn, multi_turn and
// random_pool lines spell them.
type turnFields struct {
	Text         *string         `json:"text"`
	Texts        []string        `json:"texts"`
	Role         string          `json:"role"`
	Timestamp    *float64        `json:"timestamp"`
	Delay        *float64        `json:"delay"`
	OutputLength *int            `json:"output_length"`
	Extra        json.RawMessage `json:"extra"`
	Type         string          `json:"type"`
	// Image and Images, Audio and Audios: URLs, data: URIs or file paths
	// (audio also AIPerf's "wav,<base64>").
	Image  *string  `json:"image"`
	Images []string `json:"images"`
	Audio  *string  `json:"audio"`
	Audios []string `json:"audios"`
	Video  *string  `json:"video"`
	Videos []string `json:"videos"`
}

const turnFieldNames = "text, texts, role, timestamp, delay, output_length, extra, type, image, images, audio, audios, video, videos"

// turn checks the fields and makes the Turn, its text counted.
func (t *turnFields) turn(f *sourceFile, l sourceLine, c *Corpus) (Turn, error) {
	var out Turn
	switch {
	case t.Text != nil && t.Texts != nil:
		return out, f.errorf(l, "give text or texts, not both")
	case t.Text != nil:
		out.Text = *t.Text
	default:
		out.Text = strings.Join(t.Texts, "\n")
		if len(t.Texts) > 1 {
			out.Texts = t.Texts
		}
	}
	if err := t.media(f, &out); err != nil {
		return out, f.errorf(l, "%v", err)
	}
	if strings.TrimSpace(out.Text) == "" && len(out.Images)+len(out.Audios)+len(out.Videos) == 0 {
		return out, f.errorf(l, "no text: every request needs a non-empty \"text\" (or an image or audio)")
	}
	out.InputTokens = c.Count(out.Text)
	err := requestFields{t.OutputLength, t.Timestamp, t.Delay, t.Extra}.apply(f, l, &out)
	return out, err
}

// media reads the line's images and audio clips into out.
func (t *turnFields) media(f *sourceFile, out *Turn) error {
	if t.Image != nil && t.Images != nil || t.Audio != nil && t.Audios != nil || t.Video != nil && t.Videos != nil {
		return fmt.Errorf("give image or images (audio or audios, video or videos), not both")
	}
	images, audios, videos := t.Images, t.Audios, t.Videos
	if t.Video != nil {
		videos = []string{*t.Video}
	}
	if t.Image != nil {
		images = []string{*t.Image}
	}
	if t.Audio != nil {
		audios = []string{*t.Audio}
	}
	dir := filepath.Dir(f.name)
	for _, v := range images {
		m, err := readImage(v, dir)
		if err != nil {
			return err
		}
		out.Images = append(out.Images, m)
	}
	for _, v := range audios {
		m, err := readAudio(v, dir)
		if err != nil {
			return err
		}
		out.Audios = append(out.Audios, m)
	}
	for _, v := range videos {
		m, err := readVideo(v, dir)
		if err != nil {
			return err
		}
		out.Videos = append(out.Videos, m)
	}
	return nil
}

// requestFields are the per-request settings every format shares.
type requestFields struct {
	outputLength     *int
	timestamp, delay *float64
	extra            json.RawMessage
}

// apply checks the fields and sets them on t.
func (r requestFields) apply(f *sourceFile, l sourceLine, t *Turn) error {
	if r.outputLength != nil {
		if *r.outputLength < 1 {
			return f.errorf(l, "output_length %d: it must be at least 1 token", *r.outputLength)
		}
		t.MaxTokens = *r.outputLength
	}
	if r.timestamp != nil {
		if !finiteNonNegative(*r.timestamp) {
			return f.errorf(l, "timestamp %g: want milliseconds, not negative", *r.timestamp)
		}
		t.TimestampMs, t.HasTimestamp = *r.timestamp, true
	}
	if r.delay != nil {
		if !finiteNonNegative(*r.delay) {
			return f.errorf(l, "delay %g: want milliseconds, not negative", *r.delay)
		}
		t.DelayMs = *r.delay
	}
	extra, err := extraObject(f, l, r.extra)
	t.Extra = extra
	return err
}

// extraObject checks that extra, when given, is a JSON object.
func extraObject(f *sourceFile, l sourceLine, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, f.errorf(l, "extra must be a JSON object of request fields, got %s", truncate(string(raw), 40))
	}
	return raw, nil
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
