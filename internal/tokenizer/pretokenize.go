package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// preTokenizer splits one piece of normalized text into smaller pieces;
// BPE then runs on each piece alone. first is set for the piece that
// begins the whole input (Metaspace's "first" prepend scheme needs it).
type preTokenizer interface {
	split(dst []string, s string, first bool, sc *pieceScratch) []string
}

// pieceScratch is a pre-tokenization's reusable memory.
type pieceScratch struct {
	matches [][2]int
	parts   []part
	pieces  []string
}

// behavior is what a Split does with the pattern's matches.
type behavior int

const (
	isolated behavior = iota
	removed
	mergedWithPrevious
	mergedWithNext
	contiguous
)

var behaviors = map[string]behavior{
	"Isolated": isolated, "Removed": removed, "MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext": mergedWithNext, "Contiguous": contiguous,
}

// splitter is the Split pre-tokenizer.
type splitter struct {
	pat      pattern
	behavior behavior
	invert   bool
}

func (sp splitter) split(dst []string, s string, _ bool, sc *pieceScratch) []string {
	if st, ok := sp.streams(); ok {
		eachIsolated(st, s, func(w string) { dst = append(dst, w) })
		return dst
	}
	sc.matches = sp.pat.matches(sc.matches[:0], s)
	return splitBy(dst, s, sc.matches, sp.behavior, sp.invert, sc)
}

// streams returns the split's pattern when its pieces can be cut as the
// pattern finds its matches: an isolating split by a hand-written pattern
// (or one that amounts to it).
func (sp splitter) streams() (stepper, bool) {
	st, ok := sp.pat.(stepper)
	if !ok {
		return nil, false
	}
	if sp.behavior == isolated && !sp.invert {
		return st, true
	}
	// A pattern that matches everywhere leaves no gap, so removing what
	// it does not match (Removed, inverted: GPT-4o's file) keeps each
	// match as a piece, as isolating does.
	_, everywhere := st.(scanner)
	return st, everywhere && sp.behavior == removed && sp.invert
}

// eachIsolated yields the pieces of s an isolating split by st makes:
// every gap between matches, and every match.
func eachIsolated(st stepper, s string, yield func(string)) {
	prev := 0
	for i := 0; ; {
		start, end, ok := st.next(s, i)
		if !ok {
			break
		}
		if start > prev {
			yield(s[prev:start])
		}
		yield(s[start:end])
		prev, i = end, end
	}
	if prev < len(s) {
		yield(s[prev:])
	}
}

// wordStream yields a pre-tokenizer's words one at a time, in the order
// split lists them, without listing them all: a 50 MB response of digits
// is tens of millions of words (listed, gigabytes). Isolating splits by a
// hand-written pattern stream; any other step lists its pieces of one
// piece of the step before, which are few. A Sequence's steps run depth
// first, each piece through every later step before the next piece, which
// gives split's words in split's order because every step works on each
// piece alone; each step has its own scratch, so its list outlives what
// the steps after it do with each of its pieces.
type wordStream struct {
	levels []streamLevel
}

type streamLevel struct {
	sc    pieceScratch
	words []string
}

// each calls yield with every word of s, as p.split(nil, s, first, ...)
// lists them.
func (ws *wordStream) each(p preTokenizer, s string, first bool, yield func(string)) {
	if seq, ok := p.(preTokenizerSeq); ok {
		ws.steps(seq, s, first, 0, yield)
		return
	}
	ws.step(p, nil, s, first, 0, yield)
}

// steps yields the words that seq's steps make of s; depth is the step's
// place in the whole sequence.
func (ws *wordStream) steps(seq preTokenizerSeq, s string, first bool, depth int, yield func(string)) {
	if len(seq) == 0 {
		yield(s)
		return
	}
	ws.step(seq[0], seq[1:], s, first, depth, yield)
}

// step splits s by p and passes each piece through rest.
func (ws *wordStream) step(p preTokenizer, rest preTokenizerSeq, s string, first bool, depth int, yield func(string)) {
	if nested, ok := p.(preTokenizerSeq); ok {
		// Parsing flattens Sequences; one built by hand is flattened here.
		ws.steps(append(slices.Clip(nested), rest...), s, first, depth, yield)
		return
	}
	if sp, ok := p.(splitter); ok {
		if st, ok := sp.streams(); ok && len(rest) == 0 {
			eachIsolated(st, s, yield)
			return
		} else if ok {
			k, prev := 0, 0
			for i := 0; ; {
				start, end, ok := st.next(s, i)
				if !ok {
					break
				}
				if start > prev {
					ws.steps(rest, s[prev:start], first && k == 0, depth+1, yield)
					k++
				}
				ws.steps(rest, s[start:end], first && k == 0, depth+1, yield)
				k++
				prev, i = end, end
			}
			if prev < len(s) {
				ws.steps(rest, s[prev:], first && k == 0, depth+1, yield)
			}
			return
		}
	}
	for len(ws.levels) <= depth {
		ws.levels = append(ws.levels, streamLevel{})
	}
	lv := &ws.levels[depth]
	words := p.split(lv.words[:0], s, first, &lv.sc)
	lv.words = words[:0]
	for k, w := range words {
		ws.steps(rest, w, first && k == 0, depth+1, yield)
	}
}

