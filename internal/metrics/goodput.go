package metrics

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// SLO is one service-level objective of --goodput: a record metric and
// the threshold its value must meet, in the metric's display unit.
type SLO struct {
	ID        ID
	Threshold float64
}

// Met reports whether a record's value meets the objective: at least the
// threshold for a metric where larger is better (a throughput), at most
// the threshold otherwise (a latency). A metric the record lacks fails it.
func (s SLO) Met(v *Values) bool {
	x := v.V[s.ID]
	if math.IsNaN(x) {
		return false
	}
	if RecordDefs[s.ID].Has(LargerIsBetter) {
		return x >= s.Threshold
	}
	return x <= s.Threshold
}

// ParseSLOs reads --goodput as AIPerf does: space-separated tag:value
// pairs ("time_to_first_token:200 inter_token_latency:10"), values in the
// metric's display unit (ms, tokens/sec/user…). A tag that names no record
// metric, or one this run cannot have (a streaming metric without
// --streaming, an error-only or list metric), is an error.
func ParseSLOs(spec string, streaming bool) ([]SLO, error) {
	byTag := map[string]ID{}
	for id, d := range RecordDefs {
		byTag[d.Tag] = ID(id)
	}
	var out []SLO
	for _, pair := range strings.Fields(strings.ReplaceAll(spec, ",", " ")) {
		tag, raw, ok := strings.Cut(pair, ":")
		if !ok {
			return nil, fmt.Errorf("--goodput %q: want metric_tag:value", pair)
		}
		id, known := byTag[tag]
		if !known {
			return nil, fmt.Errorf("--goodput: unknown metric tag %q; use a per-request metric such as %s", tag, strings.Join(goodputTags(streaming), ", "))
		}
		d := RecordDefs[id]
		switch {
		case id == InterChunkLatency || d.Has(ErrorOnly) || d.Has(Internal):
			return nil, fmt.Errorf("--goodput: %s cannot be an SLO (it is not one value per successful request)", tag)
		case d.Has(StreamingOnly) && !streaming:
			return nil, fmt.Errorf("--goodput: %s is measured only with --streaming", tag)
		}
		threshold, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(threshold) || math.IsInf(threshold, 0) {
			return nil, fmt.Errorf("--goodput %s: %q is not a number (in %s)", tag, raw, d.Unit)
		}
		if threshold < 0 {
			// No latency, throughput or length is negative: such an SLO
			// would make every request bad (or good) without a word.
			return nil, fmt.Errorf("--goodput %s: %s cannot be negative (in %s)", tag, raw, d.Unit)
		}
		if i := indexSLO(out, id); i >= 0 {
			out[i].Threshold = threshold
		} else {
			out = append(out, SLO{ID: id, Threshold: threshold})
		}
	}
	if len(out) == 0 && strings.TrimSpace(spec) != "" {
		return nil, fmt.Errorf("--goodput %q: want metric_tag:value pairs", spec)
	}
	return out, nil
}

func indexSLO(slos []SLO, id ID) int {
	for i, s := range slos {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// goodputTags lists the usual SLO metrics, for error messages.
func goodputTags(streaming bool) []string {
	tags := []string{RecordDefs[RequestLatency].Tag}
	if streaming {
		tags = append(tags, RecordDefs[TimeToFirstToken].Tag, RecordDefs[InterTokenLatency].Tag, RecordDefs[OutputTokenThroughputPerUser].Tag)
	}
	sort.Strings(tags)
	return tags
}
