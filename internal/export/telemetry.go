package export

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/gputelemetry"
	"github.com/llmbench/llmbench/internal/stats"
)

// GPUTelemetryFile names the per-scrape GPU telemetry export as AIPerf
// does: gpu_telemetry_export.jsonl, or <prefix>_gpu_telemetry.jsonl.
func GPUTelemetryFile(prefix string) string {
	if prefix == "" {
		return "gpu_telemetry_export.jsonl"
	}
	return prefix + "_gpu_telemetry.jsonl"
}

// TelemetryWriter streams gpu_telemetry_export.jsonl: one line per GPU per
// scrape, as they arrive. The file is created with its first line, so a
// run whose default DCGM ports had nothing behind them leaves no file.
type TelemetryWriter struct {
	dir, name string
	lf        *lineFile
}

// NewTelemetryWriter prepares dir/name; nothing is created yet.
func NewTelemetryWriter(dir, name string) *TelemetryWriter {
	return &TelemetryWriter{dir: dir, name: name}
}

// Written reports whether the file exists (a line was written).
func (tw *TelemetryWriter) Written() bool { return tw.lf != nil }

// Write appends one line per row, in AIPerf 0.12's shape (e4):
// timestamp_ns, telemetry_source_url, gpu_index, gpu_uuid, gpu_model_name,
// pci_bus_id, device, hostname, namespace and pod_name (when known),
// platform, telemetry_data {field: value}.
func (tw *TelemetryWriter) Write(rows []gputelemetry.Row) error {
	if len(rows) == 0 {
		return nil
	}
	if tw.lf == nil {
		lf, err := createLineFile(tw.dir, tw.name, 64<<10)
		if err != nil {
			return err
		}
		tw.lf = lf
	}
	for _, r := range rows {
		g := r.GPU
		b := tw.lf.buf[:0]
		b = strconv.AppendInt(append(b, `{"timestamp_ns":`...), r.TimestampNs, 10)
		b = appendJSONString(append(b, `,"telemetry_source_url":`...), g.Source)
		b = strconv.AppendInt(append(b, `,"gpu_index":`...), int64(g.Index), 10)
		for _, kv := range [][2]string{{"gpu_uuid", g.UUID}, {"gpu_model_name", g.Model}, {"pci_bus_id", g.PCIBusID}, {"device", g.Device}, {"hostname", g.Hostname}} {
			b = appendJSONString(append(append(append(b, `,"`...), kv[0]...), `":`...), kv[1])
		}
		if g.Namespace != "" {
			b = appendJSONString(append(b, `,"namespace":`...), g.Namespace)
		}
		if g.Pod != "" {
			b = appendJSONString(append(b, `,"pod_name":`...), g.Pod)
		}
		b = appendJSONString(append(b, `,"platform":`...), g.Platform)
		b = append(b, `,"telemetry_data":{`...)
		for i, v := range r.Values {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONNumber(append(appendJSONString(b, v.Field.Name), ':'), v.V)
		}
		if err := tw.lf.writeLine(append(b, "}}\n"...)); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes and closes the file, if one was created.
func (tw *TelemetryWriter) Close() error {
	if tw.lf == nil {
		return nil
	}
	return tw.lf.Close()
}

// TelemetryJSON renders telemetry_data (aiperf-0.12-features e4):
// summary {endpoints_configured, endpoints_successful, start_time,
// end_time}, then endpoints {"host:port": {gpus {"gpu_<i>": {gpu_index,
// gpu_name, gpu_uuid, platform, hostname, namespace?, pod_name?, metrics
// {field: {unit, stats…}}}}}}. A gauge has every statistic; a counter only
// avg, its increase over the window. llmbench adds energy_source and
// counter_window to summary, and partial to a GPU that reported through
// only part of the window.
func TelemetryJSON(t gputelemetry.Report) []byte {
	b := []byte("{\n    \"summary\": {\n      \"endpoints_configured\": ")
	b = appendStringList(b, t.Configured)
	b = append(b, ",\n      \"endpoints_successful\": "...)
	b = appendStringList(b, t.Successful)
	b = appendJSONString(append(b, ",\n      \"start_time\": "...), t.Start.Format(timeLayout))
	b = appendJSONString(append(b, ",\n      \"end_time\": "...), t.End.Format(timeLayout))
	if t.Energy != nil {
		b = appendJSONString(append(b, ",\n      \"energy_source\": "...), t.Energy.Source)
	}
	b = appendJSONString(append(b, ",\n      \"counter_window\": "...), string(t.CounterWindow))
	b = append(b, "\n    },\n    \"endpoints\": {"...)
	// GPUs grouped by source, sources in the order their first GPU came.
	var sources []string
	bySource := map[string][]gputelemetry.GPUSummary{}
	for _, g := range t.GPUs {
		key := g.GPU.Endpoint()
		if _, ok := bySource[key]; !ok {
			sources = append(sources, key)
		}
		bySource[key] = append(bySource[key], g)
	}
	for i, src := range sources {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, "\n      "...), src)
		b = append(b, ": {\n        \"gpus\": {"...)
		used := map[string]bool{}
		for j, g := range bySource[src] {
			if j > 0 {
				b = append(b, ',')
			}
			// AIPerf keys a GPU by its index, which repeats when one
			// host:port fronts several exporters (a Kubernetes Service
			// over every node's): then the UUID tells them apart, so no
			// GPU is lost to a duplicate key.
			key := "gpu_" + strconv.Itoa(g.GPU.Index)
			if used[key] {
				key += "_" + g.GPU.UUID
			}
			for n := 2; used[key]; n++ {
				key = "gpu_" + strconv.Itoa(g.GPU.Index) + "_" + strconv.Itoa(n)
			}
			used[key] = true
			b = appendJSONString(append(b, "\n          "...), key)
			b = appendGPU(append(b, ": "...), g)
		}
		b = append(b, "\n        }\n      }"...)
	}
	return append(b, "\n    }\n  }"...)
}

