package artifacts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// GPUSample is one GPU's reading of gpu_telemetry_export.jsonl.
type GPUSample struct {
	TimestampNs int64
	GPUIndex    int
	UUID, Model string
	// Fields are the reading's numeric fields (nvidia_power_usage,
	// nvidia_gpu_utilization, …).
	Fields map[string]float64
}

// loadTelemetry reads gpu_telemetry_export.jsonl; nil without the file.
func loadTelemetry(path string) ([]GPUSample, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []GPUSample
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var raw struct {
			TimestampNs int64                      `json:"timestamp_ns"`
			GPUIndex    int                        `json:"gpu_index"`
			UUID        string                     `json:"gpu_uuid"`
			Model       string                     `json:"gpu_model_name"`
			Data        map[string]json.RawMessage `json:"telemetry_data"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("read %s: line %d: %w", path, line, err)
		}
		s := GPUSample{TimestampNs: raw.TimestampNs, GPUIndex: raw.GPUIndex, UUID: raw.UUID, Model: raw.Model, Fields: make(map[string]float64, len(raw.Data))}
		for k, v := range raw.Data {
			var x float64
			if json.Unmarshal(v, &x) == nil {
				s.Fields[k] = x
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: after line %d: %w", path, line, err)
	}
	return out, nil
}
