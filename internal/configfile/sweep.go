package configfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/config"
)

// envelope reads the file's root: the benchmark body first, since the
// sweep's paths name its phases and dataset, then the envelope's keys.
func (b *builder) envelope(root *node) error {
	raw, body := lookup(root, "benchmark")
	if body.isNull() {
		return errNoBenchmark
	}
	if err := b.walk("benchmark", raw, body); err != nil {
		return err
	}
	if err := b.walk("", "", root); err != nil {
		return err
	}
	if b.ratePhase != "" && !b.has("request-rate") {
		return pathError(b.ratePhase, "a %s phase needs rate: (requests per second)", b.profilingType)
	}
	return nil
}

// phaseSweeps are the phase fields llmbench sweeps, by AIPerf's name (also
// the bare names a sweep parameter may use), and the flags they are.
var phaseSweeps = map[string]string{
	"concurrency": "concurrency",
	"rate":        "request-rate",
	"requests":    "request-count",
	"duration":    "benchmark-duration",
	"sessions":    "num-dataset-entries",
}

// phaseSugar are AIPerf's other bare names, fields llmbench has no comma
// list for.
var phaseSugar = []string{"prefill_concurrency", "users", "smoothness", "grace_period", "concurrency_ramp", "prefill_ramp", "rate_ramp"}

// datasetSweeps are the dataset fields llmbench sweeps, after
// datasets.<name>.
var datasetSweeps = map[string]string{
	"prompts.isl":        "synthetic-input-tokens-mean",
	"prompts.isl.mean":   "synthetic-input-tokens-mean",
	"prompts.isl.stddev": "synthetic-input-tokens-stddev",
	"prompts.osl":        "output-tokens-mean",
	"prompts.osl.mean":   "output-tokens-mean",
	"prompts.osl.stddev": "output-tokens-stddev",
	"isl":                "synthetic-input-tokens-mean",
	"osl":                "output-tokens-mean",
	"turns":              "conversation-turn-mean",
	"turns.mean":         "conversation-turn-mean",
	"entries":            "num-dataset-entries",
}

const sweptList = "llmbench sweeps a phase's concurrency, rate, requests, duration and sessions, and a dataset's prompts.isl, prompts.osl (mean, stddev), turns.mean and entries"

// sweepBlock reads sweep: its parameters become comma lists of the flags
// they name, replacing the body's values, as AIPerf's sweep overrides them.
func sweepBlock(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want {type, parameters}, got a %s", c.n.describe())
	}
	typ := "grid"
	if raw, t := lookup(c.n, "type"); !t.isNull() {
		s, err := scalarText(c.path+"."+raw, t)
		if err != nil {
			return err
		}
		typ = strings.ToLower(s)
		switch typ {
		case "grid", "zip":
		case "scenarios", "sobol", "latin_hypercube", "adaptive_search":
			return unsupported(c.path+"."+raw, fmt.Sprintf("%s sweeps: it sweeps grid or zip", typ))
		default:
			return pathError(c.path+"."+raw, "%q: use grid or zip", clip(s))
		}
	}
	if err := b.walk("sweep", c.path, c.n); err != nil {
		return err
	}
	raw, params := lookup(c.n, "parameters")
	if params.isNull() {
		return pathError(c.path, "give parameters: the paths to sweep, each with its list of values")
	}
	ppath := c.path + "." + raw
	if params.kind != mapNode || len(params.keys) == 0 {
		return pathError(ppath, "want a mapping of paths to lists of values")
	}
	sw := &Sweep{Type: typ}
	by := map[string]string{}
	for i, key := range params.keys {
		path := ppath + "." + key
		flag, err := b.sweepFlag(path, key)
		if err != nil {
			return err
		}
		if prev, ok := by[flag]; ok {
			return pathError(path, "sweeps the same as %s (--%s): give one", prev, flag)
		}
		by[flag] = key
		if flag == "request-rate" && b.profilingType != "" && !isRatePhase(b.profilingType) {
			return pathError(path, "sweeps the rate, but the profiling phase is of type %s: give it type poisson, constant or gamma", b.profilingType)
		}
		vals, err := sweepValues(path, flag, params.vals[i])
		if err != nil {
			return err
		}
		sw.Params = append(sw.Params, SweptParam{Key: key, Flag: flag, Values: vals})
		b.replace(cursor{path: path, rank: c.rank}, flag, strings.Join(vals, ","))
	}
	if typ == "zip" {
		if err := b.set(cursor{path: c.path + ".type", rank: c.rank}, "sweep-type", "zip", valued); err != nil {
			return err
		}
	}
	b.sweep = sw
	return nil
}

