package tokenizer

import (
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words is llmbench's own deterministic word tokenizer, --tokenizer
// llmbench:words: not any model's, but simple enough to count by hand, so
// tests can know their token counts without a vocabulary.
//
// Counting rule: a token is a maximal run of letters and digits, or any
// single other non-space character; white space only separates tokens.
// So "Hello, world!" is 4 tokens: "Hello" "," "world" "!".
//
// Its vocabulary is VocabSize pronounceable two-syllable lower-case words
// ("bako", "tire", …), each one token, so text made by Decode has exactly as
// many tokens as ids were decoded. The zero value is ready to use.
type Words struct{}

const (
	consonants = "bcdfghjklmnprstvwz"
	vowels     = "aeiou"
	syllables  = len(consonants) * len(vowels)
)

// VocabSize is the number of words in the builtin vocabulary.
const VocabSize = syllables * syllables

// WordsName is the --tokenizer value that selects Words: not a path, not a
// Hugging Face model id (those have no colon).
const WordsName = "llmbench:words"

// Name identifies the tokenizer in exported configuration.
func (Words) Name() string { return WordsName }

// VocabSize is the number of distinct ids Decode accepts.
func (Words) VocabSize() int { return VocabSize }

// Count returns the number of tokens in text. It does not allocate.
func (Words) Count(text string) int {
	n := 0
	inWord := false
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case isWordRune(r):
			if !inWord {
				n++
				inWord = true
			}
		case isSpace(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\v' || r == '\f'
	}
	return unicode.IsSpace(r)
}

// Word returns the vocabulary word for id (taken modulo VocabSize).
func (t Words) Word(id int) string {
	var b [4]byte
	return string(t.AppendWord(b[:0], id))
}

// Encode gives each token of text an id whose word Decode writes: the
// text of Decode(Encode(s)) differs from s, its count does not.
func (t Words) Encode(text string) []int {
	var ids []int
	start, inWord := 0, false
	flush := func(end int) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(text[start:end]))
		ids = append(ids, int(h.Sum32()%uint32(VocabSize)))
	}
	for i, r := range text {
		switch {
		case isWordRune(r):
			if !inWord {
				start, inWord = i, true
			}
			continue
		case inWord:
			flush(i)
			inWord = false
		}
		if !isSpace(r) {
			start = i
			flush(i + utf8.RuneLen(r))
		}
	}
	if inWord {
		flush(len(text))
	}
	return ids
}

// Decode joins the words for ids with single spaces.
func (t Words) Decode(ids []int) string {
	var sb strings.Builder
	sb.Grow(len(ids) * 5)
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(t.Word(id))
	}
	return sb.String()
}

// AppendWord appends the vocabulary word for id to dst, without allocating.
func (Words) AppendWord(dst []byte, id int) []byte {
	id %= VocabSize
	if id < 0 {
		id += VocabSize
	}
	first, second := id/syllables, id%syllables
	return append(dst,
		consonants[first/len(vowels)], vowels[first%len(vowels)],
		consonants[second/len(vowels)], vowels[second%len(vowels)])
}
