package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"

	"github.com/llmbench/llmbench/internal/record"
)

// Snapshot is one successful scrape of one endpoint.
type Snapshot struct {
	Endpoint string
	// Times are wall-clock epoch ns: request sent, first response byte
	// (the snapshot's timestamp, as AIPerf's), body fully read.
	RequestSentNs, FirstByteNs, DoneNs int64
	Families                           []Family
	// Changed is true when the body differs from the endpoint's previous one.
	Changed bool
	// Raw is the body as received, valid until the endpoint's next scrape:
	// the collector reuses its buffer.
	Raw []byte
}

// TimestampNs is when the snapshot was taken (first byte received).
func (s *Snapshot) TimestampNs() int64 { return s.FirstByteNs }

// LatencyNs is the fetch's round trip.
func (s *Snapshot) LatencyNs() int64 { return s.DoneNs - s.RequestSentNs }

// ErrNotPrometheus marks a response that is not Prometheus exposition.
var ErrNotPrometheus = errors.New("not Prometheus exposition")

// fetch GETs target once for e, reading the body into e's buffer and
// parsing it with e's parser.
func fetch(ctx context.Context, hc *http.Client, clock record.Clock, target string, e *endpoint) (*Snapshot, error) {
	var firstByte int64
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { firstByte = clock.Now() }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", target, err)
	}
	// Ask for the text format: no protobuf or OpenMetrics negotiation.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	if e.user != nil {
		pw, _ := e.user.Password()
		req.SetBasicAuth(e.user.Username(), pw)
	}
	sent := clock.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("scrape %s: HTTP %s", target, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// Rejected without reading the body.
		return nil, fmt.Errorf("scrape %s: %w: endpoint '%s' returned non-Prometheus content-type 'application/json'; expected text/plain (Prometheus exposition format)", target, ErrNotPrometheus, target)
	}
	// The buffer keeps its size from scrape to scrape: no 400 KB of garbage
	// per scrape for the collector to clear.
	e.body.Reset()
	_, err = e.body.ReadFrom(io.LimitReader(resp.Body, 256<<20))
	done := clock.Now()
	if err != nil {
		return nil, fmt.Errorf("scrape %s: read body: %w", target, err)
	}
	body := e.body.Bytes()
	fams, err := e.parser.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w: %v", target, ErrNotPrometheus, err)
	}
	if firstByte == 0 {
		firstByte = done
	}
	return &Snapshot{Endpoint: target, RequestSentNs: clock.Wall(sent), FirstByteNs: clock.Wall(firstByte), DoneNs: clock.Wall(done), Families: fams, Raw: body}, nil
}

// fallbackURL is the TensorRT-LLM probe target for a URL ending in
// /metrics (but not /prometheus/metrics): <base>/prometheus/metrics.
func fallbackURL(target string) (string, bool) {
	u, err := url.Parse(target)
	if err != nil || !strings.HasSuffix(u.Path, "/metrics") || strings.HasSuffix(u.Path, "/prometheus/metrics") {
		return "", false
	}
	u.Path = strings.TrimSuffix(u.Path, "/metrics") + "/prometheus/metrics"
	u.RawQuery = ""
	return u.String(), true
}

// Warning texts a person sees once per endpoint.
func disableWarning(subject, suppress, target string, err error) string {
	return fmt.Sprintf("WARNING  Disabling %s collection for %s: %v. To suppress this warning, pass %s.", strings.ToLower(subject), target, unwrapScrape(err), suppress)
}

func unwrapScrape(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ErrNotPrometheus.Error()+": "); i >= 0 {
		return msg[i+len(ErrNotPrometheus.Error())+2:]
	}
	return msg
}
