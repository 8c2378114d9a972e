package configfile

import (
	"slices"
	"strconv"
	"strings"
)

// form is how a flag is written.
type form int

const (
	valued  form = iota // --name value
	boolean             // --name, or --name=false
	inlined             // --name=value: a flag package takes as a boolean (--gpu-telemetry)
)

// emission is one flag the file gives.
type emission struct {
	rank  int // the table row's position: flags are written in table order
	seq   int
	flag  string
	value string
	form  form
	path  string // the key it came from, for messages
	multi bool   // a repeatable flag (--header, --url)
}

// builder collects the flags of a file as its keys are read.
type builder struct {
	out    []emission
	sweep  *Sweep
	inline func([]byte) (string, error)

	// What the section being read is, for the keys that belong to one
	// kind only (a file dataset's path, a gamma phase's smoothness).
	datasetType, datasetName string
	phaseType                string
	// The phases, for sweep paths: names and list positions.
	profilingName, warmupName   string
	profilingIndex, warmupIndex int
	// ratePhase is the rate phase's path, which must have a rate (from
	// the body or the sweep).
	ratePhase     string
	profilingType string
}

// cursor is a value of the file at a path, read for the table row of rank.
type cursor struct {
	path string
	n    *node
	rank int
}

// at is the cursor of the key under c.
func (c cursor) at(key string, n *node) cursor {
	return cursor{path: c.path + "." + key, n: n, rank: c.rank}
}

// set gives flag a value; the same flag given again by another key must
// agree.
func (b *builder) set(c cursor, flag, value string, f form) error {
	for _, e := range b.out {
		if e.flag == flag && !e.multi {
			if e.value == value {
				return nil
			}
			return pathError(c.path, "gives --%s %s, but %s gives it %s: keep one", flag, value, e.path, e.value)
		}
	}
	b.out = append(b.out, emission{rank: c.rank, seq: len(b.out), flag: flag, value: value, form: f, path: c.path})
	return nil
}

// add gives a repeatable flag one more value.
func (b *builder) add(c cursor, flag, value string, f form) {
	b.out = append(b.out, emission{rank: c.rank, seq: len(b.out), flag: flag, value: value, form: f, path: c.path, multi: true})
}

// replace gives flag a value whatever the body gave it: a sweep's list
// overrides the body's value, as in AIPerf.
func (b *builder) replace(c cursor, flag, value string) {
	rank := c.rank
	for _, r := range table().rows {
		if r.flag == flag {
			rank = r.rank // where the body's key would have put it
			break
		}
	}
	b.out = slices.DeleteFunc(b.out, func(e emission) bool {
		if e.flag == flag {
			rank = e.rank
			return true
		}
		return false
	})
	b.out = append(b.out, emission{rank: rank, seq: len(b.out), flag: flag, value: value, form: valued, path: c.path})
}

// has reports whether a key gave flag.
func (b *builder) has(flag string) bool {
	return slices.ContainsFunc(b.out, func(e emission) bool { return e.flag == flag })
}

// args writes the flags in table order.
func (b *builder) args() []string {
	es := slices.Clone(b.out)
	slices.SortStableFunc(es, func(x, y emission) int {
		if x.rank != y.rank {
			return x.rank - y.rank
		}
		return x.seq - y.seq
	})
	var out []string
	for _, e := range es {
		switch {
		case e.form == boolean && e.value == "true":
			out = append(out, "--"+e.flag)
		case e.form != valued || strings.HasPrefix(e.value, "-"):
			// A value that starts with "-" would read as a flag.
			out = append(out, "--"+e.flag+"="+e.value)
		default:
			out = append(out, "--"+e.flag, e.value)
		}
	}
	return out
}

