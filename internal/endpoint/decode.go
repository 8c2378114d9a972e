package endpoint

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/llmbench/llmbench/internal/record"
)

// Decoder reads the responses and stream chunks of one API type without
// reflection and, in its steady state, without allocating: a chunk costs
// a strict validation and a parse by fastjson into memory the Decoder
// reuses. Anything but the usual shape (an error object, a field of an
// unexpected type, a key repeated or cased differently, text that is not
// valid UTF-8) is read again by encoding/json, so the result, errors
// included, is always what encoding/json makes of the data
// (FuzzDecoderMatchesEncodingJSON).
//
// A Decoder is not safe for concurrent use: keep one per request loop.
type Decoder struct {
	kind Kind
	p    fastjson.Parser
	// text and reasoning back the last Chunk's Text and Reasoning.
	text, reasoning []byte
}

// NewDecoder returns a Decoder for k.
func (k Kind) NewDecoder() *Decoder { return &Decoder{kind: k} }

// Chunk reads the data of one stream event. The Chunk's Text and
// Reasoning are valid until the Decoder's next call.
func (d *Decoder) Chunk(data []byte) (Chunk, error) {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, doneSentinel) {
		return Chunk{Done: true}, nil
	}
	return d.decode(data, true)
}

// Response reads a whole non-streaming response body, as Chunk does.
func (d *Decoder) Response(body []byte) (Chunk, error) {
	return d.decode(bytes.TrimSpace(body), false)
}

func (d *Decoder) decode(data []byte, streaming bool) (Chunk, error) {
	if c, ok := d.fast(data, streaming); ok {
		return c, nil
	}
	return d.kind.parse(data, streaming)
}

// The keys read on the fast path, by object.
var (
	topKeys    = []string{"choices", "usage", "error", "object", "message", "code"}
	choiceKeys = []string{"text", "finish_reason", "delta", "message"}
	textKeys   = []string{"content", "reasoning_content", "reasoning"}
	usageKeys  = []string{"prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details"}
	detailKeys = []string{"reasoning_tokens"}
)

// fast reads data when it has the usual shape; false sends it to
// encoding/json.
func (d *Decoder) fast(data []byte, streaming bool) (Chunk, bool) {
	if fastjson.ValidateBytes(data) != nil {
		return Chunk{}, false
	}
	v, err := d.p.ParseBytes(data)
	if err != nil || v.Type() != fastjson.TypeObject {
		return Chunk{}, false
	}
	var c Chunk
	d.text, d.reasoning = d.text[:0], d.reasoning[:0]
	ok := fields(v, topKeys, func(i int, v *fastjson.Value) bool {
		switch i {
		case 0:
			return d.choices(v, streaming, &c)
		case 1:
			return usage(v, &c)
		case 2: // an error object is left to encoding/json
			return v.Type() == fastjson.TypeNull
		case 3: // {"object": "error", …} is vLLM's error object
			s, isStr := stringOrNull(v)
			return isStr && string(s) != "error"
		case 4:
			_, isStr := stringOrNull(v)
			return isStr
		default:
			_, isInt := intOrNull(v)
			return isInt
		}
	})
	if !ok {
		return Chunk{}, false
	}
	if len(d.text) > 0 {
		c.Text = d.text
	}
	if len(d.reasoning) > 0 {
		c.Reasoning = d.reasoning
	}
	return c, true
}

// fields walks the JSON object v (null: nothing to walk), calling read for
// each of keys it holds with the key's index. It is false, for
// encoding/json to read the data, when v is neither object nor null, when
// a known key comes twice (encoding/json merges them), when read is, or
// when a key differs from a known one in case only (encoding/json would
// take it for that one).
func fields(v *fastjson.Value, keys []string, read func(i int, v *fastjson.Value) bool) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeObject:
	default:
		return false
	}
	obj, _ := v.Object()
	ok, seen := true, 0
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		i := slices.Index(keys, string(key))
		switch {
		case i < 0:
			ok = !foldsTo(key, keys)
		case seen&(1<<i) != 0:
			ok = false
		default:
			seen |= 1 << i
			ok = read(i, v)
		}
	})
	return ok
}

