package tokenizer

import "strings"

// CutsAtSpaces reports, from the tokenizer's components and not by trial,
// that a space between two ASCII letters always begins a new word whose
// tokens no merge crosses: a text's tokens are then those of its part
// before such a space followed by those of the rest. Prompt building
// relies on it to count a long prompt from its pieces (the dataset
// package, which also tries it on the corpus before trusting it).
//
// It holds for byte-level BPE split by a hand-written pattern (each
// starts a word at a space before a letter, and further splits only add
// cuts) with no normalizer or a Unicode normal form (which leaves ASCII
// as it is), and for SentencePiece-style BPE cut at its space mark (see
// bpe.splitAtMark) whose normalizer only prepends the mark and writes it
// for spaces. Anything else says false, and is counted whole.
func (t *HF) CutsAtSpaces() bool {
	m := t.model
	if m == nil || t.raw.spans(" ") || t.normalized.spans(" ") {
		return false
	}
	if m.byteLevel {
		return asciiPreserving(t.norm) && cutsBeforeSpacedLetter(t.pre)
	}
	return m.splitMark != "" && t.pre == nil && marksSpaces(t.norm, m.splitMark) && !t.normalized.spans(m.splitMark)
}

// spans says an added token holds sep: found in a text, it could take
// the text on both sides of a space.
func (t *addedTrie) spans(sep string) bool {
	if t == nil {
		return false
	}
	for _, a := range t.tokens {
		if strings.Contains(a.content, sep) {
			return true
		}
	}
	return false
}

// CutsAtSpaces: Words' tokens are runs of letters and digits and single
// other characters; white space only separates them.
func (Words) CutsAtSpaces() bool { return true }

func asciiPreserving(n normalizer) bool {
	switch n := n.(type) {
	case nil, unicodeForm, nfdForm:
		return true
	case normalizerSeq:
		for _, x := range n {
			if !asciiPreserving(x) {
				return false
			}
		}
		return true
	}
	return false
}

// cutsBeforeSpacedLetter: an isolating Split by a hand-written word
// pattern, alone or among other isolating Splits by hand-written
// patterns.
func cutsBeforeSpacedLetter(p preTokenizer) bool {
	steps := []preTokenizer{p}
	if seq, ok := p.(preTokenizerSeq); ok {
		steps = seq
	}
	word := false
	for _, step := range steps {
		sp, ok := step.(splitter)
		if !ok {
			return false
		}
		if _, ok := sp.streams(); !ok {
			return false
		}
		switch sp.pat.(type) {
		case scanner, deepseekScanner:
			word = true
		case numberRuns, cjkRuns:
		default:
			return false
		}
	}
	return word
}

// marksSpaces: a normalizer made of prepending the mark and replacing
// spaces by it.
func marksSpaces(n normalizer, mark string) bool {
	switch n := n.(type) {
	case prepend:
		return string(n) == mark
	case replace:
		l, ok := n.pat.(literal)
		return ok && l == " " && n.content == mark
	case normalizerSeq:
		for _, x := range n {
			if !marksSpaces(x, mark) {
				return false
			}
		}
		return true
	}
	return false
}
