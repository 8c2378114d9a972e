package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

// Parser reads Prometheus text exposition with Prometheus' own text parser
// (model/textparse's PromParser, the one the Prometheus server scrapes
// with) and groups its samples into families and series as expfmt did:
// counter family names lose their "_total" suffix and "_created" companion
// series are dropped, as Prometheus' Python parser (and so AIPerf) does;
// summaries and families named *_uptime or *_uptime_* are ignored, as
// AIPerf ignores them; NaN and ±Inf samples are counted and dropped.
//
// Keep one Parser per endpoint: it remembers how the labels of every
// series line it has seen parse, so a scrape that repeats the previous
// one's series (the usual case) costs the tokenizer and a map look-up per
// line, and each label set is unescaped, sorted and keyed once per run.
// A Parser is not safe for concurrent use.
type Parser struct {
	// lines maps a series line's text up to its value (`name{a="1"}`) to
	// what its labels parse to.
	lines map[string]*lineInfo
	// order is the lines of the last scrape in order, next the index in
	// it of the line expected next: an exposition lists its series in the
	// same order every time, so most look-ups are one comparison.
	order, nextOrder []*lineInfo
	next             int
	// sets interns label sets by key, so the lines of one series (its
	// buckets, sum and count) share one *labelSet.
	sets    map[string]*labelSet
	scrapes uint32
	ls      labels.Labels
}

// labelSet is one series' labels as parsed: sorted, unescaped, with its
// LabelKey.
type labelSet struct {
	labels []Label
	key    string
	seen   uint32
	// buckets is how many buckets the series had last time, to size the
	// next scrape's.
	buckets int
}

// lineInfo is what a series line's text parses to, independent of the
// TYPE lines around it.
type lineInfo struct {
	text string
	pos  int // index in the last scrape's order, or -1
	name string
	all  *labelSet // every label but the name
	// noLe is the label set without "le", when the line has an le label:
	// the series a histogram bucket line belongs to.
	noLe  *labelSet
	le    string // the le text as written
	bound float64
	leErr error
	seen  uint32
}

// NewParser returns a Parser with nothing remembered.
func NewParser() *Parser {
	return &Parser{lines: map[string]*lineInfo{}, sets: map[string]*labelSet{}}
}

// sample part: what a line is to its family.
type part uint8

const (
	partValue part = iota
	partBucket
	partSum
	partCount
	partSkip
)

// familyBuild is a family being assembled from one scrape's lines.
type familyBuild struct {
	Family
	typed, hasHelp bool
	index          map[*labelSet]int32 // series by label set
	last           *labelSet           // the last series added to, and its index
	lastIdx        int32
}

// series returns the index of the series with label set ls, adding it.
func (f *familyBuild) series(ls *labelSet, fresh *bool) int32 {
	if f.last == ls {
		return f.lastIdx
	}
	i, ok := f.index[ls]
	if !ok {
		if f.index == nil {
			f.index = map[*labelSet]int32{}
		}
		i = int32(len(f.Series))
		s := Series{Labels: ls.labels, Key: ls.key}
		if f.Type == Histogram {
			s.Buckets = make([]Bucket, 0, ls.buckets)
		}
		f.Series = append(f.Series, s)
		f.index[ls] = i
		*fresh = true
	}
	f.last, f.lastIdx = ls, i
	return i
}

// scrapeBuild is one scrape's families as they are assembled.
type scrapeBuild struct {
	fams  map[string]*familyBuild
	order []*familyBuild
}

func (b *scrapeBuild) family(name string) *familyBuild {
	if f := b.fams[name]; f != nil {
		return f
	}
	f := &familyBuild{Family: Family{Name: name, Type: Unknown}}
	b.fams[name] = f
	b.order = append(b.order, f)
	return f
}

// resolve finds the family a sample named name belongs to and what it is
// there, as expfmt did: a family of that exact name, else the histogram or
// summary it is the _bucket, _sum or _count of, else a new untyped family.
func (b *scrapeBuild) resolve(name string) (*familyBuild, part) {
	if f := b.fams[name]; f != nil {
		switch f.Type {
		case Histogram: // a histogram's own name is not one of its samples
			return nil, partSkip
		case summaryType:
			return nil, partSkip // its quantiles
		}
		f.typed = true // a sample fixes an untyped family's type
		return f, partValue
	}
	for _, suffix := range [...]struct {
		s string
		p part
	}{{"_bucket", partBucket}, {"_sum", partSum}, {"_count", partCount}} {
		base, ok := strings.CutSuffix(name, suffix.s)
		if !ok {
			continue
		}
		if f := b.fams[base]; f != nil {
			switch {
			case f.Type == Histogram:
				return f, suffix.p
			case f.Type == summaryType && suffix.p != partBucket:
				return nil, partSkip
			}
		}
	}
	f := b.family(name)
	f.typed = true
	return f, partValue
}