// choices reads the "choices" array into c and the decoder's text.
func (d *Decoder) choices(v *fastjson.Value, streaming bool, c *Chunk) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeArray:
	default:
		return false
	}
	items, _ := v.Array()
	c.Choices = len(items)
	for _, item := range items {
		if item.Type() != fastjson.TypeObject && item.Type() != fastjson.TypeNull {
			return false
		}
		var text, finish []byte
		var texts [3][]byte // content, reasoning_content, reasoning
		ok := fields(item, choiceKeys, func(i int, v *fastjson.Value) bool {
			var ok bool
			switch i {
			case 0:
				text, ok = stringOrNull(v)
			case 1:
				finish, ok = stringOrNull(v)
			default: // delta (streaming) or message: the other is still type-checked, as encoding/json does
				var t [3][]byte
				ok = message(v, &t)
				if (i == 2) == streaming {
					texts = t
				}
			}
			return ok
		})
		if !ok {
			return false
		}
		if len(finish) > 0 && c.FinishReason == "" {
			c.FinishReason = string(finish)
		}
		if d.kind == Completions {
			d.text = append(d.text, text...)
			continue
		}
		d.text = append(d.text, texts[0]...)
		d.reasoning = append(append(d.reasoning, texts[1]...), texts[2]...)
	}
	return true
}

// message reads a "delta" or "message" object's content,
// reasoning_content and reasoning into texts.
func message(v *fastjson.Value, texts *[3][]byte) bool {
	return fields(v, textKeys, func(i int, v *fastjson.Value) bool {
		var ok bool
		texts[i], ok = stringOrNull(v)
		return ok
	})
}

// usage reads a "usage" object into c.
func usage(v *fastjson.Value, c *Chunk) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	u := &record.Usage{}
	c.Usage = u
	return fields(v, usageKeys, func(i int, v *fastjson.Value) bool {
		var ok bool
		switch i {
		case 0:
			u.PromptTokens, ok = intOrNull(v)
		case 1:
			u.CompletionTokens, ok = intOrNull(v)
		case 2:
			u.TotalTokens, ok = intOrNull(v)
		default:
			ok = fields(v, detailKeys, func(_ int, v *fastjson.Value) bool {
				if v.Type() == fastjson.TypeNull {
					return true // reasoning_tokens: null is none
				}
				u.ReasoningTokens, u.HasReasoning = intOrNull(v)
				return u.HasReasoning
			})
		}
		return ok
	})
}

// stringOrNull returns a JSON string's unescaped bytes (nil for null);
// false for another type, or text encoding/json would read otherwise:
// invalid UTF-8 (it writes U+FFFD) and a \u escape of a lone surrogate,
// which fastjson leaves as written (so any "\u" left in the text).
func stringOrNull(v *fastjson.Value) ([]byte, bool) {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil, true
	case fastjson.TypeString:
		s, err := v.StringBytes()
		return s, err == nil && utf8.Valid(s) && !bytes.Contains(s, []byte(`\u`))
	}
	return nil, false
}

// intOrNull returns a JSON number that encoding/json reads into an int:
// digits only, no fraction or exponent, in range; 0 for null.
func intOrNull(v *fastjson.Value) (int, bool) {
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, true
	case fastjson.TypeNumber:
		n, err := v.Int()
		return n, err == nil
	}
	return 0, false
}

// foldsTo reports whether key matches one of keys case-insensitively (but
// not exactly): encoding/json would take it for that field.
func foldsTo(key []byte, keys []string) bool {
	// The keys are lower-case ASCII: only a key with an upper-case letter
	// or a non-ASCII byte (the Kelvin sign folds to k) can fold to one.
	plain := true
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return false
	}
	for _, k := range keys {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	return false
}
