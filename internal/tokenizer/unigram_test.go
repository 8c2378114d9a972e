package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// TestUnigramViterbiByHand: ten pieces whose best paths are worked out by
// hand (scores add; the unk score is the lowest score less 10 = -15).
func TestUnigramViterbiByHand(t *testing.T) {
	vocab := unigramVocab{
		{"<unk>", 0}, {"a", -1}, {"b", -2}, {"c", -1.5}, {"ab", -2.5},
		{"abc", -5}, {"bc", -1}, {"d", -3}, {"cd", -4}, {"abcd", -4.5},
	}
	// Ten pieces, min score -5: unk = -15.
	unk := 0
	m, err := newUnigram(vocab, &unk, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want []int32
	}{
		// ab: a+b = -3 < ab = -2.5.
		{"ab", []int32{4}},
		// abc: a+bc = -2, ab+c = -4, abc = -5, a+b+c = -4.5: a bc.
		{"abc", []int32{1, 6}},
		// abcd: abcd = -4.5, a+bc+d = -5, ab+cd = -6.5: abcd.
		{"abcd", []int32{9}},
		// x is unknown (-15); xy fuse into one unk.
		{"axyb", []int32{1, 0, 2}},
		// bcbc: bc+bc = -2.
		{"bcbc", []int32{6, 6}},
		// A tie: "c d" vs "cd" both -4.5? c+d = -4.5, cd = -4: cd.
		{"cd", []int32{8}},
		{"", nil},
		// The literal <unk> piece fuses with the unknown é after it.
		{"é", []int32{0}},
	} {
		var sc unigramScratch
		if got := m.appendWord(nil, c.in, &sc); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.in, got, c.want)
		}
	}
	// Equal scores: the longer piece, found first from the earlier start,
	// keeps the node (a strict > replaces).
	tie := unigramVocab{{"<unk>", 0}, {"x", -1}, {"y", -1}, {"xy", -2}}
	m, err = newUnigram(tie, &unk, false)
	if err != nil {
		t.Fatal(err)
	}
	var sc unigramScratch
	if got := m.appendWord(nil, "xy", &sc); !slices.Equal(got, []int32{1, 2}) {
		// From start 0: x reaches 1 (-1), xy reaches 2 (-2); from 1: y
		// gives -2 at 2, not greater: xy stays.
		if !slices.Equal(got, []int32{3}) {
			t.Errorf("tie: got %v", got)
		}
	}
	// Byte fallback spells a fused unknown run in <0xXX> pieces, unless one
	// of its bytes has none.
	bf := unigramVocab{{"<unk>", 0}, {"a", -1}, {"<0xC3>", -2}, {"<0xA9>", -2}}
	m, err = newUnigram(bf, &unk, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.appendWord(nil, "aéa", &sc); !slices.Equal(got, []int32{1, 2, 3, 1}) {
		t.Errorf("byte fallback: got %v", got)
	}
	if got := m.appendWord(nil, "aèa", &sc); !slices.Equal(got, []int32{1, 0, 1}) {
		t.Errorf("byte fallback without every byte: got %v", got)
	}
}

// dartsCharsmap serializes a precompiled_charsmap: a darts-clone double
// array (each node's children in a fresh block of 256 units, so that
// child = base ^ label and the leaf value at base ^ 0) and the
// NUL-terminated replacements.
func dartsCharsmap(t *testing.T, rules map[string]string) string {
	t.Helper()
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var normalized []byte
	values := map[string]uint32{}
	for _, k := range keys {
		values[k] = uint32(len(normalized))
		normalized = append(append(normalized, rules[k]...), 0)
	}
	units := make([]uint32, 256)
	blocks := 1
	var place func(pos uint32, prefix string, label byte)
	place = func(pos uint32, prefix string, label byte) {
		var labels []byte
		for _, k := range keys {
			if len(k) > len(prefix) && strings.HasPrefix(k, prefix) && (len(labels) == 0 || labels[len(labels)-1] != k[len(prefix)]) {
				labels = append(labels, k[len(prefix)])
			}
		}
		_, leaf := values[prefix]
		if len(labels) == 0 && !leaf {
			units[pos] = uint32(label)
			return
		}
		base := uint32(blocks * 256)
		blocks++
		units = append(units, make([]uint32, 256)...)
		u := (pos^base)<<10 | uint32(label)
		if leaf && prefix != "" {
			u |= 1 << 8
			units[base] = 1<<31 | values[prefix]
		}
		units[pos] = u
		for _, c := range labels {
			place(base^uint32(c), prefix+string([]byte{c}), c)
		}
	}
	place(0, "", 0)
	blob := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
	for _, u := range units {
		blob = binary.LittleEndian.AppendUint32(blob, u)
	}
	return base64.StdEncoding.EncodeToString(append(blob, normalized...))
}

