package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

// deepseekPreTokenizer is DeepSeek V3's pre_tokenizer, as its
// tokenizer.json writes it.
const deepseekPreTokenizer = `{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]}`

var deepseekPatterns = map[string]string{"numbers": deepseekNumbers, "cjk": deepseekCJK, "words": deepseekWords}

// deepseekPieces add to the tricky pieces those DeepSeek's classes meet:
// kana and ideographs inside and just outside its ranges, CJK and other
// punctuation, symbols, controls, a private-use character.
var deepseekPieces = append(slices.Clone(trickyPieces), "の", "ゟ", "゠", "ヿ", "一", "龥", "龦", "㐀", "、", "。", "「", "€", "©", "+", "`", "~", "\x00", "\x7f", "\ue000", "\xe6", "12a", "_x", "$Y")

func randomDeepseek(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(24) + 1 {
		b.WriteString(deepseekPieces[rng.IntN(len(deepseekPieces))])
	}
	return b.String()
}

// TestDeepseekPatternsAreFast: DeepSeek V3's pre-tokenizer, read from its
// tokenizer.json, runs on the hand-written matchers, not the backtracking
// engine (which holds every character of the text as a rune and its
// offset, 12 bytes, three times over, and is slower by far).
func TestDeepseekPatternsAreFast(t *testing.T) {
	pre, _, err := parsePreTokenizer([]byte(deepseekPreTokenizer))
	if err != nil {
		t.Fatal(err)
	}
	seq, ok := pre.(preTokenizerSeq)
	if !ok {
		t.Fatalf("%T, want a sequence", pre)
	}
	for _, p := range seq {
		if sp, ok := p.(splitter); ok {
			if _, slow := sp.pat.(regex); slow {
				t.Errorf("a DeepSeek pattern runs on the backtracking engine")
			}
		}
	}
}

// TestDeepseekPatternsMatchRegex holds DeepSeek's matchers to the
// backtracking engine on 20,000 random strings of the tricky pieces.
func TestDeepseekPatternsMatchRegex(t *testing.T) {
	for name, expr := range deepseekPatterns {
		fast := fastPattern(expr)
		if fast == nil {
			t.Fatalf("%s: no fast matcher", name)
		}
		slow := regex{regexp2.MustCompile(expr, regexp2.None)}
		rng := rand.New(rand.NewPCG(2, uint64(len(name))))
		for range 20000 {
			s := randomDeepseek(rng)
			if got, want := fast.matches(nil, s), slow.matches(nil, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\n fast  %v\n regex %v", name, s, got, want)
			}
		}
	}
}

// TestBMPClassTable: the table holds classOfRune's answer for every rune
// below U+10000.
func TestBMPClassTable(t *testing.T) {
	table := bmpClass()
	for r := range rune(1 << 16) {
		if got, want := table[r], classOfRune(r); got != want {
			t.Fatalf("U+%04X: table %08b, classOfRune %08b", r, got, want)
		}
	}
}

func FuzzDeepseekPatterns(f *testing.F) {
	for _, s := range []string{"Hello world's", "漢字のア12345", "$Yes _x 1a", " ?!\r\n/", "a\u0301b\x00c", "\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, expr := range deepseekPatterns {
			if got, want := fastPattern(expr).matches(nil, s), regexMatches(t, expr, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\n fast  %v\n regex %v", name, s, got, want)
			}
		}
	})
}
