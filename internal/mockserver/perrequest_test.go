package mockserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// perRequest is the "metrics" member vLLM's --enable-per-request-metrics
// adds to a response.
type perRequest struct {
	TTFT    *float64 `json:"time_to_first_token_ms"`
	Gen     *float64 `json:"generation_time_ms"`
	Queue   *float64 `json:"queue_time_ms"`
	MeanITL *float64 `json:"mean_itl_ms"`
	TPS     *float64 `json:"tokens_per_second"`
}

// TestPerRequestMetrics checks the per-request timings against the values
// the engine's histograms observed for the same request, and against the
// configuration: on the engine's own clock, with no jitter, a request's
// prefill and decode times are exactly what it was told, and the second of
// two requests for one slot queues until the first one's last token.
func TestPerRequestMetrics(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TTFT, cfg.TTFTJitter, cfg.ITL, cfg.ITLJitter = 30*time.Millisecond, 0, 5*time.Millisecond, 0
			cfg.MaxNumSeqs, cfg.PrefixCaching = 1, false
			var mu sync.Mutex
			observed := map[string]Observation{}
			cfg.Observed = func(o Observation) {
				mu.Lock()
				observed[o.RequestID] = o
				mu.Unlock()
			}
			_, url := start(t, cfg)
			got := make([]perRequest, 2)
			var wg sync.WaitGroup
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i] = postForMetrics(t, url, fmt.Sprintf("req-%d", i), stream)
				}()
			}
			wg.Wait()
			queued := 0
			for i, m := range got {
				if m.TTFT == nil || m.Gen == nil || m.Queue == nil || m.MeanITL == nil || m.TPS == nil {
					t.Fatalf("request %d: metrics %+v: a field is missing", i, m)
				}
				o := observed[fmt.Sprintf("req-%d", i)]
				near := func(what string, got, want float64) {
					t.Helper()
					if math.Abs(got-want) > 0.0015 { // printed to 3 decimals
						t.Errorf("request %d: %s = %.4f ms, want %.4f", i, what, got, want)
					}
				}
				near("time_to_first_token_ms", *m.TTFT, 30)
				near("generation_time_ms", *m.Gen, 15)
				near("mean_itl_ms", *m.MeanITL, 5)
				near("queue + ttft against the TTFT histogram's value", *m.Queue+*m.TTFT, float64(o.TTFT)/1e6)
				near("queue + ttft + generation against the e2e histogram's value", *m.Queue+*m.TTFT+*m.Gen, float64(o.E2E)/1e6)
				if *m.Queue > 1 {
					queued++
					// Admitted when the other request's slot freed: at
					// its last token, 30 + 3·5 ms after its admission at
					// its arrival, on the engine's clock.
					other := observed[fmt.Sprintf("req-%d", 1-i)]
					near("queue against the other request's end", *m.Queue, float64(other.Arrival.Add(other.E2E).Sub(o.Arrival))/1e6)
					near("the other request's busy time", float64(other.E2E)/1e6, 45)
				}
				// 4 tokens over 45 ms busy.
				if math.Abs(*m.TPS-4/0.045) > 0.1 {
					t.Errorf("request %d: tokens_per_second %.1f, want %.1f", i, *m.TPS, 4/0.045)
				}
			}
			if queued != 1 {
				t.Errorf("%d of 2 requests queued, want 1 (one slot)", queued)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.TTFT, cfg.ITL, cfg.NoPerRequestMetrics = 0, 0, true
		_, url := start(t, cfg)
		for _, stream := range []bool{false, true} {
			if m := postForMetrics(t, url, "x", stream); m != (perRequest{}) {
				t.Errorf("stream=%v: metrics %+v with NoPerRequestMetrics", stream, m)
			}
		}
	})
}

// postForMetrics sends a chat request for 4 tokens and returns the
// response's "metrics" member (from any chunk of a stream, which must be
// the usage chunk).
func postForMetrics(t *testing.T, url, id string, stream bool) perRequest {
	t.Helper()
	payload := `{"model":"m","messages":[{"role":"user","content":"one two"}],"max_completion_tokens":4,"stream":false}`
	if stream {
		// vLLM streams the metrics on the usage chunk.
		payload = `{"model":"m","messages":[{"role":"user","content":"one two"}],"max_completion_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`
	}
	req, err := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(payload))
	if err != nil {
		t.Error(err)
		return perRequest{}
	}
	req.Header.Set("X-Request-ID", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return perRequest{}
	}
	defer resp.Body.Close()
	var out struct {
		Metrics perRequest `json:"metrics"`
	}
	if !stream {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Error(err)
		}
		return out.Metrics
	}
	sc := bufio.NewScanner(resp.Body)
	found := 0
	var m perRequest
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || string(data) == "[DONE]" || !bytes.Contains(data, []byte(`"metrics"`)) {
			continue
		}
		if !bytes.Contains(data, []byte(`"usage"`)) {
			t.Errorf("metrics outside the usage chunk: %s", data)
		}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Error(err)
		}
		m = out.Metrics
		found++
	}
	if found > 1 {
		t.Errorf("%d chunks carry metrics, want one", found)
	}
	return m
}
