package artifacts

import (
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
	var out []GPUSample
	err = EachLine(f, func(_ int, b []byte) error {
		var raw struct {
			TimestampNs int64                      `json:"timestamp_ns"`
			GPUIndex    int                        `json:"gpu_index"`
			UUID        string                     `json:"gpu_uuid"`
			Model       string                     `json:"gpu_model_name"`
			Data        map[string]json.RawMessage `json:"telemetry_data"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		s := GPUSample{TimestampNs: raw.TimestampNs, GPUIndex: raw.GPUIndex, UUID: raw.UUID, Model: raw.Model, Fields: make(map[string]float64, len(raw.Data))}
		for k, v := range raw.Data {
			var x float64
			if json.Unmarshal(v, &x) == nil {
				s.Fields[k] = x
			}
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
