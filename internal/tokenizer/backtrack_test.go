package tokenizer

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// backtrackModels are the vocabularies merging by backtracking is held to
// the heap on: the builtin (tiktoken's order), the reference files when
// installed (not under the race detector: building their tables is most
// of what it would cost, one goroutine's work, checked without -race),
// Falcon's fixture, small vocabularies of the package's tests (unknown
// tokens, byte fallback, a chain only the last character merges), and
// random ones whose merges come in the order they were made or shuffled
// (ranks that fall towards longer tokens, tokens made by two merges:
// irregular tokens the search must leave to the heap).
func backtrackModels(t *testing.T) map[string]*bpe {
	t.Helper()
	models := map[string]*bpe{"builtin": sharedO200k(t).model}
	if raceScale == 1 {
		for name, tok := range referenceModelsInstalled(t) {
			models[name] = tok.model
		}
	}
	falcon, err := LoadHF(gunzipFixture(t, "clip_falcon", "falcon"), "falcon")
	if err != nil {
		t.Fatal(err)
	}
	models["falcon"] = falcon.model
	tiny := map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "<unk>": 6, "x": 7},
		"merges": []string{"a b", "b c", "ab c"}, "unk_token": "<unk>"}
	sp := map[string]any{"type": "BPE", "vocab": map[string]int{"<unk>": 0, "▁": 1, "h": 2, "i": 3, "▁h": 4, "▁hi": 5, "<0xC3>": 6, "<0xA9>": 7},
		"merges": []string{"▁ h", "▁h i"}, "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true}
	for name, model := range map[string]map[string]any{"tiny": tiny, "sp": sp} {
		tok, err := ParseHF(tinyJSON(t, model, nil), name)
		if err != nil {
			t.Fatal(err)
		}
		models[name] = tok.model
	}
	models["chain"] = chainModel(t, 40)
	rng := rand.New(rand.NewPCG(7, 30))
	for _, shuffled := range []bool{false, true} {
		suffix := map[bool]string{false: "ordered", true: "shuffled"}[shuffled]
		models["random-chars-"+suffix] = randomModel(t, rng, strings.Split("abcd", ""), 300, false, shuffled)
		models["random-bytes-"+suffix] = randomModel(t, rng, strings.Split("abc", ""), 300, true, shuffled)
		models["random-ids-"+suffix] = randomRankModel(rng, strings.Split("abc", ""), 300, shuffled)
	}
	return models
}

var sharedO200kOnce struct {
	once sync.Once
	tok  *HF
	err  error
}

// sharedO200k is the builtin, loaded (and its tables built) once per test
// binary.
func sharedO200k(t testing.TB) *HF {
	t.Helper()
	sharedO200kOnce.once.Do(func() { sharedO200kOnce.tok, sharedO200kOnce.err = O200k() })
	if sharedO200kOnce.err != nil {
		t.Fatal(sharedO200kOnce.err)
	}
	return sharedO200kOnce.tok
}

// chainModel is TestLongWordFallsBackWhole's vocabulary: every a…ac up to
// n a's is a token, merged from the right.
func chainModel(t testing.TB, n int) *bpe {
	vocab := map[string]int{"a": 0, "c": 1}
	var merges []string
	for k := 1; k <= n; k++ {
		tail := strings.Repeat("a", k-1) + "c"
		vocab["a"+tail] = k + 1
		merges = append(merges, "a "+tail)
	}
	tok, err := ParseHF(tinyJSON(t, map[string]any{"type": "BPE", "vocab": vocab, "merges": merges}, nil), "chain")
	if err != nil {
		t.Fatal(err)
	}
	return tok.model
}

// randomTokens joins random pairs of tokens, from alphabet on, into size
// merges (a token may be made by more than one), in the order made.
func randomTokens(rng *rand.Rand, alphabet []string, size int) (tokens []string, merges [][2]string) {
	tokens = slices.Clone(alphabet)
	seen := map[[2]string]bool{}
	for tries := 0; len(merges) < size && tries < 100*size; tries++ {
		a, b := tokens[rng.IntN(len(tokens))], tokens[rng.IntN(len(tokens))]
		if len(a)+len(b) > 10 || seen[[2]string{a, b}] {
			continue
		}
		seen[[2]string{a, b}] = true
		merges = append(merges, [2]string{a, b})
		if !slices.Contains(tokens, a+b) {
			tokens = append(tokens, a+b)
		}
	}
	return tokens, merges
}

