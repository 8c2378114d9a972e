package endpoint

import (
	"bytes"
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

// Keys read on the fast path, and the bit that marks each seen.
const (
	seenChoices = 1 << iota
	seenUsage
	seenObject
	seenMessage
	seenCode
)

var (
	topKeys    = []string{"choices", "usage", "error", "object", "message", "code"}
	choiceKeys = []string{"text", "delta", "message", "finish_reason"}
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
	obj, _ := v.Object()
	var (
		c    Chunk
		ok   = true
		seen int
	)
	d.text, d.reasoning = d.text[:0], d.reasoning[:0]
	once := func(bit int) bool {
		if seen&bit != 0 {
			ok = false // a repeated key: encoding/json merges, left to it
		}
		seen |= bit
		return ok
	}
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		switch string(key) {
		case "choices":
			ok = once(seenChoices) && d.choices(v, streaming, &c)
		case "usage":
			ok = once(seenUsage) && usage(v, &c)
		case "object":
			// {"object": "error", …} is vLLM's error object.
			s, isStr := stringOrNull(v)
			ok = once(seenObject) && isStr && string(s) != "error"
		case "message":
			_, isStr := stringOrNull(v)
			ok = once(seenMessage) && isStr
		case "code":
			_, isInt := intOrNull(v)
			ok = once(seenCode) && isInt
		case "error":
			ok = v.Type() == fastjson.TypeNull && !repeatedNull(&seen)
		default:
			ok = !foldsTo(key, topKeys)
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

// repeatedNull marks "error": null seen; a second one is left to
// encoding/json like any repeated key.
func repeatedNull(seen *int) bool {
	const seenError = 1 << 10
	r := *seen&seenError != 0
	*seen |= seenError
	return r
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
		if item.Type() == fastjson.TypeNull {
			continue
		}
		if item.Type() != fastjson.TypeObject {
			return false
		}
		obj, _ := item.Object()
		ok, seen := true, 0
		var text, content, reasoningContent, reasoning, finish []byte
		obj.Visit(func(key []byte, v *fastjson.Value) {
			if !ok {
				return
			}
			bit := 0
			switch string(key) {
			case "text":
				bit = 1
				text, ok = stringOrNull(v)
			case "finish_reason":
				bit = 2
				finish, ok = stringOrNull(v)
			case "delta", "message":
				bit = 4
				if string(key) == "message" {
					bit = 8
				}
				if string(key) == "delta" && streaming || string(key) == "message" && !streaming {
					content, reasoningContent, reasoning, ok = message(v)
				} else {
					_, _, _, ok = message(v) // still type-checked, as encoding/json does
				}
			default:
				ok = !foldsTo(key, choiceKeys)
			}
			if seen&bit != 0 {
				ok = false
			}
			seen |= bit
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
		d.text = append(d.text, content...)
		d.reasoning = append(append(d.reasoning, reasoningContent...), reasoning...)
	}
	return true
}

// message reads a "delta" or "message" object's texts.
func message(v *fastjson.Value) (content, reasoningContent, reasoning []byte, ok bool) {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil, nil, nil, true
	case fastjson.TypeObject:
	default:
		return nil, nil, nil, false
	}
	obj, _ := v.Object()
	ok = true
	seen := 0
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		bit := 0
		switch string(key) {
		case "content":
			bit = 1
			content, ok = stringOrNull(v)
		case "reasoning_content":
			bit = 2
			reasoningContent, ok = stringOrNull(v)
		case "reasoning":
			bit = 4
			reasoning, ok = stringOrNull(v)
		default:
			ok = !foldsTo(key, textKeys)
		}
		if seen&bit != 0 {
			ok = false
		}
		seen |= bit
	})
	return content, reasoningContent, reasoning, ok
}

// usage reads a "usage" object into c.
func usage(v *fastjson.Value, c *Chunk) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeObject:
	default:
		return false
	}
	obj, _ := v.Object()
	u := &record.Usage{}
	ok, seen := true, 0
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		bit := 0
		switch string(key) {
		case "prompt_tokens":
			bit = 1
			u.PromptTokens, ok = intOrNull(v)
		case "completion_tokens":
			bit = 2
			u.CompletionTokens, ok = intOrNull(v)
		case "total_tokens":
			bit = 4
			u.TotalTokens, ok = intOrNull(v)
		case "completion_tokens_details":
			bit = 8
			ok = usageDetails(v, u)
		default:
			ok = !foldsTo(key, usageKeys)
		}
		if seen&bit != 0 {
			ok = false
		}
		seen |= bit
	})
	c.Usage = u
	return ok
}

func usageDetails(v *fastjson.Value, u *record.Usage) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeObject:
	default:
		return false
	}
	obj, _ := v.Object()
	ok, seen := true, false
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		switch string(key) {
		case "reasoning_tokens":
			if seen {
				ok = false
				return
			}
			seen = true
			if v.Type() == fastjson.TypeNull {
				return
			}
			u.ReasoningTokens, ok = intOrNull(v)
			u.HasReasoning = ok
		default:
			ok = !foldsTo(key, detailKeys)
		}
	})
	return ok
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