// summaryType marks a summary family while a scrape is assembled; such
// families are left out of the result.
const summaryType Type = "summary"

// Parse parses one scrape's body. body is not modified or kept.
//
// Every line goes through Prometheus' parser the first time it is seen. A
// sample line whose text up to the value is byte for byte the one the
// previous scrape had at this point (the usual case: a server lists the
// same series in the same order each time) is recognised without it: its
// labels are known, and only its value, and an optional timestamp, are
// read, in the one spelling (a space, the value, a space and digits) the
// parser would read the same way. Any other line, and every line of a
// body holding a NUL byte (the end of input to Prometheus' parser), is
// left to the parser, so both paths give the same result (FuzzParserRepeat).
//
// The parser reads a run of such lines in one go. A quoted string may hold
// a raw newline; cut there, a run ends in an unterminated string, which
// the parser rejects, so on any error the whole body is read again by the
// parser alone, which decides.
func (p *Parser) Parse(body []byte) ([]Family, error) {
	fast := bytes.IndexByte(body, 0) < 0
	fams, err := p.parse(body, fast)
	if err != nil && fast {
		fams, err = p.parse(body, false)
	}
	return fams, err
}

func (p *Parser) parse(body []byte, fast bool) ([]Family, error) {
	p.scrapes++ // a new generation of seen marks, also for a second try
	p.next, p.nextOrder = 0, p.nextOrder[:0]
	st := scrapeState{p: p, b: scrapeBuild{fams: map[string]*familyBuild{}}}
	pending := -1 // start of the lines waiting for Prometheus' parser
	for at := 0; at < len(body); {
		next, line := len(body), body[at:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			next, line = at+i+1, line[:i]
		}
		if fast && p.repeats(line) {
			if pending >= 0 {
				if err := st.parse(body[pending:at:at]); err != nil {
					return nil, err
				}
				pending = -1
			}
			// The lines just parsed may have moved the expected line.
			if p.repeats(line) {
				if v, ok := repeatValue(line[len(p.order[p.next].text)+1:]); ok {
					li := p.order[p.next]
					p.see(li)
					if err := st.sample(li, v); err != nil {
						return nil, err
					}
					at = next
					continue
				}
			}
		}
		if pending < 0 {
			pending = at
		}
		at = next
	}
	if pending >= 0 {
		if err := st.parse(body[pending:len(body):len(body)]); err != nil {
			return nil, err
		}
	}
	p.order, p.nextOrder = p.nextOrder, p.order
	for i, li := range p.order {
		li.pos = i
	}
	p.forget(st.lines)
	return st.b.families(), nil
}

// scrapeState is one Parse call's progress.
type scrapeState struct {
	p *Parser
	b scrapeBuild
	// The family and part of the last sample's name, for the next line of
	// the same name.
	prevName string
	prevFam  *familyBuild
	prevPart part
	lines    int
}

// parse runs Prometheus' parser over whole lines of the body.
func (st *scrapeState) parse(lines []byte) error {
	tp := textparse.NewPromParser(lines, nil, false)
	for {
		entry, err := tp.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("parse Prometheus exposition: %w", err)
		}
		switch entry {
		case textparse.EntryType:
			name, mt := tp.Type()
			f := st.b.family(string(name))
			if !f.typed && len(f.Series) == 0 {
				// The first TYPE line before any sample decides.
				f.Type, f.typed = typeOf(mt), true
				st.prevName = "" // a name's resolution may have changed
			}
		case textparse.EntryHelp:
			name, help := tp.Help()
			if f := st.b.family(string(name)); !f.hasHelp {
				f.Help, f.hasHelp = string(help), true
			}
		case textparse.EntrySeries:
			text, _, v := tp.Series()
			li, err := st.p.line(text, tp)
			if err != nil {
				return err
			}
			if err := st.sample(li, v); err != nil {
				return err
			}
		}
	}
}

// sample adds one sample line's value to its family.
func (st *scrapeState) sample(li *lineInfo, v float64) error {
	st.lines++
	if li.name != st.prevName || st.prevName == "" {
		st.prevName = li.name
		st.prevFam, st.prevPart = st.b.resolve(li.name)
	}
	return add(st.prevFam, st.prevPart, li, v)
}

// repeats reports whether line starts with the text of the line expected
// next, then a space.
func (p *Parser) repeats(line []byte) bool {
	if p.next >= len(p.order) {
		return false
	}
	text := p.order[p.next].text
	return len(line) > len(text) && line[len(text)] == ' ' && string(line[:len(text)]) == text
}

