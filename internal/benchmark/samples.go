package benchmark

import (
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
)

// Tags of Options.Samples that are not record metrics: per-request
// indicators whose mean is the run's rate.
const (
	sampleErrorRate    = "request_error_rate"
	sampleGoodFraction = "good_request_fraction"
)

// sampleKeeper keeps the per-request values of the metrics asked for in
// Options.Samples, profiling records only. The collector's lock guards it.
type sampleKeeper struct {
	ids    map[string]metrics.ID
	extra  []string
	values map[string][]float64
}

func newSampleKeeper(tags []string) *sampleKeeper {
	k := &sampleKeeper{ids: map[string]metrics.ID{}, values: map[string][]float64{}}
	for _, tag := range tags {
		switch tag {
		case sampleErrorRate, sampleGoodFraction:
			k.extra = append(k.extra, tag)
			k.values[tag] = []float64{}
			continue
		}
		for id, d := range metrics.RecordDefs {
			if d.Tag == tag && metrics.ID(id) != metrics.InterChunkLatency {
				k.ids[tag] = metrics.ID(id)
				k.values[tag] = []float64{}
			}
		}
	}
	return k
}

// add keeps r's values; a failed request has no metric values, but
// counts in the error rate and the good fraction.
func (k *sampleKeeper) add(r *record.Record, v *metrics.Values) {
	if k == nil {
		return
	}
	for _, tag := range k.extra {
		x := 0.0
		switch {
		case tag == sampleErrorRate && r.Err != nil:
			x = 100
		case tag == sampleGoodFraction && r.Err == nil && v.Good:
			x = 1
		}
		k.values[tag] = append(k.values[tag], x)
	}
	if r.Err != nil {
		return
	}
	for tag, id := range k.ids {
		if v.Has(id) {
			k.values[tag] = append(k.values[tag], v.V[id])
		}
	}
}

// kept are the values kept, by tag; nil when none were asked for.
func (k *sampleKeeper) kept() map[string][]float64 {
	if k == nil {
		return nil
	}
	return k.values
}
