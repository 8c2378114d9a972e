package search

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The files of this package are written by a small ordered encoder rather
// than encoding/json: AIPerf's key orders are part of the contract, some
// keys are built at run time (knee_<stat>), and every non-finite number
// must become null. The layout is AIPerf's (orjson, indent 2).

// obj is a JSON object whose members keep their order.
type obj []member

type member struct {
	key string
	val any
}

// with appends a member.
func (o obj) with(key string, val any) obj { return append(o, member{key, val}) }

// encode renders v (obj, []any, []int, []float64, []string, [][]any,
// string, bool, int, float64, nil, *Breach) pretty-printed with two-space
// indentation.
func encode(v any) []byte {
	return appendValue(nil, v, 0)
}

func appendValue(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendNumber(b, x)
	case string:
		return appendString(b, x)
	case obj:
		if len(x) == 0 {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = indent(b, depth+1)
			b = append(appendString(b, m.key), ": "...)
			b = appendValue(b, m.val, depth+1)
		}
		return append(indent(b, depth), '}')
	case []any:
		if len(x) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = indent(b, depth+1)
			b = appendValue(b, e, depth+1)
		}
		return append(indent(b, depth), ']')
	case []int:
		return appendValue(b, anySlice(x), depth)
	case []float64:
		return appendValue(b, anySlice(x), depth)
	case []string:
		return appendValue(b, anySlice(x), depth)
	case *Breach:
		if x == nil {
			return append(b, "null"...)
		}
		return appendValue(b, breachJSON(*x), depth)
	}
	panic(fmt.Sprintf("search: cannot encode %T", v)) // a bug in this package, not input
}

func anySlice[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func indent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

// appendNumber writes v as the project's exporters do: null when not
// finite, whole numbers without a fraction, else the shortest digits.
func appendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if math.Abs(v) < 1<<53 && v == math.Trunc(v) && (v != 0 || !math.Signbit(v)) {
		return strconv.AppendInt(b, int64(v), 10)
	}
	if math.Abs(v) < 1e21 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'e', -1, 64)
}

// appendString writes s as a JSON string, escaping only what JSON
// requires (orjson's choice: no HTML escapes, UTF-8 kept).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// breachJSON is a breach record: metric_tag, stat, op, threshold, observed.
func breachJSON(x Breach) obj {
	return obj{}.
		with("metric_tag", x.MetricTag).
		with("stat", x.Stat).
		with("op", string(x.Op)).
		with("threshold", x.Threshold).
		with("observed", x.Observed)
}
