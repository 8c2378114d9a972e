package configfile

import (
	"fmt"
	"regexp"
	"strings"
)

// phaseName is AIPerf's rule for a phase's name.
var phaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// phases reads benchmark.phases: a mapping is the one profiling phase; a
// list holds the profiling phase and at most one warm-up before it, which
// is all llmbench runs.
func phases(b *builder, c cursor) error {
	b.profilingIndex, b.warmupIndex = -1, -1
	switch c.n.kind {
	case mapNode:
		b.profilingName, b.profilingIndex = "profiling", 0
		return b.phase(c.path, c.n, "profiling")
	case seqNode:
	default:
		return pathError(c.path, "want a phase's keys, or a list of phases, got a %s", c.n.describe())
	}
	type entry struct {
		name, path string
		n          *node
		i          int
	}
	var prof, warm []entry
	seen := map[string]bool{}
	for i, it := range c.n.items {
		path := fmt.Sprintf("%s[%d]", c.path, i)
		if it.kind != mapNode {
			return pathError(path, "want a phase's keys (name, type, concurrency, …), got a %s", it.describe())
		}
		_, nv := lookup(it, "name")
		if nv.isNull() {
			return pathError(path, "give the phase a name: warmup, profiling, or a name of your own with kind: warmup or profiling")
		}
		name, err := scalarText(path+".name", nv)
		if err != nil {
			return err
		}
		if !phaseName.MatchString(name) {
			return pathError(path+".name", "%q: a phase's name is letters, digits, _ and -, starting with a letter or _", clip(name))
		}
		if seen[strings.ToLower(name)] {
			return pathError(path+".name", "%q names two phases", name)
		}
		seen[strings.ToLower(name)] = true
		kind := ""
		if _, kv := lookup(it, "kind"); !kv.isNull() {
			if kind, err = scalarText(path+".kind", kv); err != nil {
				return err
			}
		}
		switch {
		case kind == "" && (name == "warmup" || name == "profiling"):
			kind = name
		case kind == "":
			return pathError(path, "the phase %q needs kind: warmup or profiling", name)
		case (name == "warmup" || name == "profiling") && kind != name:
			return pathError(path+".kind", "the phase named %s is of kind %s", name, name)
		}
		switch kind {
		case "profiling":
			prof = append(prof, entry{name, path, it, i})
		case "warmup":
			warm = append(warm, entry{name, path, it, i})
		default:
			return pathError(path+".kind", "%q: use warmup or profiling", clip(kind))
		}
	}
	switch {
	case len(prof) == 0:
		return pathError(c.path, "no profiling phase: give one (name: profiling)")
	case len(prof) > 1:
		names := make([]string, len(prof))
		for i, p := range prof {
			names[i] = p.name
		}
		return unsupported(c.path, fmt.Sprintf("%d profiling phases (%s): it runs one", len(prof), strings.Join(names, ", ")))
	case len(warm) > 1:
		return unsupported(c.path, fmt.Sprintf("%d warm-up phases: it runs one, before the profiling phase", len(warm)))
	case len(warm) == 1 && warm[0].i > prof[0].i:
		return unsupported(warm[0].path, "a warm-up after the profiling phase: it warms up first")
	}
	b.profilingName, b.profilingIndex = prof[0].name, prof[0].i
	// The profiling phase first: a warm-up's shape is read against it.
	if err := b.phase(prof[0].path, prof[0].n, "profiling"); err != nil {
		return err
	}
	if len(warm) == 1 {
		b.warmupName, b.warmupIndex = warm[0].name, warm[0].i
		return b.phase(warm[0].path, warm[0].n, "warmup")
	}
	return nil
}

// phase reads one phase of kind warmup or profiling. A warm-up takes the
// profiling phase's value of what it does not give (llmbench's rule, and
// AIPerf's for its --warmup-* flags), its type too.
func (b *builder) phase(path string, n *node, kind string) error {
	typ := "concurrency"
	if kind == "warmup" && b.profilingType != "" && b.profilingType != "fixed_schedule" {
		typ = b.profilingType
	}
	if _, t := lookup(n, "type"); !t.isNull() {
		s, err := scalarText(path+".type", t)
		if err != nil {
			return err
		}
		typ = strings.ToLower(s)
	} else if lookupAny(n, "rate") && !isRatePhase(typ) {
		typ = "poisson"
	}
	switch typ {
	case "concurrency", "poisson", "constant", "gamma":
	case "fixed_schedule":
		if kind == "warmup" {
			return unsupported(path+".type", "a warm-up by a fixed schedule")
		}
	case "user_centric":
		return unsupported(path+".type", "no user-centric rate mode: use a rate phase (poisson, constant or gamma)")
	default:
		return pathError(path+".type", "%q: use concurrency, poisson, constant, gamma or fixed_schedule", clip(typ))
	}
	b.phaseType = typ
	if err := b.walk("benchmark.phases."+kind, path, n); err != nil {
		return err
	}
	if kind == "warmup" {
		return b.warmupShape(path, n, typ)
	}
	b.profilingType = typ
	c := cursor{path: path + ".type", n: n, rank: table().byPath["benchmark.phases.profiling.type"].rank}
	switch {
	case isRatePhase(typ):
		b.ratePhase = path
		return b.set(c, "arrival-pattern", typ, valued)
	case typ == "fixed_schedule":
		if err := b.set(c, "fixed-schedule", "true", boolean); err != nil {
			return err
		}
		_, ao := lookup(n, "auto_offset")
		_, so := lookup(n, "start_offset")
		if ao.isNull() && so.isNull() {
			// AIPerf's fixed schedule starts at the first timestamp unless
			// told otherwise.
			c.rank = table().byPath["benchmark.phases.profiling.auto_offset"].rank
			return b.set(c, "fixed-schedule-auto-offset", "true", boolean)
		}
	}
	return nil
}