// repeatValue reads what follows a repeated line's text and a space when
// it is "<value>" or "<value> <digits>", with a value Prometheus' lexer and
// parser take as one: no '{', tab, CR, 'p', 'P' or '_'.
func repeatValue(rest []byte) (float64, bool) {
	value := rest
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		value, rest = rest[:i], rest[i+1:]
		if len(rest) == 0 || len(rest) > 18 || !allDigits(rest) { // 18 digits fit an int64
			return 0, false
		}
	}
	if len(value) == 0 {
		return 0, false
	}
	for _, c := range value {
		switch c {
		case '{', '\t', '\r', 'p', 'P', '_':
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(string(value), 64)
	return v, err == nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// add puts one sample line's value v in its family.
func add(f *familyBuild, pt part, li *lineInfo, v float64) error {
	fresh := false
	switch pt {
	case partSkip:
	case partValue:
		i := f.series(li.all, &fresh)
		switch {
		case !fresh: // a repeated series: the first is kept, as Prometheus does
		case !finite(v):
			f.NonFinite++
			f.Series = f.Series[:i]
			delete(f.index, li.all)
			f.last = nil
		default:
			f.Series[i].Value = v
		}
	case partBucket:
		if li.noLe == nil {
			return fmt.Errorf("parse Prometheus exposition: histogram %s: bucket line %s{%s} has no le label", f.Name, li.name, li.all.key)
		}
		if li.leErr != nil {
			return fmt.Errorf("parse Prometheus exposition: histogram %s: bucket line %s{%s}: %w", f.Name, li.name, li.all.key, li.leErr)
		}
		s := &f.Series[f.series(li.noLe, &fresh)]
		s.Buckets = append(s.Buckets, Bucket{UpperBound: li.bound, Count: v, Le: li.le})
		li.noLe.buckets = max(li.noLe.buckets, len(s.Buckets))
	case partSum:
		f.Series[f.series(li.all, &fresh)].Sum = v
	case partCount:
		f.Series[f.series(li.all, &fresh)].Count = v
	}
	return nil
}

func typeOf(mt model.MetricType) Type {
	switch mt {
	case model.MetricTypeGauge:
		return Gauge
	case model.MetricTypeCounter:
		return Counter
	case model.MetricTypeHistogram, model.MetricTypeGaugeHistogram:
		return Histogram
	case model.MetricTypeSummary:
		return summaryType
	}
	return Unknown
}

// families finishes the scrape: histograms completed and checked, counters
// renamed, summaries, uptimes and _created companions dropped, sorted by
// name.
func (b *scrapeBuild) families() []Family {
	out := make([]Family, 0, len(b.order))
	names := make(map[string]Type, len(b.order))
	for _, f := range b.order {
		if f.Type == summaryType || skipped(f.Name) {
			continue
		}
		fam := f.Family
		if fam.Type == Counter {
			fam.Name = strings.TrimSuffix(fam.Name, "_total")
		}
		if fam.Type == Histogram {
			fam.Series = finishHistograms(&fam)
		}
		names[fam.Name] = fam.Type
		out = append(out, fam)
	}
	// Drop "<name>_created" gauges that only carry the creation time of a
	// counter or histogram of the same base name.
	kept := out[:0]
	for _, f := range out {
		if base, ok := strings.CutSuffix(f.Name, "_created"); ok && f.Type != Counter && f.Type != Histogram {
			if t := names[base]; t == Counter || t == Histogram {
				continue
			}
		}
		kept = append(kept, f)
	}
	slices.SortStableFunc(kept, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return kept
}

// finishHistograms sorts each series' buckets by bound (a bound written
// twice keeps its first count), ends them with +Inf, and drops the label
// sets holding a NaN or infinite count or sum for this scrape.
func finishHistograms(f *Family) []Series {
	kept := f.Series[:0]
	for _, s := range f.Series {
		if !slices.IsSortedFunc(s.Buckets, byBound) {
			slices.SortStableFunc(s.Buckets, byBound)
		}
		s.Buckets = slices.CompactFunc(s.Buckets, func(a, b Bucket) bool { return a.UpperBound == b.UpperBound })
		if n := len(s.Buckets); n == 0 || !math.IsInf(s.Buckets[n-1].UpperBound, 1) {
			s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(1), Count: s.Count, Le: "+Inf"})
		}
		if !histogramFinite(s) {
			f.NonFinite++
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

func byBound(a, b Bucket) int {
	switch {
	case a.UpperBound < b.UpperBound:
		return -1
	case a.UpperBound > b.UpperBound:
		return 1
	}
	return 0
}

// line returns what the current series line's text parses to, from
// memory when the text was seen before.
func (p *Parser) line(text []byte, tp textparse.Parser) (*lineInfo, error) {
	li := p.lines[string(text)]
	if li == nil {
		var err error
		if li, err = p.parseLine(text, tp); err != nil {
			return nil, err
		}
		p.lines[li.text] = li
	}
	p.see(li)
	return li, nil
}

// see marks li as a line of this scrape, in order, and expects the line
// that followed it last time.
func (p *Parser) see(li *lineInfo) {
	if li.pos >= 0 && li.pos < len(p.order) && p.order[li.pos] == li {
		p.next = li.pos + 1
	}
	if li.seen == p.scrapes {
		return // a repeat within the scrape: it is in the order already
	}
	li.seen = p.scrapes
	li.all.seen = p.scrapes
	if li.noLe != nil {
		li.noLe.seen = p.scrapes
	}
	p.nextOrder = append(p.nextOrder, li)
}

// parseLine parses the labels of a series line not seen before.
func (p *Parser) parseLine(text []byte, tp textparse.Parser) (*lineInfo, error) {
	tp.Labels(&p.ls)
	if name, dup := p.ls.HasDuplicateLabelNames(); dup {
		return nil, fmt.Errorf("parse Prometheus exposition: label %q twice in %s", name, text)
	}
	li := &lineInfo{text: string(text), pos: -1}
	all := make([]Label, 0, p.ls.Len())
	p.ls.Range(func(l labels.Label) {
		if l.Name == labels.MetricName {
			li.name = l.Value
			return
		}
		all = append(all, Label{Name: l.Name, Value: l.Value})
	})
	// textparse rewrites le and quantile values in its float format
	// ("1" → "1.0"); the exports keep the text as written, as AIPerf does.
	leAt := -1
	for i := range all {
		switch all[i].Name {
		case model.BucketLabel:
			leAt = i
			all[i].Value = rawLabelValue(text, model.BucketLabel, all[i].Value)
		case model.QuantileLabel:
			all[i].Value = rawLabelValue(text, model.QuantileLabel, all[i].Value)
		}
	}
	li.all = p.intern(all)
	if leAt >= 0 {
		li.le = all[leAt].Value
		li.bound, li.leErr = strconv.ParseFloat(li.le, 64)
		if li.leErr != nil {
			li.leErr = fmt.Errorf("le=%q is not a number", li.le)
		}
		li.noLe = p.intern(slices.Delete(slices.Clone(all), leAt, leAt+1))
	}
	return li, nil
}

// intern returns the remembered label set equal to ls, or remembers ls.
func (p *Parser) intern(ls []Label) *labelSet {
	if len(ls) == 0 {
		ls = nil
	}
	key := LabelKey(ls)
	if s := p.sets[key]; s != nil {
		s.seen = p.scrapes
		return s
	}
	s := &labelSet{labels: ls, key: key, seen: p.scrapes}
	p.sets[key] = s
	return s
}

// forget drops the lines and label sets the last scrape did not have once
// they outnumber its lines two to one, so an exposition whose label values
// churn does not grow the memory without bound.
func (p *Parser) forget(lines int) {
	if len(p.lines) <= 2*lines+1024 {
		return
	}
	for text, li := range p.lines {
		if li.seen != p.scrapes {
			delete(p.lines, text)
		}
	}
	for key, s := range p.sets {
		if s.seen != p.scrapes {
			delete(p.sets, key)
		}
	}
}

// rawLabelValue finds label name's value in a series line's text as the
// exposition wrote it (escapes undone), or returns parsed when it cannot:
// the text has passed Prometheus' lexer, so this only walks its pairs
// (name="value", names bare or quoted, a quoted metric name alone).
func rawLabelValue(text []byte, name, parsed string) string {
	s := string(text)
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return parsed
	}
	i++
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) || s[i] == '}' {
			return parsed
		}
		var key string
		if s[i] == '"' {
			end := closingQuote(s, i)
			if end < 0 {
				return parsed
			}
			key, i = unescapeLabel(s[i+1:end]), end+1
		} else {
			start := i
			for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != '}' {
				i++
			}
			key = s[start:i]
		}
		skip()
		if i < len(s) && s[i] == '=' {
			i++
			skip()
			if i >= len(s) || s[i] != '"' {
				return parsed
			}
			end := closingQuote(s, i)
			if end < 0 {
				return parsed
			}
			if key == name {
				return unescapeLabel(s[i+1 : end])
			}
			i = end + 1
		}
		skip()
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// closingQuote is the index of the quote closing the string opened at
// s[open], or -1.
func closingQuote(s string, open int) int {
	for i := open + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

var labelUnescaper = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n")

func unescapeLabel(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return labelUnescaper.Replace(s)
}
