package agenticgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/internal/tracesynth"
)

// Rows lays sessions out as Mooncake rows, as AIPerf's writer does: each
// row's input_length is what the turn adds (its first turn: the whole
// initial context) and its hash_ids exactly cover it; the first turn keeps
// the layered prefix ids, later turns take fresh ids from one cursor over
// the dataset. First turns carry the timestamp, later ones the delay.
func Rows(sessions []Session, blockSize int) (rows []tracesynth.Row, delays []*float64) {
	var next int64
	for _, s := range sessions {
		for k, t := range s.Turns {
			isl, osl := t.NewTokens, t.OutputLength
			r := tracesynth.Row{Session: s.ID, InputLength: &isl, OutputLength: &osl}
			if k == 0 {
				r.HashIDs = t.HashIDs
				for _, h := range t.HashIDs {
					next = max(next, h+1)
				}
				ts := round1(t.TimestampMs)
				r.Timestamp = &ts
				delays = append(delays, nil)
			} else {
				n := int64(ceilDiv(t.NewTokens, blockSize))
				r.HashIDs = make([]int64, n)
				for i := range r.HashIDs {
					r.HashIDs[i] = next + int64(i)
				}
				next += n
				d := round1(t.DelayMs)
				delays = append(delays, &d)
			}
			rows = append(rows, r)
		}
	}
	return rows, delays
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// Manifest records how a dataset was made; --config accepts it back.
type Manifest struct {
	Seed             uint64 `json:"seed"`
	NumSessions      int    `json:"num_sessions"`
	ConfigName       string `json:"config_name"`
	GenerationParams Config `json:"generation_params"`
}

// Quality summarizes what was generated: llmbench's own shape (AIPerf's
// quality.json compares against its target distributions).
type Quality struct {
	Sessions   int                 `json:"sessions"`
	Turns      int                 `json:"turns"`
	EndReasons map[string]int      `json:"end_reasons"`
	Trace      tracesynth.Analysis `json:"trace"`
}

// Write writes dataset.jsonl, manifest.json and quality.json into dir and
// returns the dataset's path.
func Write(dir string, sessions []Session, c Config, seed uint64, configName string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("synthesize: %w", err)
	}
	rows, delays := Rows(sessions, c.BlockSize)
	var b []byte
	for i, r := range rows {
		b = tracesynth.AppendRow(b, r, delays[i])
	}
	path := filepath.Join(dir, "dataset.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("synthesize: %w", err)
	}
	q := Quality{Sessions: len(sessions), Turns: len(rows), EndReasons: map[string]int{}, Trace: tracesynth.Analyze(rows, c.BlockSize)}
	for _, s := range sessions {
		q.EndReasons[s.End]++
	}
	for name, v := range map[string]any{
		"manifest.json": Manifest{Seed: seed, NumSessions: len(sessions), ConfigName: configName, GenerationParams: c},
		"quality.json":  q,
	} {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return "", fmt.Errorf("synthesize: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return "", fmt.Errorf("synthesize: %w", err)
		}
	}
	return path, nil
}
