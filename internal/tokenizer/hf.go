package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// HF is a Hugging Face tokenizer.json tokenizer with a BPE model (byte-level
// as GPT-2, Llama 3, Qwen, DeepSeek and Falcon, or CLIP's with an
// end-of-word suffix; SentencePiece-style with byte fallback as Llama 2,
// Mistral and Gemma) or a WordPiece one (BERT,
// MiniLM, BGE: BertNormalizer and BertPreTokenizer). It encodes as the
// reference library does with add_special_tokens=False: added tokens found
// in the text, then normalizer, pre-tokenizer and model; no post-processor,
// so neither BERT's [CLS] and [SEP] nor a BOS count, and no truncation or
// padding (limits of a model's input, not of the text). It is safe for
// concurrent use.
type HF struct {
	name string
	// raw are the added tokens matched in the text as written; normalized
	// those matched after normalization (their "normalized": true).
	raw, normalized *addedTrie
	norm            normalizer
	pre             preTokenizer
	// The model is one of model (BPE), wordPiece and unigram.
	model     *bpe
	wordPiece *wordPiece
	unigram   *unigram
	// pieces is each id's text for Decode: raw bytes for a byte-level
	// vocabulary, with "▁" for spaces otherwise, as written for WordPiece.
	pieces []string
	// wpDecoder, for a WordPiece model, joins pieces as its decoder does;
	// bpeDecoder, for a BPE model, as a BPEDecoder does (CLIP's).
	wpDecoder  *wordPieceDecoder
	bpeDecoder *bpeDecoder
	// spaceMark is the character standing for a space ("▁"), "" for none;
	// stripLead drops the space Decode gets from a prepended one.
	spaceMark string
	stripLead bool
	scratch   sync.Pool // *hfScratch
}

type hfScratch struct {
	segs, inner []segment
	words       wordStream
	// counting (Count's) tallies ids in counted and drops them.
	counting bool
	counted  int
	ids      []int32
	unigram  unigramScratch
}

// Name is the tokenizer's name: the model id or path it was loaded from.
func (t *HF) Name() string { return t.name }

// Count returns the number of tokens text encodes to. It keeps no more
// than countKeep ids at a time: a 50 MB response of digits is 50 million
// tokens, 200 MB of ids nobody reads.
func (t *HF) Count(text string) int {
	sc := t.getScratch()
	sc.counted, sc.counting = 0, true
	sc.ids = t.appendIDs(sc.ids[:0], text, sc)
	n := sc.counted + len(sc.ids)
	sc.counting = false
	t.scratch.Put(sc)
	return n
}

// countKeep is how many ids Count lets pile up before it tallies them.
const countKeep = 1 << 14

// Encode returns the token ids of text.
func (t *HF) Encode(text string) []int {
	sc := t.getScratch()
	sc.counting = false
	sc.ids = t.appendIDs(sc.ids[:0], text, sc)
	ids := make([]int, len(sc.ids))
	for i, id := range sc.ids {
		ids[i] = int(id)
	}
	t.scratch.Put(sc)
	return ids
}

// Decode returns the text of ids (unknown ids are skipped).
func (t *HF) Decode(ids []int) string {
	if t.bpeDecoder != nil {
		return t.bpeDecoder.decode(t.pieces, ids)
	}
	var b strings.Builder
	if t.wpDecoder != nil {
		i := 0
		for _, id := range ids {
			if id >= 0 && id < len(t.pieces) {
				t.wpDecoder.decode(&b, i, t.pieces[id])
				i++
			}
		}
		return b.String()
	}
	for _, id := range ids {
		if id >= 0 && id < len(t.pieces) {
			b.WriteString(t.pieces[id])
		}
	}
	s := b.String()
	if t.spaceMark != "" {
		s = strings.ReplaceAll(s, t.spaceMark, " ")
		if t.stripLead {
			s = strings.TrimPrefix(s, " ")
		}
	}
	return s
}

func (t *HF) getScratch() *hfScratch {
	if sc, ok := t.scratch.Get().(*hfScratch); ok {
		return sc
	}
	return &hfScratch{}
}

func (t *HF) appendIDs(dst []int32, text string, sc *hfScratch) []int32 {
	sc.segs = t.raw.split(sc.segs[:0], text)
	for _, seg := range sc.segs {
		if seg.id >= 0 {
			dst = append(dst, seg.id)
			continue
		}
		s := seg.text
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		sc.inner = t.normalized.split(sc.inner[:0], s)
		for _, in := range sc.inner {
			if in.id >= 0 {
				dst = append(dst, in.id)
				continue
			}
			if t.pre == nil {
				dst = t.appendWord(dst, in.text, sc)
				if sc.counting && len(dst) > countKeep {
					sc.counted += len(dst)
					dst = dst[:0]
				}
				continue
			}
			sc.words.each(t.pre, in.text, seg.start == 0 && in.start == 0, func(w string) {
				dst = t.appendWord(dst, w, sc)
				if sc.counting && len(dst) > countKeep {
					sc.counted += len(dst)
					dst = dst[:0]
				}
			})
		}
	}
	return dst
}