// walk reads the mapping n, found at path, against the table rows under
// pattern (the key's place in the schema: benchmark.dataset for a
// dataset given as datasets[0]). Each key is applied by its row, or read
// as a section when rows lie under it; any other key is refused with the
// nearest known one.
func (b *builder) walk(pattern, path string, n *node) error {
	if n.kind != mapNode {
		return pathError(path, "want a mapping of keys, got a %s", n.describe())
	}
	seen := map[string]string{}
	for i, raw := range n.keys {
		key := snake(raw)
		if prev, dup := seen[key]; dup {
			return pathError(join(path, raw), "the same key as %s, given twice", prev)
		}
		seen[key] = raw
		full, at := join(pattern, key), join(path, raw)
		if r, ok := table().byPath[full]; ok {
			if err := b.apply(r, cursor{path: at, n: n.vals[i], rank: r.rank}); err != nil {
				return err
			}
			continue
		}
		if table().sections[full] {
			if n.vals[i].isNull() {
				continue
			}
			if err := b.walk(full, at, n.vals[i]); err != nil {
				return err
			}
			continue
		}
		return unknownKey(path, raw, table().keysUnder(pattern))
	}
	return nil
}

// lookup finds key (snake_case) in a mapping written either way.
func lookup(n *node, key string) (raw string, v *node) {
	if n == nil || n.kind != mapNode {
		return "", nil
	}
	for i, k := range n.keys {
		if snake(k) == key {
			return k, n.vals[i]
		}
	}
	return "", nil
}

// apply reads one key by its row.
func (b *builder) apply(r *row, c cursor) error {
	if c.n.isNull() || r.skip {
		return nil
	}
	if r.refuse != "" || r.unsupported {
		if r.def != "" && isDefault(c.n, r.def) {
			return nil
		}
		return unsupported(c.path, r.refuse)
	}
	if r.only != "" {
		if err := b.allowed(r.only, c.path); err != nil {
			return err
		}
	}
	if r.do != nil {
		return r.do(b, c)
	}
	return b.scalar(c, r.flag, r.kind)
}

// scalar sets flag from a one-value key of kind k.
func (b *builder) scalar(c cursor, flag string, k kind) error {
	var v string
	var err error
	f := valued
	switch k {
	case kString:
		v, err = scalarText(c.path, c.n)
	case kInt:
		v, err = intText(c.path, c.n)
	case kFloat:
		v, err = floatText(c.path, c.n)
	case kSeconds:
		v, err = secondsText(c.path, c.n)
	case kBool, kTrueOnly:
		var x bool
		x, err = boolValue(c.path, c.n)
		if err == nil && !x && k == kTrueOnly {
			return nil // the flag's default; given, it would count as set
		}
		v, f = strconv.FormatBool(x), boolean
	}
	if err != nil {
		return err
	}
	return b.set(c, flag, v, f)
}

// allowed checks that a key belongs to the dataset or phase being read.
func (b *builder) allowed(only, path string) error {
	switch only {
	case "synthetic", "file", "public", "file|public":
		if !slices.Contains(strings.Split(only, "|"), b.datasetType) {
			return pathError(path, "belongs to a %s dataset, and this one is %s", strings.ReplaceAll(only, "|", " or "), b.datasetType)
		}
	case "rate":
		if !isRatePhase(b.phaseType) {
			return pathError(path, "belongs to a rate phase (type poisson, constant or gamma), and this one is %s", b.phaseType)
		}
	case "gamma", "fixed_schedule":
		if b.phaseType != only {
			return pathError(path, "belongs to a %s phase, and this one is %s", only, b.phaseType)
		}
	}
	return nil
}

// isDefault reports whether a refused key holds AIPerf's default, which
// asks for nothing llmbench lacks.
func isDefault(n *node, def string) bool {
	switch {
	case def == "[]":
		return n.kind == seqNode && len(n.items) == 0 || n.kind == mapNode && len(n.keys) == 0
	case n.kind != scalarNode:
		return false
	case def == "true" || def == "false":
		x, err := boolValue("", n)
		return err == nil && strconv.FormatBool(x) == def
	}
	if x, ok := parseFloat(n.value); ok {
		y, ok := parseFloat(def)
		return ok && x == y
	}
	return strings.EqualFold(strings.TrimSpace(n.value), def)
}
