package gputelemetry

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/internal/scrape"
)

// Platform of the GPUs a DCGM exporter reports.
const PlatformNVIDIA = "nvidia"

// GPU identifies one GPU behind one telemetry source, from the labels
// dcgm-exporter puts on every series.
type GPU struct {
	// Source is the DCGM exporter URL it was scraped from.
	Source    string
	Index     int
	UUID      string
	Model     string
	PCIBusID  string
	Device    string
	Hostname  string
	Namespace string
	Pod       string
	Platform  string
}

// Endpoint is the GPU's telemetry source as AIPerf keys it: host:port.
func (g GPU) Endpoint() string {
	if u, err := url.Parse(g.Source); err == nil && u.Host != "" {
		return u.Host
	}
	return g.Source
}

// key identifies the GPU in the run: its source and UUID, or its index
// when the exporter gives no UUID.
func (g GPU) key() string {
	k := g.Source + "\x00" + g.UUID
	if g.UUID == "" {
		k += "\x00" + strconv.Itoa(g.Index)
	}
	return k
}

// Value is one field's reading in one scrape, in the field's exported unit.
type Value struct {
	Field *Field
	V     float64
}

// Row is one GPU's readings in one scrape: a line of
// gpu_telemetry_export.jsonl.
type Row struct {
	GPU         *GPU
	TimestampNs int64
	Values      []Value
}

// IsDCGM reports whether a scrape has DCGM fields: a DCGM exporter's.
func IsDCGM(snap *scrape.Snapshot) bool {
	for _, f := range snap.Families {
		if strings.HasPrefix(f.Name, "DCGM_FI_") {
			return true
		}
	}
	return false
}

// Store keeps every GPU's readings for the run. It is safe for one writer
// (the collector's sink) and readers after the run.
type Store struct {
	mu     sync.Mutex
	fields []Field
	// bySource maps a DCGM metric name to its field's index.
	bySource map[string]int
	gpus     []*series
	byKey    map[string]*series
}

// series is one GPU's readings: values[f][k] is field f at times[k], NaN
// when that scrape did not have it.
type series struct {
	gpu    GPU
	times  []int64
	values [][]float64
}

// NewStore keeps the given fields (DefaultFields, plus any custom ones).
func NewStore(fields []Field) *Store {
	s := &Store{fields: fields, bySource: map[string]int{}, byKey: map[string]*series{}}
	for i, f := range fields {
		s.bySource[f.Source] = i
	}
	return s
}

// Fields are the fields kept, in export order.
func (s *Store) Fields() []Field { return s.fields }

// Add takes one DCGM exporter scrape and returns its rows, one per GPU it
// reports, in the order the GPUs were first seen.
func (s *Store) Add(snap *scrape.Snapshot) []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := snap.TimestampNs()
	type reading struct {
		ser  *series
		vals []float64
	}
	var seen []reading
	find := func(labels []scrape.Label) *reading {
		g := gpuOf(snap.Endpoint, labels)
		key := g.key()
		for i := range seen {
			if seen[i].ser.gpu.key() == key {
				return &seen[i]
			}
		}
		ser := s.byKey[key]
		if ser == nil {
			ser = &series{gpu: g, values: make([][]float64, len(s.fields))}
			s.byKey[key] = ser
			s.gpus = append(s.gpus, ser)
		}
		vals := make([]float64, len(s.fields))
		for i := range vals {
			vals[i] = math.NaN()
		}
		seen = append(seen, reading{ser, vals})
		return &seen[len(seen)-1]
	}
	for _, fam := range snap.Families {
		fi, ok := s.bySource[fam.Name]
		if !ok {
			continue
		}
		for _, ser := range fam.Series {
			if fam.Type == scrape.Histogram {
				continue
			}
			r := find(ser.Labels)
			r.vals[fi] = ser.Value * s.fields[fi].Scale
		}
	}
	rows := make([]Row, 0, len(seen))
	for _, r := range seen {
		r.ser.times = append(r.ser.times, ts)
		row := Row{GPU: &r.ser.gpu, TimestampNs: ts}
		for fi, v := range r.vals {
			r.ser.values[fi] = append(r.ser.values[fi], v)
			if !math.IsNaN(v) {
				row.Values = append(row.Values, Value{Field: &s.fields[fi], V: v})
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// gpuOf reads a GPU's identity from dcgm-exporter's labels: gpu (index),
// UUID, modelName, pci_bus_id, device, Hostname, and namespace and pod in
// Kubernetes.
func gpuOf(source string, labels []scrape.Label) GPU {
	g := GPU{Source: source, Platform: PlatformNVIDIA, Index: -1}
	for _, l := range labels {
		switch l.Name {
		case "gpu":
			if n, err := strconv.Atoi(l.Value); err == nil {
				g.Index = n
			}
		case "UUID":
			g.UUID = l.Value
		case "modelName":
			g.Model = l.Value
		case "pci_bus_id":
			g.PCIBusID = l.Value
		case "device":
			g.Device = l.Value
		case "Hostname":
			g.Hostname = l.Value
		case "namespace":
			g.Namespace = l.Value
		case "pod":
			g.Pod = l.Value
		}
	}
	return g
}
