package tokenizer

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

var updateClipFalcon = flag.Bool("update-clip-falcon", false, "rewrite testdata/clip_falcon/ from the reference library")

// clipFalconModels are a CLIP-style and a Falcon-style tokenizer.json
// (make_clip_falcon.mjs: the families' normalizers, pre-tokenizers,
// decoders and BPE settings around a small learnt vocabulary), kept
// gzipped in testdata/clip_falcon/.
var clipFalconModels = []string{"clip", "falcon"}

// TestMakeClipFalconFiles, with -update-clip-falcon, writes the files
// afresh from the embedded corpus and the reference strings.
func TestMakeClipFalconFiles(t *testing.T) {
	if !*updateClipFalcon {
		t.Skip("rewrites testdata/clip_falcon/ with -update-clip-falcon")
	}
	makeFixtures(t, "make_clip_falcon.mjs", "clip_falcon", clipFalconModels, clipFalconStrings())
}

// clipFalconPieces are where the two families decide: CLIP's white-space
// runs, case, contractions, single digits and the "</w>" suffix written
// out; Falcon's punctuation runs, digit runs cut in threes, and the
// characters whose UTF-8 bytes stand for numbers (¹²³¼½¾ are C2 B9, C2 B2
// …) or punctuation (« » ¿ ¡ · §) once ByteLevel has mapped them.
var clipFalconPieces = []string{
	"</w>", "a</w>", "<|startoftext|>", "<|endoftext|>", "<|ENDOFTEXT|>", ">>TITLE<<", ">>title<<", ">>ANSWER<<",
	"Don't", "WE'LL", "she'd", "'s", "'S", "I'M", "HELLO", "Straße", "İstanbul", "ΣΑΣ", "e\u0301", "\u212b",
	"12345678", "1234567", "0", "٣٤٥", "१२३", "3.14159", "1,000,000", "x86_64", "½", "¼¾", "²³¹", "2²", "µ", "ª",
	"...", "?!", "!!!", "--", "—", "–", "«»", "¿¡", "·", "§¶", "(a)", "[[x]]", "{\"k\": 1}", "a.b,c;d", "::", "->", "#!", "@@",
	"\t", "\n\n", "  ", "\u00a0", "\u3000", "\r\n", " \t ", "\u2028", "\u0085",
	"café", "naïve", "日本語", "한국어", "العربية", "🙂", "👍🏽", "🇫🇷", "ﬁ", "Ⅻ", "①②",
}

// clipFalconStrings are 2,000 seeded random mixtures of those pieces and
// the general tricky ones.
func clipFalconStrings() []string { return mixedStrings(rand.NewPCG(41, 9), clipFalconPieces) }

// longWordStrings are words longer than a window of the long-word merge
// (longWindow bytes), which CLIP's suffix must reach only at its end:
// repeated and seeded random letters, accented ones, and a number.
func longWordStrings() []string {
	rng := rand.New(rand.NewPCG(17, 4))
	random := func(alphabet string, n int) string {
		letters := []rune(alphabet)
		var b strings.Builder
		for range n {
			b.WriteRune(letters[rng.IntN(len(letters))])
		}
		return b.String()
	}
	return []string{
		strings.Repeat("lowerthe", 1200),
		"x" + strings.Repeat("é", 3000) + "s",
		random("etaoinshrdlu", 9000),
		random("etaoinshrdluéàüßñ", 6000) + " " + random("abc", 5000),
		strings.Repeat("1234567890", 600),
		strings.Repeat("a", 10000),
	}
}

// TestMatchesReferenceClipFalcon is TestMatchesReferenceTokenizers for the
// CLIP and Falcon families, with their pieces added to the corpus, and
// decoding (CLIP's BPEDecoder, Falcon's ByteLevel) held to the reference
// too.
func TestMatchesReferenceClipFalcon(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, _ := referenceStrings(t)
	strs = append(strs, clipFalconStrings()...)
	strs = append(strs, longWordStrings()...)
	raw, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range clipFalconModels {
		t.Run(model, func(t *testing.T) {
			path := gunzipFixture(t, "clip_falcon", model)
			tok := sharedHF(t, path, model)
			compareIDs(t, model, tok, strs, nodetest.Run(t, referenceDir, raw, "encode.mjs", path))
			for k, s := range strs {
				if k%raceScale == 0 || len(s) > longWindow {
					if got, want := tok.Count(s), len(tok.Encode(s)); got != want {
						t.Errorf("%s on %q: Count %d, len(Encode) %d", model, abbreviate(s), got, want)
					}
				}
			}
			// Falcon's ByteLevel decoder makes text of the bytes with
			// U+FFFD for any that are no UTF-8, which Decode (raw bytes,
			// as for every byte-level file) leaves as they are: only
			// decodings that are whole UTF-8 are compared there.
			compareDecodes(t, model, tok, path, strs, model == "falcon")
		})
	}
}
