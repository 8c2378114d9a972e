package configfile

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// node is a YAML value with its keys in the file's order.
type node struct {
	kind  nodeKind
	tag   string // a scalar's: str, int, float, bool or null
	value string // a scalar's text
	keys  []string
	vals  []*node // a mapping's values, by keys
	items []*node // a sequence's
	line  int
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	mapNode
	seqNode
)

// maxNodes bounds a file's values once its aliases are expanded, against
// the "billion laughs" (aliases of aliases that multiply).
const maxNodes = 1 << 20

// decode parses the YAML into a tree whose root is a mapping.
func decode(data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errors.New("the file is empty: give schemaVersion: \"2.0\" and a benchmark: section")
	}
	budget := maxNodes
	root, err := convert(doc.Content[0], &budget, 0)
	if err != nil {
		return nil, err
	}
	if root.kind != mapNode {
		return nil, errors.New("the file must be a mapping of keys (schemaVersion, benchmark, …), not a " + root.describe())
	}
	return root, nil
}

// convert turns a yaml.Node into a node, expanding aliases and merge keys.
func convert(n *yaml.Node, budget *int, depth int) (*node, error) {
	if *budget--; *budget < 0 {
		return nil, errors.New("the file expands to more than a million values (aliases of aliases?)")
	}
	if depth > 100 {
		return nil, fmt.Errorf("line %d: nested more than 100 levels deep", n.Line)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: an alias to nothing", n.Line)
		}
		return convert(n.Alias, budget, depth+1)
	case yaml.ScalarNode:
		tag := strings.TrimPrefix(n.ShortTag(), "!!")
		switch tag {
		case "str", "int", "float", "bool", "null":
		case "timestamp", "binary":
			tag = "str"
		default:
			return nil, fmt.Errorf("line %d: the tag %s is not one llmbench reads", n.Line, n.Tag)
		}
		return &node{kind: scalarNode, tag: tag, value: n.Value, line: n.Line}, nil
	case yaml.SequenceNode:
		out := &node{kind: seqNode, line: n.Line}
		for _, c := range n.Content {
			v, err := convert(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := &node{kind: mapNode, line: n.Line}
		var merged []*node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a plain name, not a %s", k.Line, kindName(k.Kind))
			}
			val, err := convert(v, budget, depth+1)
			if err != nil {
				return nil, err
			}
			if k.ShortTag() == "!!merge" {
				merged = append(merged, val)
				continue
			}
			if out.get(k.Value) != nil {
				return nil, fmt.Errorf("line %d: the key %q is given twice", k.Line, k.Value)
			}
			out.keys = append(out.keys, k.Value)
			out.vals = append(out.vals, val)
		}
		// Merge keys (<<: *base) add the keys the mapping does not have.
		for _, m := range merged {
			srcs := []*node{m}
			if m.kind == seqNode {
				srcs = m.items
			}
			for _, s := range srcs {
				if s.kind != mapNode {
					return nil, fmt.Errorf("line %d: << merges mappings, not a %s", m.line, s.describe())
				}
				for i, k := range s.keys {
					if out.get(k) == nil {
						out.keys = append(out.keys, k)
						out.vals = append(out.vals, s.vals[i])
					}
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a YAML value of an unknown kind", n.Line)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// get is the value of key in a mapping, nil when it has none.
func (n *node) get(key string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isNull reports whether n is absent or null: AIPerf reads `key: null` as
// the key left out.
func (n *node) isNull() bool { return n == nil || n.kind == scalarNode && n.tag == "null" }

// describe names n's kind for messages.
func (n *node) describe() string {
	switch {
	case n.kind == mapNode:
		return "mapping"
	case n.kind == seqNode:
		return "list"
	case n.tag == "null":
		return "null"
	}
	return fmt.Sprintf("value %q", clip(n.value))
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// envVar matches ${NAME} and ${NAME:default}, AIPerf's forms.
var envVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}`)

// substituteEnv replaces ${VAR} and ${VAR:default} in every string value
// (not in keys). An unset variable without a default is an error naming
// it. The result stays a string; a typed key reads a number or a boolean
// from it as from any string.
func substituteEnv(n *node, path string, getenv func(string) (string, bool)) error {
	switch n.kind {
	case mapNode:
		for i, k := range n.keys {
			if err := substituteEnv(n.vals[i], join(path, k), getenv); err != nil {
				return err
			}
		}
	case seqNode:
		for i, it := range n.items {
			if err := substituteEnv(it, fmt.Sprintf("%s[%d]", path, i), getenv); err != nil {
				return err
			}
		}
	default:
		if n.tag != "str" || !strings.Contains(n.value, "${") {
			return nil
		}
		var missing string
		n.value = envVar.ReplaceAllStringFunc(n.value, func(m string) string {
			sub := envVar.FindStringSubmatch(m)
			if v, ok := getenv(sub[1]); ok {
				return v
			}
			if strings.Contains(m, ":") {
				return sub[2]
			}
			if missing == "" {
				missing = sub[1]
			}
			return m
		})
		if missing != "" {
			return pathError(path, "the environment variable %s is not set: set it, or give a default as ${%s:value}", missing, missing)
		}
	}
	return nil
}

// join appends a key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// scalarText is the text of a scalar value; a mapping or a list is an
// error.
func scalarText(path string, n *node) (string, error) {
	if n.kind != scalarNode {
		return "", pathError(path, "want a single value, got a %s", n.describe())
	}
	return n.value, nil
}

// intText reads a whole number: an integer, or a number with no fraction
// ("8.0", as Pydantic takes it).
func intText(path string, n *node) (string, error) {
	s, err := scalarText(path, n)
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	if i, err := strconv.ParseInt(t, 0, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), nil
	}
	return "", pathError(path, "%q is not a whole number", clip(s))
}

// floatText reads a finite number.
func floatText(path string, n *node) (string, error) {
	s, err := scalarText(path, n)
	if err != nil {
		return "", err
	}
	f, ok := parseFloat(s)
	if !ok {
		return "", pathError(path, "%q is not a number", clip(s))
	}
	return formatFloat(f), nil
}

func parseFloat(s string) (float64, bool) {
	t := strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	if i, err := strconv.ParseInt(t, 0, 64); err == nil {
		return float64(i), true
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// formatFloat writes a number as llmbench's flags take it: 30.0 as 30.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// boolValue reads a boolean the way Pydantic does: true/false, yes/no,
// on/off, 1/0, t/f, y/n.
func boolValue(path string, n *node) (bool, error) {
	s, err := scalarText(path, n)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1", "t", "y":
		return true, nil
	case "false", "no", "off", "0", "f", "n":
		return false, nil
	}
	return false, pathError(path, "%q is not true or false", clip(s))
}

// duration matches AIPerf's duration strings: 30, "30s", "5m", "2h",
// "5 min", "1hr".
var duration = regexp.MustCompile(`(?i)^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|hour)?$`)

// secondsText reads a duration in seconds: a number, or a string with a
// unit as AIPerf takes it.
func secondsText(path string, n *node) (string, error) {
	s, err := scalarText(path, n)
	if err != nil {
		return "", err
	}
	if f, ok := parseFloat(s); ok {
		return formatFloat(f), nil
	}
	m := duration.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", pathError(path, "%q is not a duration: give seconds, or a number with s, m or h (\"30s\", \"5m\", \"2h\")", clip(s))
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(f, 0) {
		return "", pathError(path, "%q is not a duration", clip(s))
	}
	switch strings.ToLower(m[2]) {
	case "m", "min":
		f *= 60
	case "h", "hr", "hour":
		f *= 3600
	}
	return formatFloat(f), nil
}