// warmupShape checks what a warm-up of type typ can be in llmbench: a rate
// warm-up is --warmup-request-rate and --warmup-arrival-pattern; a
// concurrency one cannot precede a rate profiling phase, whose rate the
// warm-up would take.
func (b *builder) warmupShape(path string, n *node, typ string) error {
	if !b.has("warmup-request-count") && !b.has("warmup-duration") {
		return pathError(path, "a warm-up phase needs requests, sessions or duration")
	}
	c := cursor{path: path + ".type", n: n, rank: table().byPath["benchmark.phases.warmup.type"].rank}
	switch {
	case !isRatePhase(typ) && isRatePhase(b.profilingType):
		return unsupported(c.path, fmt.Sprintf("a %s warm-up before a %s profiling phase: the warm-up takes its rate; give the warm-up a rate phase's type and rate", typ, b.profilingType))
	case isRatePhase(typ) && typ != b.profilingType:
		return b.set(c, "warmup-arrival-pattern", typ, valued)
	}
	return nil
}

// phaseType: the type is read before the phase's other keys (phase).
func phaseType(*builder, cursor) error { return nil }

// warmupSmoothness: a gamma warm-up has the profiling phase's smoothness
// (--arrival-smoothness), which must then be gamma too.
func warmupSmoothness(b *builder, c cursor) error {
	if b.profilingType != "gamma" {
		return unsupported(c.path, "a gamma warm-up takes the profiling phase's smoothness, and that phase is "+b.profilingType)
	}
	return b.scalar(c, "arrival-smoothness", kFloat)
}

func isRatePhase(t string) bool { return t == "poisson" || t == "constant" || t == "gamma" }

// ramp reads a ramp: seconds, a duration string, or {duration, strategy}
// with the linear strategy llmbench ramps by.
func ramp(flag string) func(*builder, cursor) error {
	return func(b *builder, c cursor) error {
		if c.n.kind != mapNode {
			return b.scalar(c, flag, kSeconds)
		}
		for i, k := range c.n.keys {
			sub := c.at(k, c.n.vals[i])
			switch snake(k) {
			case "duration":
				if err := b.scalar(sub, flag, kSeconds); err != nil {
					return err
				}
			case "strategy":
				s, err := scalarText(sub.path, sub.n)
				if err != nil {
					return err
				}
				if !strings.EqualFold(s, "linear") {
					return unsupported(sub.path, fmt.Sprintf("%q: it ramps linearly", clip(s)))
				}
			default:
				return unknownKey(c.path, k, []string{"duration", "strategy"})
			}
		}
		return nil
	}
}

// cancellation reads {rate, delay}: a rate of 0 cancels nothing, so its
// delay means nothing either.
func cancellation(b *builder, c cursor) error {
	if c.n.kind != mapNode {
		return pathError(c.path, "want {rate: PERCENT, delay: SECONDS}, got a %s", c.n.describe())
	}
	var rate, delay *cursor
	for i, k := range c.n.keys {
		sub := c.at(k, c.n.vals[i])
		switch snake(k) {
		case "rate":
			rate = &sub
		case "delay":
			delay = &sub
		default:
			return unknownKey(c.path, k, []string{"rate", "delay"})
		}
	}
	if rate == nil || rate.n.isNull() {
		return pathError(c.path, "give the rate: the percentage of requests to cancel")
	}
	r, err := floatText(rate.path, rate.n)
	if err != nil {
		return err
	}
	if f, _ := parseFloat(r); f == 0 {
		return nil
	}
	if err := b.set(*rate, "request-cancellation-rate", r, valued); err != nil {
		return err
	}
	if delay != nil && !delay.n.isNull() {
		return b.scalar(*delay, "request-cancellation-delay", kSeconds)
	}
	return nil
}

// autoOffset reads a fixed schedule's auto_offset, AIPerf's default true.
func autoOffset(b *builder, c cursor) error {
	on, err := boolValue(c.path, c.n)
	if err != nil || !on {
		return err
	}
	return b.set(c, "fixed-schedule-auto-offset", "true", boolean)
}