// appendWord appends the tokens of one pre-tokenized word.
func (t *HF) appendWord(dst []int32, w string, sc *hfScratch) []int32 {
	if t.unigram != nil {
		return t.unigram.appendWord(dst, w, &sc.unigram)
	}
	if t.wordPiece != nil {
		return t.wordPiece.appendWord(dst, w)
	}
	if sc.counting {
		return t.model.appendWordTally(dst, w, &sc.counted)
	}
	return t.model.appendWord(dst, w)
}

type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      *struct {
		Type    string  `json:"type"`
		Prefix  *string `json:"prefix"`
		Suffix  *string `json:"suffix"`
		Cleanup *bool   `json:"cleanup"`
	} `json:"decoder"`
	Model struct {
		Type                    string   `json:"type"`
		Dropout                 *float64 `json:"dropout"`
		UnkToken                *string  `json:"unk_token"`
		ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
		FuseUnk                 bool     `json:"fuse_unk"`
		ByteFallback            bool     `json:"byte_fallback"`
		UnkID                   *int     `json:"unk_id"`
		IgnoreMerges            bool     `json:"ignore_merges"`
		MaxInputCharsPerWord    *int     `json:"max_input_chars_per_word"`
		// Vocab is read once the type is known: Unigram's is a list of
		// [piece, score] pairs, BPE's and WordPiece's a map.
		Vocab  json.RawMessage   `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
}

// LoadHF reads a tokenizer.json file.
func LoadHF(path, name string) (*HF, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := ParseHF(data, name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return t, nil
}

// ParseHF builds a tokenizer from the contents of a tokenizer.json. A
// component it cannot run exactly is an error naming it.
func ParseHF(data []byte, name string) (*HF, error) {
	var j tokenizerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	m := j.Model
	if m.Type == "" && m.Merges != nil {
		m.Type = "BPE"
	}
	switch {
	case m.Type == "" && len(m.Vocab) == 0:
		return nil, errors.New(`no "model" with a "type" and a "vocab": not a Hugging Face tokenizer.json`)
	case m.Type == "":
		return nil, unsupported("model", "(no type, no merges)")
	case m.Type != "BPE" && m.Type != "WordPiece" && m.Type != "Unigram":
		return nil, unsupported("model", m.Type)
	}
	var vocab map[string]int32
	var uniVocab unigramVocab
	if m.Type == "Unigram" {
		if err := json.Unmarshal(m.Vocab, &uniVocab); err != nil {
			return nil, fmt.Errorf("Unigram vocab: %w", err)
		}
	} else {
		if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("%s vocab: %w", m.Type, err)
		}
		if len(vocab) == 0 {
			return nil, fmt.Errorf("the %s vocabulary is empty: no text could be counted with it", m.Type)
		}
	}
	if m.Type == "BPE" {
		if err := checkBPEOptions(&j); err != nil {
			return nil, err
		}
	}
	norm, err := parseNormalizer(j.Normalizer)
	if err != nil {
		return nil, err
	}
	pre, byteLevel, err := parseHFPreTokenizer(j.PreTokenizer)
	if err != nil {
		return nil, err
	}
	t := &HF{name: name, norm: norm, pre: pre}
	// pieces are the model's tokens by their text, for Decode.
	var pieces map[string]int32
	if m.Type == "Unigram" {
		if byteLevel {
			return nil, errors.New("a Unigram model after a ByteLevel pre-tokenizer is not supported")
		}
		if t.unigram, err = newUnigram(uniVocab, m.UnkID, m.ByteFallback); err != nil {
			return nil, err
		}
		pieces = t.unigram.ids
	} else if m.Type == "WordPiece" {
		if byteLevel {
			return nil, errors.New("a WordPiece model after a ByteLevel pre-tokenizer is not supported")
		}
		if t.wordPiece, t.wpDecoder, err = loadWordPiece(&j, vocab); err != nil {
			return nil, err
		}
		pieces = vocab
	} else {
		t.model = &bpe{byteLevel: byteLevel, ignoreMerges: m.IgnoreMerges, byteFallback: m.ByteFallback, fuseUnk: m.FuseUnk, unk: -1}
		if s := m.EndOfWordSuffix; s != nil && *s != "" {
			if t.model.suffix, err = rawSuffix(*s, byteLevel); err != nil {
				return nil, err
			}
		}
		if err := t.model.load(vocab, m.Merges, m.UnkToken); err != nil {
			return nil, err
		}
		pieces = t.model.vocab
		if d := j.Decoder; d != nil && d.Type == "BPEDecoder" {
			// It joins the tokens as the vocabulary spells them.
			t.bpeDecoder = &bpeDecoder{suffix: "</w>"}
			if d.Suffix != nil {
				t.bpeDecoder.suffix = *d.Suffix
			}
			pieces = vocab
		}
	}
	maxID := int32(-1)
	for _, id := range pieces {
		maxID = max(maxID, id)
	}
	var raw, normalized []addedToken
	for _, a := range j.AddedTokens {
		tok := addedToken{id: a.ID, content: a.Content, singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip}
		maxID = max(maxID, a.ID)
		// As the reference: special or not, a normalized token is found
		// after normalization (CLIP's <|endoftext|> in "<|ENDOFTEXT|>").
		if a.Normalized {
			if norm != nil {
				tok.content = norm.normalize(tok.content)
			}
			normalized = append(normalized, tok)
		} else {
			raw = append(raw, tok)
		}
	}
	// Ids index a table: a negative one, or one far beyond the number of
	// tokens (a damaged file), is an error, not a panic or a huge table.
	if limit := 2*(len(m.Vocab)+len(j.AddedTokens)) + 256; maxID >= int32(limit) {
		return nil, fmt.Errorf("token id %d is far beyond the %d tokens declared", maxID, len(pieces)+len(j.AddedTokens))
	}
	for _, a := range j.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("added token %q has the negative id %d", a.Content, a.ID)
		}
	}
	t.raw, t.normalized = newAddedTrie(raw), newAddedTrie(normalized)
	t.pieces = make([]string, maxID+1)
	for s, id := range pieces {
		t.pieces[id] = s
	}
	for id, p := range uniVocab {
		t.pieces[id] = p.piece // a repeated piece has each of its ids
	}
	if t.model != nil && t.bpeDecoder == nil {
		// (A BPEDecoder writes <0x41> as it is.)
		for b, id := range t.model.fallbackIDs {
			if id >= 0 && t.model.byteFallback {
				t.pieces[id] = string([]byte{byte(b)})
			}
		}
	}
	if t.unigram != nil {
		for b, id := range t.unigram.fallbackIDs {
			if id >= 0 && t.unigram.byteFallback {
				t.pieces[id] = string([]byte{byte(b)})
			}
		}
	}
	for _, a := range j.AddedTokens {
		t.pieces[a.ID] = a.Content
	}
	if (t.model != nil || t.unigram != nil) && !byteLevel {
		t.spaceMark, t.stripLead = spaceMarkOf(norm, pre)
		if t.model != nil {
			t.model.splitAtMark(t.spaceMark)
		}
	}
	return t, nil
}

// checkBPEOptions refuses the BPE options that cannot be counted exactly.
func checkBPEOptions(j *tokenizerJSON) error {
	m := &j.Model
	if m.Dropout != nil && *m.Dropout > 0 {
		return errors.New("BPE dropout is random and cannot be counted exactly")
	}
	if p := m.ContinuingSubwordPrefix; p != nil && *p != "" {
		return fmt.Errorf("BPE continuing_subword_prefix %q is not supported", *p)
	}
	return nil
}

// loadWordPiece builds a WordPiece model, with the reference's defaults
// for what the file leaves out, and its decoder: the file's WordPiece
// decoder, else one with the model's prefix (BERT's).
func loadWordPiece(j *tokenizerJSON, vocab map[string]int32) (*wordPiece, *wordPieceDecoder, error) {
	m := &j.Model
	unk, prefix, maxChars := "[UNK]", "##", 100
	if m.UnkToken != nil {
		unk = *m.UnkToken
	}
	if m.ContinuingSubwordPrefix != nil {
		prefix = *m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord != nil {
		maxChars = *m.MaxInputCharsPerWord
	}
	wp, err := newWordPiece(vocab, unk, prefix, maxChars)
	if err != nil {
		return nil, nil, fmt.Errorf("WordPiece: %w", err)
	}
	dec := &wordPieceDecoder{prefix: prefix, cleanup: true}
	if d := j.Decoder; d != nil && d.Type == "WordPiece" {
		if d.Prefix != nil {
			dec.prefix = *d.Prefix
		}
		if d.Cleanup != nil {
			dec.cleanup = *d.Cleanup
		}
	}
	return wp, dec, nil
}

// parseHFPreTokenizer is parsePreTokenizer with BertPreTokenizer, alone or
// in a Sequence.
func parseHFPreTokenizer(raw json.RawMessage) (preTokenizer, bool, error) {
	var j struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &j) != nil {
		return parsePreTokenizer(raw)
	}
	switch j.Type {
	case "BertPreTokenizer":
		return bertPreTokenizer{}, false, nil
	case "Sequence":
		if !strings.Contains(string(raw), "BertPreTokenizer") {
			return parsePreTokenizer(raw)
		}
		var seq preTokenizerSeq
		bytes := false
		for i, r := range j.PreTokenizers {
			p, bl, err := parseHFPreTokenizer(r)
			if err != nil {
				return nil, false, err
			}
			if bl && i != len(j.PreTokenizers)-1 {
				return nil, false, errors.New("pre_tokenizer: a ByteLevel pre-tokenizer before another one is not supported")
			}
			bytes = bytes || bl
			if p != nil {
				seq = append(seq, p)
			}
		}
		if len(seq) == 0 {
			return nil, bytes, nil
		}
		return seq, bytes, nil
	}
	return parsePreTokenizer(raw)
}

// spaceMarkOf finds the character a SentencePiece-style tokenizer writes for
// a space, and whether it prepends one to the text.
func spaceMarkOf(n normalizer, p preTokenizer) (string, bool) {
	mark, lead := "", false
	var visitN func(normalizer)
	visitN = func(n normalizer) {
		switch n := n.(type) {
		case normalizerSeq:
			for _, x := range n {
				visitN(x)
			}
		case replace:
			if l, ok := n.pat.(literal); ok && l == " " {
				mark = n.content
			}
		case prepend:
			lead = true
		}
	}
	visitN(n)
	var visitP func(preTokenizer)
	visitP = func(p preTokenizer) {
		switch p := p.(type) {
		case preTokenizerSeq:
			for _, x := range p {
				visitP(x)
			}
		case metaspace:
			mark, lead = p.replacement, lead || p.prepend != "never"
		}
	}
	visitP(p)
	return mark, lead
}

// load fills the model's vocabulary and merges.
func (m *bpe) load(vocab map[string]int32, merges []json.RawMessage, unk *string) error {
	m.vocab = make(map[string]int32, len(vocab))
	for i := range m.byteIDs {
		m.byteIDs[i], m.fallbackIDs[i] = -1, -1
	}
	for s, id := range vocab {
		if id < 0 {
			return fmt.Errorf("token %q has the negative id %d", s, id)
		}
		if m.byteLevel {
			raw, ok := fromByteLevel(s)
			if !ok {
				continue // written as itself: reachable only as an added token
			}
			s = raw
			if len(s) == 1 {
				m.byteIDs[s[0]] = id
			}
		}
		m.vocab[s] = id
	}
	if m.suffix != "" {
		for b := range 256 {
			m.lastByteIDs[b] = -1
			if id, ok := m.vocab[string([]byte{byte(b)})+m.suffix]; ok {
				m.lastByteIDs[b] = id
			}
		}
	}
	if m.byteFallback {
		for b := range 256 {
			if id, ok := m.vocab[fallbackToken(byte(b))]; ok {
				m.fallbackIDs[b] = id
			}
		}
	}
	if unk != nil {
		id, ok := m.vocab[*unk]
		if !ok {
			return fmt.Errorf("unk_token %q is not in the vocabulary", *unk)
		}
		m.unk = id
	}
	m.merges = make(map[uint64]uint64, len(merges))
	for rank, raw := range merges {
		a, b, err := parseMerge(raw)
		if err != nil {
			return fmt.Errorf("merge %d: %w", rank, err)
		}
		if m.byteLevel {
			ra, okA := fromByteLevel(a)
			rb, okB := fromByteLevel(b)
			if !okA || !okB {
				return fmt.Errorf("merge %d (%q %q): not in the byte-level alphabet", rank, a, b)
			}
			a, b = ra, rb
		}
		ida, okA := m.vocab[a]
		idb, okB := m.vocab[b]
		idm, okM := m.vocab[a+b]
		if !okA || !okB || !okM {
			return fmt.Errorf("merge %d (%q %q): a token is missing from the vocabulary", rank, a, b)
		}
		key := pairKey(ida, idb)
		if _, dup := m.merges[key]; !dup {
			m.merges[key] = uint64(rank)<<32 | uint64(uint32(idm))
		}
	}
	return nil
}

// parseMerge reads a merge written "a b" or ["a", "b"].
func parseMerge(raw json.RawMessage) (string, string, error) {
	var pair []string
	if err := json.Unmarshal(raw, &pair); err == nil {
		if len(pair) != 2 {
			return "", "", fmt.Errorf("%d parts, want 2", len(pair))
		}
		return pair[0], pair[1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "", err
	}
	a, b, ok := strings.Cut(s, " ")
	if !ok {
		return "", "", fmt.Errorf("%q has no space", s)
	}
	return a, b, nil
}
