package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// schemaVersion accepts the one schema llmbench reads.
func schemaVersion(_ *builder, c cursor) error {
	v, err := scalarText(c.path, c.n)
	if err != nil {
		return err
	}
	if f, ok := parseFloat(v); !ok || f != 2 {
		return pathError(c.path, "%q: llmbench reads AIPerf's schema \"2.0\"", clip(v))
	}
	return nil
}

// models reads model: NAME, or models: as a list of names or of
// {name: NAME}, or as {items: [...], strategy: round_robin|random}.
func models(b *builder, c cursor) error {
	if b.has("model") {
		return pathError(c.path, "model and models both name the models: give one")
	}
	n := c.n
	if n.kind == mapNode {
		for i, k := range n.keys {
			switch snake(k) {
			case "items":
				if err := models(b, c.at(k, n.vals[i])); err != nil {
					return err
				}
			case "strategy":
				if err := b.scalar(c.at(k, n.vals[i]), "model-selection-strategy", kString); err != nil {
					return err
				}
			default:
				return unknownKey(c.path, k, []string{"items", "strategy"})
			}
		}
		return nil
	}
	items := []*node{n}
	if n.kind == seqNode {
		items = n.items
	}
	for i, it := range items {
		ic := cursor{path: fmt.Sprintf("%s[%d]", c.path, i), n: it, rank: c.rank}
		if it.kind == mapNode {
			_, name := lookup(it, "name")
			if name == nil || len(it.keys) != 1 {
				return pathError(ic.path, "want a model name, or {name: NAME}")
			}
			ic.n = name
		}
		v, err := scalarText(ic.path, ic.n)
		if err != nil {
			return err
		}
		b.add(ic, "model", v, valued)
	}
	return nil
}

// urls reads url: or urls:, one URL or a list.
func urls(b *builder, c cursor) error {
	if b.has("url") {
		return pathError(c.path, "url and urls both give the server: give one")
	}
	return repeated("url", valued)(b, c)
}

// repeated gives a repeatable flag each value of a list (or the one value).
func repeated(flag string, f form) func(*builder, cursor) error {
	return func(b *builder, c cursor) error {
		items := []*node{c.n}
		if c.n.kind == seqNode {
			items = c.n.items
		}
		for i, it := range items {
			path := c.path
			if c.n.kind == seqNode {
				path = fmt.Sprintf("%s[%d]", c.path, i)
			}
			v, err := scalarText(path, it)
			if err != nil {
				return err
			}
			b.add(c, flag, v, f)
		}
		return nil
	}
}

// headers reads a mapping of header names to values.
func headers(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want a mapping of header names to values, got a %s", c.n.describe())
	}
	for i, k := range c.n.keys {
		v, err := scalarText(c.path+"."+k, c.n.vals[i])
		if err != nil {
			return err
		}
		b.add(c, "header", k+":"+v, valued)
	}
	return nil
}

// extra reads the body fields sent with every request: each becomes
// --extra-inputs name:<JSON>, so its type survives (a string stays a
// string even when it reads as a number).
func extra(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want a mapping of body fields to values, got a %s", c.n.describe())
	}
	for i, k := range c.n.keys {
		var buf bytes.Buffer
		if err := writeJSON(&buf, c.path+"."+k, c.n.vals[i]); err != nil {
			return err
		}
		b.add(c, "extra-inputs", k+":"+buf.String(), valued)
	}
	return nil
}

// template reads AIPerf's request template, {body, response_field}: in
// llmbench it is the template endpoint type's payload_template and
// response_field extras.
func template(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want {body: TEMPLATE, response_field: FIELD}, got a %s", c.n.describe())
	}
	for i, k := range c.n.keys {
		var name string
		switch snake(k) {
		case "body":
			name = "payload_template"
		case "response_field":
			name = "response_field"
		default:
			return unknownKey(c.path, k, []string{"body", "response_field"})
		}
		v, err := scalarText(c.path+"."+k, c.n.vals[i])
		if err != nil {
			return err
		}
		b.add(c, "extra-inputs", name+":"+jsonString(v), valued)
	}
	return nil
}

