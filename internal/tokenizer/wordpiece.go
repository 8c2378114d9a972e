package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// wordPiece is the WordPiece model (BERT, MiniLM, BGE, E5): each word is
// cut greedily into the longest pieces of the vocabulary from its start,
// the pieces after the first written with the continuing-subword prefix
// ("##"); a word with a part no piece matches, or longer than
// maxChars characters, is the unknown token alone.
type wordPiece struct {
	// first holds the vocabulary, cont the pieces that continue a word,
	// keyed without their prefix, so a piece is looked up as a slice of
	// the word.
	first, cont       map[string]int32
	maxFirst, maxCont int // the longest key of each, in bytes
	unk               int32
	maxChars          int
}

func newWordPiece(vocab map[string]int32, unk, prefix string, maxChars int) (*wordPiece, error) {
	if maxChars < 0 {
		return nil, fmt.Errorf("max_input_chars_per_word %d is negative", maxChars)
	}
	m := &wordPiece{first: vocab, cont: map[string]int32{}, maxChars: maxChars}
	for s, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("token %q has the negative id %d", s, id)
		}
		m.maxFirst = max(m.maxFirst, len(s))
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			m.cont[rest] = id
			m.maxCont = max(m.maxCont, len(rest))
		}
	}
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("unk_token %q is not in the vocabulary", unk)
	}
	m.unk = id
	return m, nil
}

func (m *wordPiece) appendWord(dst []int32, word string) []int32 {
	if len(word) > m.maxChars && utf8.RuneCountInString(word) > m.maxChars {
		return append(dst, m.unk)
	}
	base := len(dst)
	vocab, longest := m.first, m.maxFirst
	for start := 0; start < len(word); {
		// The longest slice that could be a piece, cut back to a whole
		// character, then one character shorter each time.
		end := len(word)
		if end-start > longest {
			end = start + longest
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		for end > start {
			if id, ok := vocab[word[start:end]]; ok {
				dst = append(dst, id)
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if end == start {
			return append(dst[:base], m.unk)
		}
		start = end
		vocab, longest = m.cont, m.maxCont
	}
	return dst
}

// wordPieceDecoder is the WordPiece decoder: pieces after the first lose
// their prefix and join the piece before, other tokens are separated by a
// space, and with cleanup the spaces English puts no space before (" .",
// " n't", …) are removed, token by token.
type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

func (d wordPieceDecoder) decode(b *strings.Builder, i int, token string) {
	if i > 0 {
		if rest, ok := strings.CutPrefix(token, d.prefix); ok {
			token = rest
		} else {
			token = " " + token
		}
	}
	if d.cleanup {
		token = cleanupToken(token)
	}
	b.WriteString(token)
}

// cleanupToken applies the reference's replacements one after the other,
// as it does (not all at once, as a strings.Replacer would).
func cleanupToken(s string) string {
	if !strings.Contains(s, " ") {
		return s
	}
	for _, r := range [...][2]string{{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}