func appendGPU(b []byte, g gputelemetry.GPUSummary) []byte {
	const in = "\n            "
	b = strconv.AppendInt(append(b, "{"+in+`"gpu_index": `...), int64(g.GPU.Index), 10)
	b = appendJSONString(append(b, ","+in+`"gpu_name": `...), g.GPU.Model)
	b = appendJSONString(append(b, ","+in+`"gpu_uuid": `...), g.GPU.UUID)
	b = appendJSONString(append(b, ","+in+`"platform": `...), g.GPU.Platform)
	b = appendJSONString(append(b, ","+in+`"hostname": `...), g.GPU.Hostname)
	if g.GPU.Namespace != "" {
		b = appendJSONString(append(b, ","+in+`"namespace": `...), g.GPU.Namespace)
	}
	if g.GPU.Pod != "" {
		b = appendJSONString(append(b, ","+in+`"pod_name": `...), g.GPU.Pod)
	}
	if g.Partial {
		b = append(b, ","+in+`"partial": true`...)
	}
	b = append(b, ","+in+`"metrics": {`...)
	for i, m := range g.Metrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, in+"  "...), m.Field.Name)
		b = appendJSONString(append(b, `: {"unit": `...), m.Field.Unit)
		b = appendStat(b, "avg", m.Avg)
		if !m.Counter {
			for k, name := range stats.PercentileNames {
				b = appendStat(b, name, m.P[k])
			}
			b = appendStat(b, "min", m.Min)
			b = appendStat(b, "max", m.Max)
			b = appendStat(b, "std", m.Std)
			b = appendStat(b, "sum", m.Sum)
			b = strconv.AppendInt(append(b, `,"count":`...), int64(m.Count), 10)
		}
		b = append(b, '}')
	}
	return append(b, in+"}\n          }"...)
}

func appendStringList(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// TelemetryCSV renders the GPU section of profile_export_aiperf.csv: two
// blank lines, then Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,
// the statistics, and Hostname, Namespace and Pod Name when any GPU has
// them; one row per GPU and field, in the fields' order. A counter fills
// only avg. Nothing without GPUs.
func TelemetryCSV(t gputelemetry.Report) []byte {
	if len(t.GPUs) == 0 {
		return nil
	}
	var host, ns, pod bool
	for _, g := range t.GPUs {
		host, ns, pod = host || g.GPU.Hostname != "", ns || g.GPU.Namespace != "", pod || g.GPU.Pod != ""
	}
	var b bytes.Buffer
	b.WriteString("\n\nEndpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum," + strings.Join(stats.PercentileNames[:], ",") + ",std")
	for _, extra := range []struct {
		on   bool
		name string
	}{{host, "Hostname"}, {ns, "Namespace"}, {pod, "Pod Name"}} {
		if extra.on {
			b.WriteString("," + extra.name)
		}
	}
	b.WriteByte('\n')
	for _, g := range t.GPUs {
		for _, m := range g.Metrics {
			cells := []string{g.GPU.Endpoint(), strconv.Itoa(g.GPU.Index), g.GPU.Model, g.GPU.UUID, g.GPU.Platform, m.Field.Label(), telemetryNumber(m.Avg)}
			if m.Counter {
				cells = append(cells, make([]string, 3+len(stats.PercentileNames)+1)...)
			} else {
				cells = append(cells, telemetryNumber(m.Min), telemetryNumber(m.Max), telemetryNumber(m.Sum))
				for _, p := range m.P {
					cells = append(cells, telemetryNumber(p))
				}
				cells = append(cells, telemetryNumber(m.Std))
			}
			if host {
				cells = append(cells, g.GPU.Hostname)
			}
			if ns {
				cells = append(cells, g.GPU.Namespace)
			}
			if pod {
				cells = append(cells, g.GPU.Pod)
			}
			for i, c := range cells {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(CSVField(c))
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// telemetryNumber is csvNumber's two decimals, but a value that would read
// 0.00 keeps four significant digits: a short run's energy in MJ
// (0.00028) must not print as nothing.
func telemetryNumber(v float64) string {
	if v != 0 && math.Abs(v) < 0.005 && !math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return csvNumber(v)
}