// resetKVCache reads true/false or {path, timeout_seconds}.
func resetKVCache(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return b.scalar(c, "reset-kv-cache", kBool)
	}
	if err := b.set(c, "reset-kv-cache", "true", boolean); err != nil {
		return err
	}
	for i, k := range c.n.keys {
		sub := c.at(k, c.n.vals[i])
		var err error
		switch snake(k) {
		case "path":
			err = b.scalar(sub, "reset-kv-cache-path", kString)
		case "timeout_seconds":
			err = b.scalar(sub, "reset-kv-cache-timeout-seconds", kSeconds)
		default:
			err = unknownKey(c.path, k, []string{"path", "timeout_seconds"})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tokenizer reads tokenizer: NAME or the tokenizer section.
func tokenizer(b *builder, c cursor) error {
	if c.n.kind == scalarNode {
		return b.scalar(c, "tokenizer", kString)
	}
	return b.walk("benchmark.tokenizer", c.path, c.n)
}

// dataset reads the one dataset, dataset: (named "default") or the only
// entry of datasets:.
func dataset(b *builder, c cursor) error {
	if b.datasetType != "" {
		return pathError(c.path, "dataset and datasets both give the dataset: give one")
	}
	n := c.n
	if n.kind != mapNode {
		return pathError(c.path, "want a dataset's keys (type, entries, prompts, …), got a %s", n.describe())
	}
	b.datasetName = "default"
	if _, v := lookup(n, "name"); v != nil {
		name, err := scalarText(c.path+".name", v)
		if err != nil {
			return err
		}
		b.datasetName = name
	}
	_, t := lookup(n, "type")
	switch {
	case !t.isNull():
		typ, err := scalarText(c.path+".type", t)
		if err != nil {
			return err
		}
		b.datasetType = strings.ToLower(typ)
	case lookupAny(n, "path", "records"):
		b.datasetType = "file"
	case lookupAny(n, "dataset"):
		b.datasetType = "public"
	default:
		b.datasetType = "synthetic"
	}
	switch b.datasetType {
	case "synthetic", "file":
	case "public":
		if !lookupAny(n, "dataset") {
			return pathError(c.path, "a public dataset needs dataset: its name (sharegpt, …)")
		}
	default:
		return pathError(c.path+".type", "%q: use synthetic, file or public", clip(b.datasetType))
	}
	if _, p := lookup(n, "path"); !p.isNull() && lookupAny(n, "records") {
		return pathError(c.path, "path and records both give the records: give one")
	}
	return b.walk("benchmark.dataset", c.path, n)
}

func lookupAny(n *node, keys ...string) bool {
	for _, k := range keys {
		if _, v := lookup(n, k); !v.isNull() {
			return true
		}
	}
	return false
}

// datasets reads a list of datasets, of which llmbench runs one.
func datasets(b *builder, c cursor) error {
	if c.n.kind != seqNode {
		return pathError(c.path, "want a list of datasets, got a %s", c.n.describe())
	}
	switch len(c.n.items) {
	case 0:
		return pathError(c.path, "the list is empty: give one dataset")
	case 1:
	default:
		return unsupported(c.path, fmt.Sprintf("%d datasets: it runs one", len(c.n.items)))
	}
	return dataset(b, cursor{path: c.path + "[0]", n: c.n.items[0], rank: c.rank})
}

// records writes inline records to a JSONL file for --input-file.
func records(b *builder, c cursor) error {
	if c.n.kind == mapNode {
		return unsupported(c.path, "records as pools (a mapping of lists): give random_pool pools as a directory, with path")
	}
	if c.n.kind != seqNode || len(c.n.items) == 0 {
		return pathError(c.path, "want a list of records, one per line of the JSONL file")
	}
	var buf bytes.Buffer
	for i, it := range c.n.items {
		path := fmt.Sprintf("%s[%d]", c.path, i)
		if it.kind != mapNode {
			return pathError(path, "want a record's fields ({text: ...}), got a %s", it.describe())
		}
		if err := writeJSON(&buf, path, it); err != nil {
			return err
		}
		buf.WriteByte('\n')
	}
	file, err := b.inline(buf.Bytes())
	if err != nil {
		return pathError(c.path, "%v", err)
	}
	return b.set(c, "input-file", file, valued)
}

// dist reads a length or a count given as a number or {mean, stddev}.
func dist(meanFlag, stddevFlag string) func(*builder, cursor) error {
	return func(b *builder, c cursor) error {
		if c.n.kind != mapNode {
			return b.scalar(c, meanFlag, kFloat)
		}
		for i, k := range c.n.keys {
			sub := c.at(k, c.n.vals[i])
			if sub.n.isNull() {
				continue
			}
			var err error
			switch snake(k) {
			case "mean":
				err = b.scalar(sub, meanFlag, kFloat)
			case "stddev":
				err = b.scalar(sub, stddevFlag, kFloat)
			default:
				err = unknownKey(c.path, k, []string{"mean", "stddev"})
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// commaList reads a list into one comma-separated value.
func commaList(flag string, read func(string, *node) (string, error)) func(*builder, cursor) error {
	return func(b *builder, c cursor) error {
		items := []*node{c.n}
		if c.n.kind == seqNode {
			items = c.n.items
		}
		vs := make([]string, len(items))
		for i, it := range items {
			v, err := read(fmt.Sprintf("%s[%d]", c.path, i), it)
			if err != nil {
				return err
			}
			vs[i] = v
		}
		return b.set(c, flag, strings.Join(vs, ","), valued)
	}
}

// slos reads {metric_tag: threshold} into --goodput.
func slos(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want a mapping of metric tags to thresholds, got a %s", c.n.describe())
	}
	parts := make([]string, len(c.n.keys))
	for i, k := range c.n.keys {
		v, err := floatText(c.path+"."+k, c.n.vals[i])
		if err != nil {
			return err
		}
		parts[i] = k + ":" + v
	}
	return b.set(c, "goodput", strings.Join(parts, " "), valued)
}

// exportRecords reads artifacts.records: false (no per-request file) or a
// list of formats, of which llmbench writes jsonl.
func exportRecords(b *builder, c cursor) error {
	if c.n.kind == scalarNode {
		if x, err := boolValue(c.path, c.n); err == nil && !x {
			return b.set(c, "export-level", "summary", valued)
		}
	}
	return formats(c, "jsonl")
}

// exportSummary reads artifacts.summary: llmbench always writes the JSON.
func exportSummary(_ *builder, c cursor) error {
	if c.n.kind == scalarNode {
		if x, err := boolValue(c.path, c.n); err == nil && !x {
			return unsupported(c.path, "the summary JSON is always written")
		}
	}
	return formats(c, "json")
}

// formats checks a list of export formats holds only the one written.
func formats(c cursor, only string) error {
	if c.n.kind != seqNode {
		return pathError(c.path, "want false or a list of formats ([%s])", only)
	}
	for i, it := range c.n.items {
		v, err := scalarText(fmt.Sprintf("%s[%d]", c.path, i), it)
		if err != nil {
			return err
		}
		if v != only {
			return unsupported(fmt.Sprintf("%s[%d]", c.path, i), fmt.Sprintf("%q: it writes %s", v, only))
		}
	}
	return nil
}

// disabledUnlessTrue reads enabled: false as the flag that turns it off.
func disabledUnlessTrue(flag string) func(*builder, cursor) error {
	return func(b *builder, c cursor) error {
		on, err := boolValue(c.path, c.n)
		if err != nil || on {
			return err
		}
		return b.set(c, flag, "true", boolean)
	}
}

// gpuMode reads gpu_telemetry.mode: AIPerf's live dashboard is asked of
// --gpu-telemetry as "dashboard".
func gpuMode(b *builder, c cursor) error {
	v, err := scalarText(c.path, c.n)
	if err != nil {
		return err
	}
	switch strings.ToLower(v) {
	case "summary":
		return nil
	case "realtime_dashboard", "dashboard":
		b.add(c, "gpu-telemetry", "dashboard", inlined)
		return nil
	}
	return pathError(c.path, "%q: use summary or realtime_dashboard", clip(v))
}

// mustBe accepts only the value a key must have in llmbench.
func mustBe(want, why string) func(*builder, cursor) error {
	return func(_ *builder, c cursor) error {
		x, err := boolValue(c.path, c.n)
		if err != nil {
			return err
		}
		if strconv.FormatBool(x) != want {
			return unsupported(c.path, why)
		}
		return nil
	}
}

// writeJSON writes a value as JSON, keeping its keys' order.
func writeJSON(buf *bytes.Buffer, path string, n *node) error {
	switch n.kind {
	case mapNode:
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(jsonString(k))
			buf.WriteByte(':')
			if err := writeJSON(buf, path+"."+k, n.vals[i]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case seqNode:
		buf.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, fmt.Sprintf("%s[%d]", path, i), it); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		switch n.tag {
		case "null":
			buf.WriteString("null")
		case "bool":
			x, err := boolValue(path, n)
			if err != nil {
				return err
			}
			buf.WriteString(strconv.FormatBool(x))
		case "int", "float":
			f, ok := parseFloat(n.value)
			if !ok {
				return pathError(path, "%q is not a number JSON can hold", clip(n.value))
			}
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.value, "_", ""), 0, 64); err == nil {
				buf.WriteString(strconv.FormatInt(i, 10))
			} else if f == math.Trunc(f) && n.tag == "float" && math.Abs(f) < 1e15 {
				buf.WriteString(strconv.FormatFloat(f, 'f', 1, 64)) // 1.0 stays a float
			} else {
				buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		default:
			buf.WriteString(jsonString(n.value))
		}
	}
	return nil
}

// jsonString quotes s as JSON (strconv.Quote writes Go escapes JSON does
// not have, such as \x00), leaving <, > and & as they are.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

var errNoBenchmark = errors.New("benchmark: missing: the workload (model, endpoint, dataset, phases) goes under the key benchmark")
