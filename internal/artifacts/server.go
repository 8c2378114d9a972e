package artifacts

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Server is a run's server metrics: the aggregate export's statistics and
// the time series of the scrapes.
type Server struct {
	// Metrics are server_metrics_export.json's metrics by name; nil
	// without the file.
	Metrics map[string]ServerMetric
	// Series are the scrapes' time series, one per endpoint, metric and
	// label set, sorted by metric name; nil when neither the scrapes
	// (JSONL) nor the Parquet export was written.
	Series []ServerSeries
	// SeriesSource names the file the series came from.
	SeriesSource string
}

// ServerMetric is one metric of server_metrics_export.json.
type ServerMetric struct {
	Type, Unit, Description string
	Series                  []ServerMetricSeries
}

// ServerMetricSeries is one label set's statistics.
type ServerMetricSeries struct {
	Endpoint string
	Labels   map[string]string
	Stats    map[string]float64
}

// ServerSeries is one endpoint's, metric's and label set's scraped
// values over time. A gauge's V is its value; a counter's its cumulative
// value (raw or as a delta from the reference scrape, by file: only its
// differences are meaningful); a histogram's V its observation count and
// Sum their sum.
type ServerSeries struct {
	Endpoint, Metric, Type string
	Labels                 map[string]string
	T                      []int64
	V, Sum                 []float64
}

// LabelString is the series' labels as name=value pairs, sorted.
func (s *ServerSeries) LabelString() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s.Labels[k]
	}
	return strings.Join(parts, ",")
}

// loadServer reads the server-metrics files that exist; nil without any.
func loadServer(dir string) (*Server, error) {
	s := &Server{}
	found := false
	b, err := os.ReadFile(filepath.Join(dir, ServerExportFile))
	switch {
	case err == nil:
		if s.Metrics, err = parseServerExport(b); err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ServerExportFile), err)
		}
		found = true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ServerExportFile), err)
	}
	types := map[string]string{}
	for name, m := range s.Metrics {
		types[name] = m.Type
	}
	jsonl := filepath.Join(dir, ServerScrapesFile)
	parquet := filepath.Join(dir, ServerParquetFile)
	switch {
	case exists(jsonl):
		if s.Series, err = readScrapes(jsonl, types); err != nil {
			return nil, fmt.Errorf("read %s: %w", jsonl, err)
		}
		s.SeriesSource, found = ServerScrapesFile, true
	case exists(parquet):
		if s.Series, err = readParquetSeries(parquet); err != nil {
			return nil, fmt.Errorf("read %s: %w", parquet, err)
		}
		s.SeriesSource, found = ServerParquetFile, true
	}
	if !found {
		return nil, nil
	}
	return s, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// parseServerExport reads server_metrics_export.json's metrics.
func parseServerExport(b []byte) (map[string]ServerMetric, error) {
	var top struct {
		Metrics map[string]struct {
			Type        string `json:"type"`
			Unit        string `json:"unit"`
			Description string `json:"description"`
			Series      []struct {
				Endpoint string                     `json:"endpoint_url"`
				Labels   map[string]string          `json:"labels"`
				Stats    map[string]json.RawMessage `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	out := make(map[string]ServerMetric, len(top.Metrics))
	for name, m := range top.Metrics {
		sm := ServerMetric{Type: m.Type, Unit: m.Unit, Description: m.Description}
		for _, s := range m.Series {
			stats := make(map[string]float64, len(s.Stats))
			for k, v := range s.Stats {
				var x float64
				if json.Unmarshal(v, &x) == nil {
					stats[k] = x
				}
			}
			sm.Series = append(sm.Series, ServerMetricSeries{Endpoint: s.Endpoint, Labels: s.Labels, Stats: stats})
		}
		out[name] = sm
	}
	return out, nil
}

// seriesSet gathers samples into series keyed by endpoint, metric and
// labels.
type seriesSet struct {
	byKey map[string]*ServerSeries
}

func (ss *seriesSet) add(endpoint, metric, typ string, labels map[string]string, t int64, v, sum float64) {
	if ss.byKey == nil {
		ss.byKey = map[string]*ServerSeries{}
	}
	s := &ServerSeries{Endpoint: endpoint, Metric: metric, Labels: labels}
	key := endpoint + "\x00" + metric + "\x00" + s.LabelString()
	if have, ok := ss.byKey[key]; ok {
		s = have
	} else {
		s.Type = typ
		ss.byKey[key] = s
	}
	s.T, s.V, s.Sum = append(s.T, t), append(s.V, v), append(s.Sum, sum)
}

// sorted returns the series by metric, endpoint and labels, each in time
// order.
func (ss *seriesSet) sorted() []ServerSeries {
	out := make([]ServerSeries, 0, len(ss.byKey))
	for _, s := range ss.byKey {
		order := make([]int, len(s.T))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.T[a], s.T[b]) })
		t, v, sum := make([]int64, len(order)), make([]float64, len(order)), make([]float64, len(order))
		for k, i := range order {
			t[k], v[k], sum[k] = s.T[i], s.V[i], s.Sum[i]
		}
		s.T, s.V, s.Sum = t, v, sum
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b ServerSeries) int {
		return cmp.Or(cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.LabelString(), b.LabelString()))
	})
	return out
}

// readScrapes reads server_metrics_export.jsonl: one scrape a line. types
// gives the metrics' types (from the JSON export); a metric it does not
// name is a histogram when it has buckets and a gauge otherwise.
func readScrapes(path string, types map[string]string) ([]ServerSeries, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var set seriesSet
	err = EachLine(f, func(_ int, b []byte) error {
		var scrape struct {
			Endpoint  string `json:"endpoint_url"`
			Timestamp int64  `json:"timestamp_ns"`
			Metrics   map[string][]struct {
				Labels  map[string]string `json:"labels"`
				Value   *float64          `json:"value"`
				Count   *float64          `json:"count"`
				Sum     *float64          `json:"sum"`
				Buckets json.RawMessage   `json:"buckets"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(b, &scrape); err != nil {
			return err
		}
		for name, samples := range scrape.Metrics {
			for _, s := range samples {
				typ := types[name]
				switch {
				case s.Count != nil:
					sum := 0.0
					if s.Sum != nil {
						sum = *s.Sum
					}
					set.add(scrape.Endpoint, name, cmp.Or(typ, "histogram"), s.Labels, scrape.Timestamp, *s.Count, sum)
				case s.Value != nil:
					set.add(scrape.Endpoint, name, cmp.Or(typ, "gauge"), s.Labels, scrape.Timestamp, *s.Value, 0)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return set.sorted(), nil
}
