package multirun

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// pyInt prints like a Python int, as sweep values do.
type pyInt int

func (p pyInt) String() string               { return strconv.Itoa(int(p)) }
func (p pyInt) MarshalJSON() ([]byte, error) { return []byte(p.String()), nil }

func plainSummary() Summary {
	return Summary{Version: "v", NumRuns: 2, RunLabels: []string{"run_0001", "run_0002"}, ConfidenceLevel: 0.95,
		Stats: []Stat{{Name: "request_throughput_avg", Unit: "requests/sec", Mean: 11, Std: 1, Min: 10, Max: 12, CV: 1.0 / 11, SE: 0.7, CILow: 2, CIHigh: 20, TCritical: 12.7, N: 2}}}
}

// TestAggregateWithoutSweep: a plain multi-run aggregate has none of the
// sweep cell's keys or rows, exactly as before they existed.
func TestAggregateWithoutSweep(t *testing.T) {
	j, err := AggregateJSON(plainSummary())
	if err != nil {
		t.Fatal(err)
	}
	want := `    "run_labels": [
      "run_0001",
      "run_0002"
    ]
  },
  "metrics": {`
	if !bytes.Contains(j, []byte(want)) {
		t.Errorf("metadata does not end with run_labels:\n%s", j)
	}
	for _, key := range []string{"variation_label", "variation_values", "sweep_mode", `"model"`} {
		if bytes.Contains(j, []byte(key)) {
			t.Errorf("%s in a plain aggregate", key)
		}
	}
	csv := string(AggregateCSV(plainSummary()))
	if !strings.HasSuffix(csv, "Run Labels,\"['run_0001', 'run_0002']\"\n") {
		t.Errorf("CSV does not end with the run labels:\n%s", csv)
	}
}

// TestAggregateSweepCell: a sweep cell's metadata adds variation_label,
// variation_values (in order), sweep_mode and model after the rest, and
// the CSV adds their rows.
func TestAggregateSweepCell(t *testing.T) {
	s := plainSummary()
	s.RunLabels = s.RunLabels[:1]
	s.VariationLabel = "b.y=2, a.x=10"
	s.VariationValues = VariationValues{{"b.y", pyInt(2)}, {"a.x", pyInt(10)}}
	s.SweepMode = "repeated"
	s.Model = "m"
	j, err := AggregateJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `    "single_run": true,
    "variation_label": "b.y=2, a.x=10",
    "variation_values": {
      "b.y": 2,
      "a.x": 10
    },
    "sweep_mode": "repeated",
    "model": "m"
  },`
	if !bytes.Contains(j, []byte(want)) {
		t.Errorf("got\n%s\nwant it to contain\n%s", j, want)
	}
	csv := string(AggregateCSV(s))
	wantCSV := "Variation Label,\"b.y=2, a.x=10\"\nVariation Values,\"{'b.y': 2, 'a.x': 10}\"\nSweep Mode,repeated\nModel,m\n"
	if !strings.HasSuffix(csv, wantCSV) {
		t.Errorf("CSV\n%s\nwant it to end with\n%s", csv, wantCSV)
	}
}