// splitBy cuts s around matches (sorted, non-overlapping byte ranges) as
// the reference's NormalizedString::split does; empty pieces are dropped.
func splitBy(dst []string, s string, matches [][2]int, b behavior, invert bool, sc *pieceScratch) []string {
	if s == "" {
		return dst
	}
	emit := func(start, end int) {
		if end > start {
			dst = append(dst, s[start:end])
		}
	}
	if b == isolated {
		// Every gap and every match is a piece: no bookkeeping needed
		// (the common case, on every count).
		prev := 0
		for _, m := range matches {
			emit(prev, m[0])
			emit(m[0], m[1])
			prev = m[1]
		}
		emit(prev, len(s))
		return dst
	}
	// The reference alternates unmatched gaps and matches over all of s.
	parts := sc.parts[:0]
	prev := 0
	for _, m := range matches {
		if m[0] > prev {
			parts = append(parts, part{prev, m[0], false})
		}
		parts = append(parts, part{m[0], m[1], true})
		prev = m[1]
	}
	if prev < len(s) {
		parts = append(parts, part{prev, len(s), false})
	}
	sc.parts = parts
	if invert {
		for i := range parts {
			parts[i].match = !parts[i].match
		}
	}
	switch b {
	case removed:
		for _, p := range parts {
			if !p.match {
				emit(p.start, p.end)
			}
		}
	case mergedWithPrevious:
		for _, p := range joinForward(parts, func(match, prevMatch bool) bool { return match && !prevMatch }) {
			emit(p.start, p.end)
		}
	case mergedWithNext:
		var out []part
		prevMatch := false
		for i := len(parts) - 1; i >= 0; i-- {
			p := parts[i]
			if p.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = p.start
			} else {
				out = append(out, p)
			}
			prevMatch = p.match
		}
		for i := len(out) - 1; i >= 0; i-- {
			emit(out[i].start, out[i].end)
		}
	case contiguous:
		for _, p := range joinForward(parts, func(match, prevMatch bool) bool { return match && prevMatch }) {
			emit(p.start, p.end)
		}
	}
	return dst
}

// part is a stretch of a split text: a match of the pattern or a gap.
type part struct {
	start, end int
	match      bool
}

// joinForward appends each part for which join holds (given whether it and
// the part before it match) to the part before it, in place.
func joinForward(parts []part, join func(match, prevMatch bool) bool) []part {
	out := parts[:0]
	prevMatch := false
	for _, p := range parts {
		if join(p.match, prevMatch) && len(out) > 0 {
			out[len(out)-1].end = p.end
		} else {
			out = append(out, p)
		}
		prevMatch = p.match
	}
	return out
}

// gpt2Pattern is the ByteLevel pre-tokenizer's own regex (use_regex).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// byteLevel is the ByteLevel pre-tokenizer. The bytes themselves are left
// as they are: the model's vocabulary was turned back into raw bytes.
type byteLevel struct {
	addPrefixSpace bool
	re             pattern // nil unless use_regex
}

func (bl byteLevel) split(dst []string, s string, _ bool, sc *pieceScratch) []string {
	if bl.addPrefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if bl.re == nil {
		if s != "" {
			dst = append(dst, s)
		}
		return dst
	}
	sc.matches = bl.re.matches(sc.matches[:0], s)
	return splitBy(dst, s, sc.matches, isolated, false, sc)
}

// metaspace is the Metaspace pre-tokenizer: spaces become the replacement
// ("▁"), one is prepended as the scheme says, and with split the text is
// cut before each replacement.
type metaspace struct {
	replacement        string
	prepend            string // "always", "first" or "never"
	splitAtReplacement bool
}

func (ms metaspace) split(dst []string, s string, first bool, sc *pieceScratch) []string {
	if s == "" {
		return dst // nothing to prepend to (a normalizer emptied the text)
	}
	s = strings.ReplaceAll(s, " ", ms.replacement)
	if !strings.HasPrefix(s, ms.replacement) && (ms.prepend == "always" || ms.prepend == "first" && first) {
		s = ms.replacement + s
	}
	if !ms.splitAtReplacement {
		if s != "" {
			dst = append(dst, s)
		}
		return dst
	}
	sc.matches = literal(ms.replacement).matches(sc.matches[:0], s)
	return splitBy(dst, s, sc.matches, mergedWithNext, false, sc)
}

// digits is the Digits pre-tokenizer; bytes as punctSplit's.
type digits struct{ individual, bytes bool }

func (d digits) split(dst []string, s string, _ bool, sc *pieceScratch) []string {
	sc.matches = sc.matches[:0]
	if d.bytes {
		for i := 0; i < len(s); i++ {
			if byteClass[s[i]]&byteNumber != 0 {
				sc.matches = append(sc.matches, [2]int{i, i + 1})
			}
		}
	} else {
		for i, r := range s {
			if unicode.IsNumber(r) {
				sc.matches = append(sc.matches, [2]int{i, i + utf8.RuneLen(r)})
			}
		}
	}
	b := contiguous
	if d.individual {
		b = isolated
	}
	return splitBy(dst, s, sc.matches, b, false, sc)
}

