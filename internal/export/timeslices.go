package export

import (
	"bytes"
	"strconv"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// Timeslice is the client metrics of the requests that started within one
// --slice-duration window of the profiling phase.
type Timeslice struct {
	StartNs, EndNs int64 // wall-clock epoch ns, [start, end)
	// Complete is false for a slice the profiling phase ended inside.
	Complete bool
	Results  metrics.Results
}

// TimeslicesJSON renders profile_export_aiperf_timeslices.json as AIPerf's
// newest does: {"timeslices": [{start_ns, end_ns, is_complete, <metric>:
// {...}}, …], "input_config": {...}}, a slice's position its index.
func TimeslicesJSON(slices []Timeslice, inputConfig any) ([]byte, error) {
	b := []byte("{\n  \"timeslices\": [")
	for i, ts := range slices {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"start_ns\":"...)
		b = strconv.AppendInt(b, ts.StartNs, 10)
		b = append(b, `,"end_ns":`...)
		b = strconv.AppendInt(b, ts.EndNs, 10)
		b = append(b, `,"is_complete":`...)
		b = strconv.AppendBool(b, ts.Complete)
		declared, others := splitMetrics(&ts.Results)
		for _, r := range append(declared, others...) {
			b = append(b, ",\n      "...)
			b = appendJSONString(b, r.Def.Tag)
			b = append(b, ':')
			b = appendMetric(b, r)
		}
		b = append(b, '}')
	}
	if len(slices) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"input_config\": "...)
	cfg, err := indentedJSON("input config", inputConfig)
	if err != nil {
		return nil, err
	}
	b = append(b, cfg...)
	return append(b, "\n}\n"...), nil
}

// statKeys are AIPerf's CSV statistics, in its order.
var statKeys = append(append([]string{"avg", "min", "max", "sum"}, stats.PercentileNames[:]...), "std")

// TimeslicesCSV renders profile_export_aiperf_timeslices.csv in AIPerf's
// tidy form: Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value, one row per
// statistic of each metric (sorted by tag) of each slice; a single value
// is its avg.
func TimeslicesCSV(slices []Timeslice) []byte {
	var b bytes.Buffer
	b.WriteString("Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\n")
	for i, ts := range slices {
		head := strconv.Itoa(i) + "," + strconv.FormatInt(ts.StartNs, 10) + "," + strconv.FormatInt(ts.EndNs, 10) + ","
		for _, r := range sortedByTag(ts.Results) {
			name := CSVField(r.Def.Header) + "," + CSVField(r.Def.Unit) + ","
			for _, st := range statKeys {
				v, ok := statOf(r, st)
				if !ok {
					continue
				}
				b.WriteString(head + name + st + "," + v + "\n")
			}
		}
	}
	return b.Bytes()
}

// statOf is one statistic of a result as CSV text, if it has it.
func statOf(r metrics.Result, stat string) (string, bool) {
	if r.Dist == nil {
		if stat != "avg" {
			return "", false
		}
		return nonEmpty(csvNumber(r.Value))
	}
	d := r.Dist
	switch stat {
	case "avg":
		return nonEmpty(csvNumber(d.Avg))
	case "min":
		return nonEmpty(csvNumber(d.Min))
	case "max":
		return nonEmpty(csvNumber(d.Max))
	case "sum":
		return nonEmpty(csvNumber(d.Sum))
	case "std":
		return nonEmpty(csvNumber(d.Std))
	}
	for i, name := range stats.PercentileNames {
		if name == stat {
			return nonEmpty(csvNumber(d.P[i]))
		}
	}
	return "", false
}

func nonEmpty(s string) (string, bool) { return s, s != "" }
