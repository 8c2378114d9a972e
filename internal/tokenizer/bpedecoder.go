package tokenizer

import (
	"fmt"
	"strings"
)

// bpeDecoder is the BPEDecoder decoder (CLIP's): each token's
// end-of-word suffix becomes a space, the last token's nothing. It works
// on the tokens as the vocabulary spells them: after a byte-level model
// (CLIP's), with no ByteLevel decoder, a byte stays its character ("Ã©"
// for "é"), as the reference leaves it.
type bpeDecoder struct{ suffix string }

// decode joins the pieces of ids (unknown ids skipped, as the reference
// skips ids it has no token for).
func (d *bpeDecoder) decode(pieces []string, ids []int) string {
	known := func(id int) bool { return id >= 0 && id < len(pieces) && pieces[id] != "" }
	last := -1
	for k, id := range ids {
		if known(id) {
			last = k
		}
	}
	var b strings.Builder
	for k, id := range ids {
		if !known(id) {
			continue
		}
		space := " "
		if k == last {
			space = ""
		}
		if d.suffix == "" {
			b.WriteString(pieces[id])
		} else {
			b.WriteString(strings.ReplaceAll(pieces[id], d.suffix, space))
		}
	}
	return b.String()
}

// rawSuffix is a BPE end_of_word_suffix as the model's vocabulary holds
// it: in raw bytes when the vocabulary is byte-level (CLIP's "</w>" is
// written in characters that stand for themselves).
func rawSuffix(suffix string, byteLevel bool) (string, error) {
	if !byteLevel {
		return suffix, nil
	}
	raw, ok := fromByteLevel(suffix)
	if !ok {
		return "", fmt.Errorf("BPE end_of_word_suffix %q is outside the byte-level alphabet: not supported", suffix)
	}
	return raw, nil
}
