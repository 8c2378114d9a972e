package tracesynth

import (
	"math"
	"slices"
)

// MetricStats summarizes one per-request quantity as AIPerf's
// analyze-trace does: population standard deviation, percentiles by
// linear interpolation between closest ranks (numpy's default).
type MetricStats struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"std_dev"`
	Min    float64 `json:"min"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	Max    float64 `json:"max"`
}

// Analysis is what a trace implies, in the shape of AIPerf's AnalysisStats
// (its JSON report).
type Analysis struct {
	TotalRequests int `json:"total_requests"`
	// UniquePrefixes counts the distinct leading runs hash_ids[:i].
	UniquePrefixes int `json:"unique_prefixes"`
	// NumPrefixGroups counts the first blocks that start two rows or more.
	NumPrefixGroups int `json:"num_prefix_groups"`
	// CacheHitRate is the mean over rows with hash_ids of the share of
	// leading blocks an infinite cache already held when the row arrived.
	CacheHitRate float64 `json:"cache_hit_rate"`
	MinISL       int     `json:"min_isl"`
	MaxISL       int     `json:"max_isl"`
	AvgISL       float64 `json:"avg_isl"`
	MinOSL       int     `json:"min_osl"`
	MaxOSL       int     `json:"max_osl"`
	AvgOSL       float64 `json:"avg_osl"`
	// PrefixReuseRatio is the share of prefix occurrences whose prefix
	// occurs more than once.
	PrefixReuseRatio        float64      `json:"prefix_reuse_ratio"`
	ISLStats                *MetricStats `json:"isl_stats"`
	OSLStats                *MetricStats `json:"osl_stats"`
	ContextLengthStats      *MetricStats `json:"context_length_stats"`
	UniquePromptLengthStats *MetricStats `json:"unique_prompt_length_stats"`
	HitRateStats            *MetricStats `json:"hit_rate_stats"`
}

// Analyze computes a trace's statistics with blocks of blockSize tokens.
// A missing input_length or output_length counts as 0, as in AIPerf.
//
// A row's context length is the tokens of its blocks whose (position, id)
// pair occurs in another row too (all of input_length when every pair
// does); the rest is its unique prompt.
func Analyze(rows []Row, blockSize int) Analysis {
	a := Analysis{TotalRequests: len(rows)}
	if len(rows) == 0 {
		return a
	}
	isls := make([]float64, len(rows))
	osls := make([]float64, len(rows))
	type pos struct {
		at int
		id int64
	}
	pairs := map[pos]int{}
	prefixes := map[string]int{}
	firsts := map[int64]int{}
	key := make([]byte, 0, 64)
	for i, r := range rows {
		if r.InputLength != nil {
			isls[i] = float64(*r.InputLength)
		}
		if r.OutputLength != nil {
			osls[i] = float64(*r.OutputLength)
		}
		key = key[:0]
		for p, h := range r.HashIDs {
			pairs[pos{p, h}]++
			for s := 0; s < 64; s += 8 {
				key = append(key, byte(h>>s))
			}
			prefixes[string(key)]++
		}
		if len(r.HashIDs) > 0 {
			firsts[r.HashIDs[0]]++
		}
	}
	a.UniquePrefixes = len(prefixes)
	for _, n := range firsts {
		if n > 1 {
			a.NumPrefixGroups++
		}
	}
	var reused, total int
	for _, n := range prefixes {
		total += n
		if n > 1 {
			reused += n
		}
	}
	if total > 0 {
		a.PrefixReuseRatio = float64(reused) / float64(total)
	}

	context := make([]float64, len(rows))
	unique := make([]float64, len(rows))
	seen := map[int64]bool{}
	var hits []float64
	for i, r := range rows {
		if len(r.HashIDs) == 0 {
			unique[i] = isls[i]
			continue
		}
		repeated := 0
		for p, h := range r.HashIDs {
			if pairs[pos{p, h}] > 1 {
				repeated++
			}
		}
		if repeated == len(r.HashIDs) {
			context[i] = isls[i]
		} else {
			context[i] = float64(repeated * blockSize)
			unique[i] = isls[i] - context[i]
		}
		first := len(r.HashIDs)
		for p, h := range r.HashIDs {
			if !seen[h] {
				first = p
				break
			}
		}
		hits = append(hits, float64(first)/float64(len(r.HashIDs)))
		for _, h := range r.HashIDs {
			seen[h] = true
		}
	}
	if len(hits) > 0 {
		a.CacheHitRate = mean(hits)
	}
	a.ISLStats, a.OSLStats = stats(isls), stats(osls)
	a.MinISL, a.MaxISL, a.AvgISL = int(a.ISLStats.Min), int(a.ISLStats.Max), a.ISLStats.Mean
	a.MinOSL, a.MaxOSL, a.AvgOSL = int(a.OSLStats.Min), int(a.OSLStats.Max), a.OSLStats.Mean
	a.ContextLengthStats, a.UniquePromptLengthStats = stats(context), stats(unique)
	a.HitRateStats = stats(hits)
	return a
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func stats(v []float64) *MetricStats {
	if len(v) == 0 {
		return nil
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := mean(s)
	var ss float64
	for _, x := range s {
		ss += (x - m) * (x - m)
	}
	return &MetricStats{
		Mean: m, StdDev: math.Sqrt(ss / float64(len(s))),
		Min: s[0], P25: percentile(s, 25), Median: percentile(s, 50), P75: percentile(s, 75), Max: s[len(s)-1],
	}
}

// percentile of sorted s, interpolating linearly between closest ranks.
func percentile(s []float64, q float64) float64 {
	r := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (r-float64(lo))*(s[lo+1]-s[lo])
}
