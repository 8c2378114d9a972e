package tokenizer

import (
	"slices"
	"testing"
)

// TestWordStreamMatchesSplit: the words streamed are exactly the words
// split lists, in order, for every pre-tokenizer of the real files (and
// Tekken's), on the reference corpus and with first set and not.
func TestWordStreamMatchesSplit(t *testing.T) {
	toks := referenceModelsInstalled(t)
	o, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	toks["builtin"] = o
	if len(toks) == 1 {
		t.Log("reference files not installed: the builtin only")
	}
	strs, _ := referenceStrings(t)
	pres := map[string]preTokenizer{
		"tekken":    splitter{pat: fastPattern(tekkenPattern)},
		"metaspace": preTokenizerSeq{metaspace{replacement: "▁", prepend: "first", splitAtReplacement: true}, digits{individual: true}},
		"nested":    preTokenizerSeq{splitter{pat: numberRuns{maxDigits: 3}}, preTokenizerSeq{splitter{pat: cjkRuns{}}, whitespaceSplit{}}},
	}
	for name, tok := range toks {
		if tok.pre != nil {
			pres[name] = tok.pre
		}
	}
	var ws wordStream
	for name, pre := range pres {
		for k, s := range strs {
			if k%raceScale != 0 {
				continue
			}
			for _, first := range []bool{true, false} {
				want := pre.split(nil, s, first, &pieceScratch{})
				var got []string
				ws.each(pre, s, first, func(w string) { got = append(got, w) })
				if !slices.Equal(got, want) {
					t.Fatalf("%s on %q (first %v):\n stream %q\n split  %q", name, s, first, got, want)
				}
			}
		}
	}
}

// TestWordStreamMemory: encoding 4 MB of digits, millions of words for
// every pre-tokenizer, into room made beforehand for its ids allocates
// little beyond a normalizer's copy of the text, not a list of the words
// (16 bytes each, several times over as the list grows: 6 GB for 50 MB).
func TestWordStreamMemory(t *testing.T) {
	skipAllocationsUnderRace(t)
	const size = 4 << 20
	text := pathologicalText("digits", size)
	for name, tok := range pathologicalHF(t) {
		n := tok.Count(text)
		dst := make([]int32, 0, n)
		allocated := allocatedBy(func() {
			sc := tok.getScratch()
			dst = tok.appendIDs(dst[:0], text, sc)
			tok.scratch.Put(sc)
		})
		if len(dst) != n {
			t.Fatalf("%s: %d ids, Count says %d", name, len(dst), n)
		}
		if limit := uint64(2*size + 1<<20); allocated > limit {
			t.Errorf("%s: %d bytes of digits (%d tokens): %d bytes allocated, want at most %d", name, size, n, allocated, limit)
		}
	}
}

// TestCountIsEncodeLength: Count, which tallies ids rather than keep them
// (a long word's too), gives len(Encode) on the reference corpus, on long
// words of every pathological shape and on texts mixing long words with
// short ones, where the tally and the kept ids meet.
func TestCountIsEncodeLength(t *testing.T) {
	strs, _ := referenceStrings(t)
	for _, shape := range pathologicalShapes {
		long := pathologicalText(shape, 300_000/raceScale)
		strs = append(strs, long, "x "+long+" y 12345 "+long[:5000])
	}
	for name, tok := range pathologicalHF(t) {
		for k, s := range strs {
			if k%raceScale != 0 && len(s) < 100_000 {
				continue
			}
			if got, want := tok.Count(s), len(tok.Encode(s)); got != want {
				t.Fatalf("%s on %q: Count %d, len(Encode) %d", name, abbreviate(s), got, want)
			}
		}
	}
}

// TestCountLongWordMemory: counting 4 MB of random letters, one word of
// about 2 million tokens, allocates no room for its ids.
func TestCountLongWordMemory(t *testing.T) {
	skipAllocationsUnderRace(t)
	const size = 4 << 20
	text := pathologicalText("letters", size)
	for name, tok := range pathologicalHF(t) {
		n := tok.Count(text)
		allocated := allocatedBy(func() { tok.Count(text) })
		if limit := uint64(2*size + 2<<20); allocated > limit {
			t.Errorf("%s: %d bytes of letters (%d tokens): %d bytes allocated, want at most %d", name, size, n, allocated, limit)
		}
	}
}