// sweepValues reads a parameter's values as its flag takes them.
func sweepValues(path, flag string, n *node) ([]string, error) {
	items := []*node{n}
	if n.kind == seqNode {
		items = n.items
	}
	if len(items) == 0 {
		return nil, pathError(path, "the list of values is empty")
	}
	read := floatText
	if sp, ok := config.SweepParamOf(flag); ok && sp.Int {
		read = intText
	}
	if flag == "benchmark-duration" {
		read = secondsText
	}
	vals := make([]string, len(items))
	for i, it := range items {
		v, err := read(fmt.Sprintf("%s[%d]", path, i), it)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// sweepFlag resolves a sweep parameter's path as AIPerf does: a bare name
// is the profiling phase's field; phases.<seg> is a phase by list index,
// by name, or "profiling" for the one profiling phase; datasets.<seg> is
// the dataset by name or index.
func (b *builder) sweepFlag(path, key string) (string, error) {
	segs := strings.Split(key, ".")
	for i, s := range segs {
		if i != 1 { // the second segment names a phase or a dataset, as written
			segs[i] = snake(s)
		}
	}
	if len(segs) == 1 {
		if f, ok := phaseSweeps[segs[0]]; ok {
			return f, nil
		}
		if slices.Contains(phaseSugar, segs[0]) {
			return "", unsupported(path, sweptList)
		}
		return "", unknownPath(path, segs[0], append(keys(phaseSweeps), "phases", "datasets"))
	}
	switch segs[0] {
	case "phases":
		if len(segs) < 3 {
			return "", pathError(path, "want phases.<phase>.<field>")
		}
		seg, field := segs[1], strings.Join(segs[2:], ".")
		switch seg {
		case "profiling", b.profilingName, strconv.Itoa(b.profilingIndex):
		case b.warmupName, strconv.Itoa(b.warmupIndex):
			return "", unsupported(path, "sweeping the warm-up phase: "+sweptList)
		default:
			known := []string{"profiling", b.profilingName}
			if b.warmupName != "" {
				known = append(known, b.warmupName)
			}
			return "", pathError(path, "no phase %q here%s", seg, hint(seg, known))
		}
		if f, ok := phaseSweeps[field]; ok {
			return f, nil
		}
		if slices.Contains(phaseSugar, field) || table().byPath["benchmark.phases.profiling."+field] != nil {
			return "", unsupported(path, sweptList)
		}
		return "", unknownPath(path, field, keys(phaseSweeps))
	case "datasets":
		if len(segs) < 3 {
			return "", pathError(path, "want datasets.<dataset>.<field>")
		}
		name := b.datasetName
		if name == "" {
			name = "default" // no dataset given: llmbench's synthetic one, by the shorthand's name
		}
		if segs[1] != name && segs[1] != "0" {
			return "", pathError(path, "no dataset %q here%s", segs[1], hint(segs[1], []string{name}))
		}
		field := strings.Join(segs[2:], ".")
		if f, ok := datasetSweeps[field]; ok {
			return f, nil
		}
		if table().byPath["benchmark.dataset."+field] != nil || table().sections["benchmark.dataset."+field] {
			return "", unsupported(path, sweptList)
		}
		return "", unknownPath(path, field, keys(datasetSweeps))
	}
	return "", unknownPath(path, segs[0], []string{"phases", "datasets"})
}

// unknownPath refuses a sweep path that names nothing.
func unknownPath(path, seg string, known []string) error {
	return pathError(path, "%q names no field llmbench sweeps%s", seg, hint(seg, known))
}

// hint is " (did you mean X?)" for the nearest known name, or the list.
func hint(s string, known []string) string {
	if m := nearest(s, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	k := slices.Clone(known)
	slices.Sort(k)
	return " (known: " + strings.Join(slices.Compact(k), ", ") + ")"
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
