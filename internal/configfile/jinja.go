package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gonja "github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// skipTemplates are keys whose values are Jinja templates for the server's
// request bodies, rendered per request, not when the file is read (as
// AIPerf skips them).
var skipTemplates = map[string]bool{"template": true, "body": true, "payload_template": true}

// renderTemplates renders every {{ expression }} in the file's string
// values over the variables block, after the environment substitution (as
// AIPerf orders them). Variables may use one another in any order. A
// rendered value that reads as a boolean or a number becomes one.
func renderTemplates(root *node) error {
	vars := map[string]any{}
	if v := root.get("variables"); !v.isNull() {
		if v.kind != mapNode {
			return pathError("variables", "want a mapping of names to values, got a %s", v.describe())
		}
		if err := resolveVariables(v, vars); err != nil {
			return err
		}
	}
	for i, k := range root.keys {
		if k == "variables" {
			continue
		}
		if err := render(root.vals[i], k, vars); err != nil {
			return err
		}
	}
	return nil
}

// resolveVariables renders the variables in the order their references
// need: each round renders those whose names are all defined, until none
// is left, or a round makes no progress (a cycle, or a name nowhere).
func resolveVariables(v *node, vars map[string]any) error {
	pending := slices.Clone(v.keys)
	for len(pending) > 0 {
		var left []string
		var lastErr error
		for _, name := range pending {
			val := v.get(name).clone()
			if err := render(val, "variables."+name, vars); err != nil {
				if u := undefinedName(err); u != "" && slices.Contains(pending, u) {
					left, lastErr = append(left, name), err
					continue
				}
				return err
			}
			vars[name] = val.goValue()
		}
		if len(left) == len(pending) {
			if len(left) == 1 {
				return lastErr
			}
			return pathError("variables", "%s refer to each other in a circle", strings.Join(left, ", "))
		}
		pending = left
	}
	return nil
}

// render renders the templates in n's strings in place.
func render(n *node, path string, vars map[string]any) error {
	switch n.kind {
	case mapNode:
		for i, k := range n.keys {
			if skipTemplates[k] {
				continue
			}
			if err := render(n.vals[i], path+"."+k, vars); err != nil {
				return err
			}
		}
	case seqNode:
		for i, it := range n.items {
			if err := render(it, fmt.Sprintf("%s[%d]", path, i), vars); err != nil {
				return err
			}
		}
	default:
		if n.tag != "str" || !strings.Contains(n.value, "{{") || !strings.Contains(n.value, "}}") {
			return nil
		}
		if strings.Contains(n.value, "{%") {
			return pathError(path, "%q: only {{ expressions }} are rendered, not {%% statements %%}", clip(n.value))
		}
		out, err := renderString(n.value, vars)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, clip(n.value), err)
		}
		n.value, n.tag = out, coercedTag(out)
	}
	return nil
}

// renderString renders one template with strict undefined names, from
// memory only (no {% include %} reads a file).
func renderString(src string, vars map[string]any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("the template broke the renderer: %v", r)
		}
	}()
	loader, err := loaders.NewMemoryLoader(map[string]string{"/value": src})
	if err != nil {
		return "", err
	}
	cfg := config.New()
	cfg.StrictUndefined = true
	t, err := exec.NewTemplate("/value", cfg, loader, gonja.DefaultEnvironment)
	if err != nil {
		return "", shorten(err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, exec.NewContext(vars)); err != nil {
		return "", shorten(err)
	}
	return b.String(), nil
}

var undefinedRe = regexp.MustCompile(`Unable to evaluate name "([^"]+)"`)

// undefinedError is a template's use of a name no variable has.
type undefinedError struct{ name string }

func (e *undefinedError) Error() string {
	return e.name + " is not defined (define it under variables:)"
}

// undefinedName is the name an error says is undefined, "" otherwise.
func undefinedName(err error) string {
	if u := (*undefinedError)(nil); errors.As(err, &u) {
		return u.name
	}
	return ""
}

// shorten turns gonja's nested messages into one clause.
func shorten(err error) error {
	if m := undefinedRe.FindStringSubmatch(err.Error()); m != nil {
		return &undefinedError{m[1]}
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "unable to execute template: ")
	return fmt.Errorf("%s", strings.ReplaceAll(msg, "\n", " "))
}

// coercedTag is the type a rendered value reads as, as AIPerf coerces it:
// true/false a boolean, then an integer, then a float, else a string.
func coercedTag(s string) string {
	switch strings.ToLower(s) {
	case "true", "false":
		return "bool"
	}
	t := strings.TrimSpace(s)
	if _, err := strconv.ParseInt(t, 10, 64); err == nil {
		return "int"
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return "float"
	}
	return "str"
}

// goValue is n as a template sees it.
func (n *node) goValue() any {
	switch n.kind {
	case mapNode:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = n.vals[i].goValue()
		}
		return m
	case seqNode:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = it.goValue()
		}
		return s
	}
	switch n.tag {
	case "null":
		return nil
	case "bool":
		b, _ := strconv.ParseBool(strings.ToLower(n.value))
		return b
	case "int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.value, "_", ""), 0, 64); err == nil {
			return int(i)
		}
	case "float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.value, "_", ""), 64); err == nil {
			return f
		}
	}
	return n.value
}

// clone is a deep copy of n.
func (n *node) clone() *node {
	c := *n
	c.keys = slices.Clone(n.keys)
	c.vals = make([]*node, len(n.vals))
	for i, v := range n.vals {
		c.vals[i] = v.clone()
	}
	c.items = make([]*node, len(n.items))
	for i, it := range n.items {
		c.items[i] = it.clone()
	}
	return &c
}