// TestPrecompiledByHand: a charsmap built here, normalizations worked out
// from the reference's rules.
func TestPrecompiledByHand(t *testing.T) {
	p, err := parsePrecompiled(dartsCharsmap(t, map[string]string{
		"Ａ":       "A",
		"ﬁ":       "fi",
		"e\u0301": "é",
		"\t":      " ",
		"x":       "",
		"xy":      "Z", // never used: the shortest prefix wins
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"plain tea", "plain tea"},
		{"ＡＡ", "AA"},
		{"ﬁne", "fine"},
		{"e\u0301", "é"},   // the cluster is a key
		{"Ａ\u0301b", "Ab"}, // the cluster's prefix Ａ is a key: the mark goes
		// A cluster of 6 bytes or more goes character by character.
		{"Ａ\u0301\u0301", "A\u0301\u0301"},
		{"a\tb", "a b"},
		{"xy", "y"},     // x alone is a cluster: "" and y
		{"x\u0301", ""}, // x + mark is one cluster, its prefix x is a key
		{"\r\n", "\r\n"},
		{"\x00Ａ", "\x00A"},
	} {
		if got := p.normalize(c.in); got != c.want {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// unigramStrings are hostile strings for the Unigram files: scripts no
// piece covers, emoji sequences, combining marks, compatibility and
// fullwidth forms, long runs, NUL and U+FFFD, piece look-alikes.
func unigramStrings() []string {
	pieces := []string{
		"ሰላም", "ᏣᎳᎩ", "𐀀𐀁", "𗀀", "ꦗꦮ", "ᚠᚢᚦ", "𓀀", "👩‍👩‍👧", "👍🏽", "🇫🇷🇩🇪", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "©\u200d©", "❤️",
		"e\u0301", "a\u0300\u0301\u0302", "Ａ\u0301", "ﬁ\u0301", "\u0301", "ｈｅｌｌｏ", "ﾊﾝｶｸ", "①②", "㍿", "Ⅻ", "ℌ", "µ", "ß",
		"\u0600a", "क्षि", "한국어", "\u1100\u1161\u11a8", "\x00", "\ufffd", "\r\n", "\t", "\u00a0", "\u3000", "\u200b", "\u00ad",
		"<unk>", "<0x41>", "▁", "▁▁", "``quoted''", "  ", "   ", "[CLS]", "[MASK]", "<pad>", "</s>", "İ", "ǅ", "Ω", "ﷺ",
		"don't", "3.14", "x86_64", "hello", "World", " ", "—", "…", "€", "£",
	}
	rng := rand.New(rand.NewPCG(40, 2))
	out := []string{
		strings.Repeat("a", 5000), strings.Repeat("ab ", 2000), strings.Repeat("ሰ", 1000), strings.Repeat("e\u0301", 500),
		strings.Repeat(" ", 300), strings.Repeat("\x00", 50), strings.Repeat("👍🏽", 200), strings.Repeat("<unk>", 100),
	}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) + 1 {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		out = append(out, b.String())
	}
	return out
}

// unigramFiles has the reference write the Unigram files (make_unigram.mjs:
// real SentencePiece models' pieces, scores and charsmaps in the Hugging
// Face converters' layouts) into a temporary folder.
func unigramFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	nodetest.Run(t, referenceDir, nil, "make_unigram.mjs", dir)
	return dir
}

var unigramModels = []string{"albert", "t5style", "xlmr_bytes"}

// TestMatchesReferenceUnigram encodes the reference corpus and the hostile
// strings with each Unigram file and with the reference library: the ids
// must be identical.
func TestMatchesReferenceUnigram(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, _ := referenceStrings(t)
	strs = append(strs, unigramStrings()...)
	raw, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	dir := unigramFiles(t)
	for _, model := range unigramModels {
		t.Run(model, func(t *testing.T) {
			path := filepath.Join(dir, model+".json")
			tok := sharedHF(t, path, model)
			compareIDs(t, model, tok, strs, nodetest.Run(t, referenceDir, raw, "encode.mjs", path))
		})
	}
}

// TestPrecompiledMatchesReference normalizes the corpus with the real
// charsmaps, here and in the reference's Precompiled normalizer.
func TestPrecompiledMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, _ := referenceStrings(t)
	strs = append(strs, unigramStrings()...)
	raw, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	dir := unigramFiles(t)
	for _, name := range []string{"albert", "smart"} {
		path := filepath.Join(dir, name+".charsmap")
		blob, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parsePrecompiled(base64.StdEncoding.EncodeToString(blob))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		if err := json.Unmarshal(nodetest.Run(t, referenceDir, raw, "normalize_precompiled.mjs", path), &want); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, s := range strs {
			if got := p.normalize(s); got != want[i] {
				if bad++; bad <= 5 {
					t.Errorf("%s: normalize(%q) = %q, want %q", name, s, got, want[i])
				}
			}
		}
		t.Logf("%s: %d strings, %d mismatches", name, len(strs), bad)
	}
}

// BenchmarkUnigramCount counts a 4 KB chunk of English with the Unigram
// files (ALBERT's layout: eight normalizers with Precompiled; T5's: only
// Precompiled), when the reference packages are installed to make them.
func BenchmarkUnigramCount(b *testing.B) {
	if _, ok := nodetest.Installed(referenceDir); !ok {
		b.Skip("the reference packages are not installed (run TestMatchesReferenceUnigram once)")
	}
	data, err := os.ReadFile("../dataset/corpus/moby_dick.txt")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data[10000 : 10000+4096])
	dir := b.TempDir()
	nodetest.Run(b, referenceDir, nil, "make_unigram.mjs", dir)
	for _, model := range []string{"albert", "t5style"} {
		tok, err := LoadHF(filepath.Join(dir, model+".json"), model)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(model, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(text)
			}
		})
	}
}