// whitespaceSplit is the WhitespaceSplit pre-tokenizer.
type whitespaceSplit struct{}

func (whitespaceSplit) split(dst []string, s string, _ bool, _ *pieceScratch) []string {
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// preTokenizerSeq applies each pre-tokenizer to every piece of the last.
type preTokenizerSeq []preTokenizer

func (seq preTokenizerSeq) split(dst []string, s string, first bool, sc *pieceScratch) []string {
	base := len(dst)
	dst = seq[0].split(dst, s, first, sc)
	// The last step's pieces are re-split from a copy; a nested Sequence
	// finds the scratch copy taken and makes its own.
	pieces := sc.pieces
	sc.pieces = nil
	for _, p := range seq[1:] {
		pieces = append(pieces[:0], dst[base:]...)
		dst = dst[:base]
		for i, piece := range pieces {
			dst = p.split(dst, piece, first && i == 0, sc)
		}
	}
	sc.pieces = pieces[:0]
	return dst
}

type preTokenizerJSON struct {
	Type             string            `json:"type"`
	PreTokenizers    []json.RawMessage `json:"pretokenizers"`
	Pattern          patternJSON       `json:"pattern"`
	Behavior         string            `json:"behavior"`
	Invert           bool              `json:"invert"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	UseRegex         *bool             `json:"use_regex"`
	Replacement      string            `json:"replacement"`
	PrependScheme    string            `json:"prepend_scheme"`
	Split            *bool             `json:"split"`
	IndividualDigits bool              `json:"individual_digits"`
}

// parsePreTokenizer builds the pre-tokenizer raw declares (nil for none)
// and reports whether it has a ByteLevel step, which makes the model work
// on bytes (the steps after one see them as inByteDomain says).
func parsePreTokenizer(raw json.RawMessage) (preTokenizer, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	var j preTokenizerJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, false, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch j.Type {
	case "Sequence":
		var seq preTokenizerSeq
		bytes := false
		for _, r := range j.PreTokenizers {
			p, bl, err := parsePreTokenizer(r)
			if err != nil {
				return nil, false, err
			}
			if bytes {
				// After a ByteLevel step (Falcon's Sequence).
				if p, err = inByteDomain(p); err != nil {
					return nil, false, err
				}
			}
			bytes = bytes || bl
			// A ByteLevel step that neither splits nor adds a space (after
			// a Split, as in most byte-level tokenizers) leaves the pieces
			// as they are: skipped, it costs no copy of them.
			if b, ok := p.(byteLevel); ok && b.re == nil && !b.addPrefixSpace {
				continue
			}
			if inner, ok := p.(preTokenizerSeq); ok {
				seq = append(seq, inner...) // the same words, streamed simply
			} else if p != nil {
				seq = append(seq, p)
			}
		}
		switch len(seq) {
		case 0:
			return nil, bytes, nil
		case 1:
			return seq[0], bytes, nil
		}
		return seq, bytes, nil
	case "Split":
		p, err := j.Pattern.compile()
		if err != nil {
			return nil, false, fmt.Errorf("pre_tokenizer Split: %w", err)
		}
		b, ok := behaviors[j.Behavior]
		if !ok {
			return nil, false, fmt.Errorf("pre_tokenizer Split: unknown behavior %q", j.Behavior)
		}
		return splitter{p, b, j.Invert}, false, nil
	case "ByteLevel":
		bl := byteLevel{addPrefixSpace: j.AddPrefixSpace != nil && *j.AddPrefixSpace}
		if j.UseRegex == nil || *j.UseRegex {
			re, err := compileRegex(gpt2Pattern)
			if err != nil {
				return nil, false, err
			}
			bl.re = re
		}
		return bl, true, nil
	case "Metaspace":
		ms := metaspace{replacement: j.Replacement, prepend: j.PrependScheme, splitAtReplacement: j.Split == nil || *j.Split}
		if ms.replacement == "" {
			ms.replacement = "▁"
		}
		if ms.prepend == "" {
			// The older form: add_prefix_space (default true).
			ms.prepend = "always"
			if j.AddPrefixSpace != nil && !*j.AddPrefixSpace {
				ms.prepend = "never"
			}
		}
		if ms.prepend != "always" && ms.prepend != "first" && ms.prepend != "never" {
			return nil, false, fmt.Errorf("pre_tokenizer Metaspace: unknown prepend_scheme %q", ms.prepend)
		}
		return ms, false, nil
	case "Digits":
		return digits{individual: j.IndividualDigits}, false, nil
	case "Punctuation":
		b := isolated
		if j.Behavior != "" {
			var ok bool
			if b, ok = behaviors[j.Behavior]; !ok {
				return nil, false, fmt.Errorf("pre_tokenizer Punctuation: unknown behavior %q", j.Behavior)
			}
		}
		return punctSplit{behavior: b}, false, nil
	case "WhitespaceSplit":
		return whitespaceSplit{}, false, nil
	}
	return nil, false, unsupported("pre-tokenizer", j.Type)
}
