package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before pre-tokenization, as tokenizer.json's
// "normalizer" declares.
type normalizer interface {
	normalize(s string) string
}

type unicodeForm struct{ form norm.Form }

func (n unicodeForm) normalize(s string) string { return n.form.String(s) }

// nfdForm is NFD as the reference's Unicode tables have it (bert.go).
type nfdForm struct{}

func (nfdForm) normalize(s string) string { return nfd(s) }

type prepend string

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type replace struct {
	pat     pattern
	content string
}

func (r replace) normalize(s string) string {
	ms := r.pat.matches(nil, s)
	if len(ms) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(ms)*len(r.content))
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(r.content)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

type strip struct{ left, right bool }

func (st strip) normalize(s string) string {
	if st.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if st.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

type normalizerSeq []normalizer

func (seq normalizerSeq) normalize(s string) string {
	for _, n := range seq {
		s = n.normalize(s)
	}
	return s
}

// patternJSON is tokenizer.json's {"String": …} or {"Regex": …}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p patternJSON) compile() (pattern, error) {
	switch {
	case p.String != nil:
		return literal(*p.String), nil
	case p.Regex != nil:
		return compileRegex(*p.Regex)
	}
	return nil, fmt.Errorf("pattern has neither String nor Regex")
}

type normalizerJSON struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
	Prepend     string            `json:"prepend"`
	Pattern     patternJSON       `json:"pattern"`
	Content     string            `json:"content"`
	StripLeft   bool              `json:"strip_left"`
	StripRight  bool              `json:"strip_right"`
	// BertNormalizer's; absent is true, and a null strip_accents follows
	// lowercase.
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
	// Precompiled's SentencePiece charsmap, base64.
	PrecompiledCharsmap *string `json:"precompiled_charsmap"`
}

func orTrue(b *bool) bool { return b == nil || *b }

// parseNormalizer builds the normalizer raw declares; nil for none.
func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var j normalizerJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch j.Type {
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return nfdForm{}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Prepend":
		return prepend(j.Prepend), nil
	case "Replace":
		p, err := j.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return replace{p, j.Content}, nil
	case "Strip":
		return strip{j.StripLeft, j.StripRight}, nil
	case "BertNormalizer":
		n := bertNormalizer{cleanText: orTrue(j.CleanText), chineseChars: orTrue(j.HandleChineseChars), lowercase: orTrue(j.Lowercase)}
		n.stripAccents = n.lowercase
		if j.StripAccents != nil {
			n.stripAccents = *j.StripAccents
		}
		return n, nil
	case "Lowercase":
		return lowercaseNorm{}, nil
	case "Precompiled":
		if j.PrecompiledCharsmap == nil {
			return nil, errors.New("normalizer Precompiled has no precompiled_charsmap")
		}
		return parsePrecompiled(*j.PrecompiledCharsmap)
	case "StripAccents":
		return stripAccentsNorm{}, nil
	case "Sequence":
		var seq normalizerSeq
		for _, r := range j.Normalizers {
			n, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		if len(seq) == 0 {
			return nil, nil
		}
		return seq, nil
	}
	return nil, unsupported("normalizer", j.Type)
}

// unsupported is the error for a component llmbench cannot run exactly:
// a tokenizer that would miscount is refused, never approximated.
func unsupported(kind, typ string) error {
	return fmt.Errorf("%s %q is not supported by llmbench's tokenizer (supported: %s); use --tokenizer builtin or --use-server-token-count", kind, typ, supportedList[kind])
}

var supportedList = map[string]string{
	"normalizer":    "NFC, NFD, NFKC, NFKD, Prepend, Replace, Strip, BertNormalizer, Lowercase, StripAccents, Precompiled, Sequence",
	"pre-tokenizer": "ByteLevel, Split, Metaspace, Digits, Punctuation, WhitespaceSplit, BertPreTokenizer, Sequence",
	"model":         "BPE, WordPiece, Unigram",
}