// randomModel is a merges-list vocabulary of randomTokens (byte-level: with
// every byte besides), its merges ranked as made or shuffled.
func randomModel(t testing.TB, rng *rand.Rand, alphabet []string, size int, byteLevel, shuffled bool) *bpe {
	tokens, merges := randomTokens(rng, alphabet, size)
	if shuffled {
		rng.Shuffle(len(merges), func(i, j int) { merges[i], merges[j] = merges[j], merges[i] })
	}
	spell := func(s string) string { return s }
	if byteLevel {
		for b := range 256 {
			if s := string([]byte{byte(b)}); !slices.Contains(tokens, s) {
				tokens = append(tokens, s)
			}
		}
		spell = func(s string) string {
			var out []rune
			for i := 0; i < len(s); i++ {
				out = append(out, byteLevelRunes[s[i]])
			}
			return string(out)
		}
	}
	vocab := map[string]int32{}
	for id, s := range tokens {
		vocab[spell(s)] = int32(id)
	}
	var raw []json.RawMessage
	for _, mg := range merges {
		data, err := json.Marshal(spell(mg[0]) + " " + spell(mg[1]))
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, data)
	}
	m := &bpe{byteLevel: byteLevel, unk: -1}
	if err := m.load(vocab, raw, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

// randomRankModel is a tiktoken-order vocabulary of every byte and
// randomTokens, whose ids (ranks) rise in the order made or are shuffled.
func randomRankModel(rng *rand.Rand, alphabet []string, size int, shuffled bool) *bpe {
	tokens, _ := randomTokens(rng, alphabet, size)
	var multi []string
	for _, s := range tokens {
		if len(s) > 1 {
			multi = append(multi, s)
		}
	}
	if shuffled {
		rng.Shuffle(len(multi), func(i, j int) { multi[i], multi[j] = multi[j], multi[i] })
	}
	m := &bpe{byteLevel: true, rankIsID: true, ignoreMerges: true, unk: -1, vocab: map[string]int32{}}
	for b := range 256 {
		m.byteIDs[b], m.fallbackIDs[b] = int32(b), -1
		m.vocab[string([]byte{byte(b)})] = int32(b)
	}
	for i, s := range multi {
		m.vocab[s] = int32(256 + i)
	}
	return m
}

// entriesByID maps the ids of a model's searched tokens to their entries.
func entriesByID(bt *backtrack) map[int32]int32 {
	out := map[int32]int32{}
	for e := range bt.toks {
		if bt.toks[e].n() > 0 {
			out[bt.idOf[e]] = int32(e)
		}
	}
	return out
}

// pairValid asks bt whether the searched tokens a then b (entries), over
// the symbols syms, make a valid pair.
func pairValid(bt *backtrack, syms []int32, a, b int32) bool {
	var sc backtrackScratch
	codes := sc.grow(len(syms))
	for i, s := range syms {
		codes[i] = bt.code[s]
	}
	bt.match(&sc)
	return bt.validAt(&sc, int(bt.toks[a].n()), a, b)
}

// TestBacktrackTablesMatchMerging holds the tables to merging itself: a
// searched token's symbols merge into it alone, and two searched tokens'
// symbols merge into the two exactly when the tables call the pair valid
// (pairs found side by side in merged words, and pairs of one with a
// shorter or random other). The vocabularies the tables refuse are those
// with end_of_word_suffix; none of the real ones here.
func TestBacktrackTablesMatchMerging(t *testing.T) {
	for name, m := range backtrackModels(t) {
		bt := m.backtracker()
		if bt == nil {
			t.Errorf("%s: tables refused", name)
			continue
		}
		rng := rand.New(rand.NewPCG(11, uint64(len(name))))
		byID := entriesByID(bt)
		var searched []int32
		for _, e := range byID {
			searched = append(searched, e)
		}
		slices.Sort(searched)
		texts := make(map[int32]string, len(m.vocab))
		for s, id := range m.vocab {
			texts[id] = s
		}
		// symsOf is a searched token's symbols.
		symsOf := func(e int32) []int32 {
			if bt.toks[e].n() == 1 && bt.toks[e].rank() == 0 {
				return []int32{bt.idOf[e]}
			}
			syms, _ := m.symbols(nil, nil, texts[bt.idOf[e]])
			return syms
		}
		merged := func(syms []int32) []int32 {
			sc := &bpeScratch{ids: slices.Clone(syms), starts: make([]int32, len(syms))}
			for i := range sc.starts {
				sc.starts[i] = int32(i) // byte-level: a symbol a byte
			}
			var text []byte
			if m.rankIsID {
				for _, s := range syms {
					text = append(text, texts[s]...)
				}
			}
			return slices.Clone(m.mergeHeap(sc, string(text)))
		}
		samples := min(len(searched), 3000/raceScale)
		for _, e := range rng.Perm(len(searched))[:samples] {
			tok := searched[e]
			if got := merged(symsOf(tok)); !slices.Equal(got, []int32{bt.idOf[tok]}) {
				t.Fatalf("%s: token %d (%q) merges into %v alone", name, bt.idOf[tok], texts[bt.idOf[tok]], got)
			}
		}
		checkPair := func(a, b int32) {
			syms := append(symsOf(a), symsOf(b)...)
			want := slices.Equal(merged(syms), []int32{bt.idOf[a], bt.idOf[b]})
			if got := pairValid(bt, syms, a, b); got != want {
				t.Fatalf("%s: %q then %q: valid %t, merging says %t", name, texts[bt.idOf[a]], texts[bt.idOf[b]], got, want)
			}
		}
		for _, alphabet := range longWordAlphabets {
			ids := wholeWord(m, randomWord(rng, alphabet, 200))
			for i := 1; i < len(ids); i++ {
				a, okA := byID[ids[i-1]]
				b, okB := byID[ids[i]]
				if !okA || !okB {
					continue
				}
				checkPair(a, b)
				if s := bt.toks[b].shorter; s >= 0 {
					checkPair(a, s)
				}
				if s := bt.toks[a].shorter; s >= 0 {
					checkPair(s, b)
				}
			}
		}
		for range 2000 / raceScale {
			checkPair(searched[rng.IntN(len(searched))], searched[rng.IntN(len(searched))])
		}
	}
}

// backtrackWord is a word of n bytes or more of one of kinds: an alphabet
// of long words, random bytes, or random tokens of the vocabulary.
func backtrackWord(rng *rand.Rand, pieces []string, kind, n int) string {
	switch {
	case kind < len(longWordAlphabets):
		return randomWord(rng, longWordAlphabets[kind], n)
	case kind == len(longWordAlphabets):
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	default:
		return randomWord(rng, pieces, n)
	}
}

const backtrackWordKinds = 13 // the alphabets, random bytes, tokens

// TestBacktrackMatchesWholeWord: merged by backtracking, in batches of
// windows of the real size and of small ones (where windows often share
// no token and the word goes on a window at a time), a word of 1 to 20k
// bytes of every kind gets exactly the tokens the heap gives it whole;
// and a window's symbols merged by backtracking alone get the heap's
// tokens whenever the search finds a chain (it misses only with a token
// it does not search for).
func TestBacktrackMatchesWholeWord(t *testing.T) {
	windows := [][2]int{{longWindow, longOverlap}, {64, 8}, {8, 2}}
	for name, m := range backtrackModels(t) {
		bt := m.backtracker()
		if bt == nil {
			continue
		}
		var pieces []string
		for s := range m.vocab {
			pieces = append(pieces, s)
		}
		slices.Sort(pieces)
		rng := rand.New(rand.NewPCG(13, uint64(len(name))))
		sc := &bpeScratch{}
		var bs backtrackScratch
		served, tried := 0, 0
		for kind := range backtrackWordKinds {
			for range 4 / raceScale {
				n := int(math.Exp(rng.Float64() * math.Log(20000)))
				word := backtrackWord(rng, pieces, kind, n)
				want := wholeWord(m, word)
				for _, w := range windows {
					if got := m.appendLong(nil, word, sc, w[0], w[1], nil, bt, false); !slices.Equal(got, want) {
						t.Fatalf("%s, window %d overlap %d, %q (%d bytes): %d tokens, merged whole %d\n got  %v\n want %v",
							name, w[0], w[1], abbreviate(word), len(word), len(got), len(want), head(got), head(want))
					}
				}
				syms, _ := m.symbols(nil, nil, word)
				if len(syms) == 0 {
					continue
				}
				got, _, ok := bt.encode(&bs, syms, nil, nil)
				if ok && !slices.Equal(got, want) {
					t.Fatalf("%s, %q alone: %v, want %v", name, abbreviate(word), head(got), head(want))
				}
				tried++
				if ok {
					served++
				}
			}
		}
		// The search must run, not leave every word to the heap: o200k's
		// tokens are all searched for, so it serves every word.
		if served == 0 || name == "builtin" && served != tried {
			t.Errorf("%s: the search served %d of %d words", name, served, tried)
		}
	}
}

// TestLongTablesAfterThreshold: a model builds its tables only once the
// heap has done btBuildAfter merges of long words, then keeps them; a
// word takes them up halfway, from the window it joined last, and gets
// the same tokens.
func TestLongTablesAfterThreshold(t *testing.T) {
	m := chainModel(t, 8)
	for seen := 0; seen+1000 < btBuildAfter; seen += 1000 {
		if m.longTables(1000) != nil {
			t.Fatalf("tables after %d merges", seen+1000)
		}
	}
	if m.longTables(1000) == nil || m.longTables(0) == nil {
		t.Fatal("no tables past the threshold")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	switching := map[string]*bpe{
		"random-chars": randomModel(t, rng, strings.Split("ab", ""), 100, false, false),
		"random-bytes": randomModel(t, rng, strings.Split("abc", ""), 200, true, true),
		"random-ids":   randomRankModel(rng, strings.Split("abc", ""), 200, false),
	}
	for name, m := range switching {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, alphabet := range longWordAlphabets[:5] {
			word := randomWord(rng, alphabet, 3000)
			want := wholeWord(m, word)
			// Reached after the first window, or some windows in (but
			// a word that repeats itself merges little by the heap).
			for _, short := range []int64{1, 300} {
				m.back = backtrackOnce{}
				m.back.merges.Store(btBuildAfter - short)
				got := m.appendLong(nil, word, &bpeScratch{}, 64, 8, nil, nil, true)
				first, _ := m.symbols(nil, nil, word[:64])
				merges := len(wholeWord(m, word[:64])) < len(first) // in the first window
				if built := m.back.built.Load() != nil; !slices.Equal(got, want) || short == 1 && merges && !built {
					t.Fatalf("%s, %q, %d merges short: %v, want %v (tables built: %t)", name, abbreviate(word), short, head(got), head(want), built)
				}
				// The tokens' array is sized from the bytes done so far,
				// which the batches must keep counting.
				if cap(got) > 2*len(got)+64 {
					t.Errorf("%s, %q, %d merges short: %d tokens in an array of %d", name, abbreviate(word), short, len(got), cap(got))
				}
			}
		}
	}
}

// FuzzBacktrack: any word, merged in batches of small windows by
// backtracking, gets the heap's tokens under the builtin and under a
// random vocabulary with irregular tokens.
func FuzzBacktrack(f *testing.F) {
	for _, s := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "0123456789012345678901234567890", "漢字漢字漢字漢字漢字", "\xff\xfea\ufffd\xff", "abcabcabcabcabcabcbbbcccaaa"} {
		f.Add(s)
	}
	models := map[string]*bpe{
		"builtin": sharedO200k(f).model,
		"random":  randomModel(f, rand.New(rand.NewPCG(1, 2)), strings.Split("abc", ""), 200, true, true),
	}
	f.Fuzz(func(t *testing.T, word string) {
		for name, m := range models {
			bt := m.backtracker()
			if bt == nil {
				t.Fatalf("%s: tables refused", name)
			}
			want := wholeWord(m, word)
			for _, w := range [][2]int{{16, 4}, {64, 8}} {
				if got := m.appendLong(nil, word, &bpeScratch{}, w[0], w[1], nil, bt, false); !slices.Equal(got, want) {
					t.Fatalf("%s, window %d: %v, want %v", name, w[0], head(got), head(want))
				}
			}
		}
	})
}

// TestBacktrackRefusesUnseenMerges: the tables are refused where merges
// make a token the trie cannot see them make (the heap would merge what
// the search calls a valid pair): a byte fallback whose text the merges
// spell, and a token with two texts; the same vocabularies without that
// merge are served, and every window of their words gets the heap's
// tokens.
func TestBacktrackRefusesUnseenMerges(t *testing.T) {
	chars := map[string]int{"<unk>": 0, "<0xC3>": 1, "<": 2, "0": 3, "x": 4, "C": 5, "3": 6, ">": 7, "<0": 8, "<0x": 9, "<0xC": 10, "<0xC3": 11}
	spell := []string{"< 0", "<0 x", "<0x C", "<0xC 3"}
	twoTexts := map[string]int{"<unk>": 0, "a": 1, "b": 2, "c": 3, "d": 4, "ab": 5, "cd": 5, "bc": 6}
	for _, tc := range []struct {
		name    string
		vocab   map[string]int
		merges  []string
		refused bool
	}{
		{"a byte fallback the merges spell", chars, append(slices.Clone(spell), "<0xC3 >"), true},
		{"a byte fallback no merge makes", chars, spell, false},
		{"a token with two texts, made", twoTexts, []string{"a b", "c d"}, true},
		{"a token with two texts, never made", twoTexts, []string{"b c"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := map[string]any{"type": "BPE", "vocab": tc.vocab, "merges": tc.merges, "unk_token": "<unk>", "byte_fallback": true}
			tok, err := ParseHF(tinyJSON(t, model, nil), "refuse")
			if err != nil {
				t.Fatal(err)
			}
			m := tok.model
			bt := m.backtracker()
			if (bt == nil) != tc.refused {
				t.Fatalf("tables refused: %t, want %t", bt == nil, tc.refused)
			}
			if bt == nil {
				return
			}
			word := strings.Repeat("<0xC3>abcd", 40)
			if got, want := m.appendLong(nil, word, &bpeScratch{}, 16, 4, nil, bt, false), wholeWord(m, word); !slices.Equal(got, want) {
				t.Errorf("%v, want %v", head(got), head(want))
			}
		})
	}
}
