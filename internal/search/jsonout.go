package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/llmbench/llmbench/internal/export"
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
func appendNumber(b []byte, v float64) []byte { return export.AppendJSONNumber(b, v) }

// appendString writes s as a JSON string, escaping only what JSON
// requires (orjson's choice: no HTML escapes, UTF-8 kept).
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
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
