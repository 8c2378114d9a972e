package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// arrivalLog maps a request id to when each of its chunks was written
// (server) or arrived (client), in wall-clock nanoseconds.
type arrivalLog map[string][]int64

// readCSV reads "id,chunk,ns" lines.
func readCSV(r io.Reader) (arrivalLog, error) {
	log := arrivalLog{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want id,chunk,ns: %q", line, sc.Text())
		}
		k, err1 := strconv.Atoi(f[1])
		ns, err2 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil || k < 0 {
			return nil, fmt.Errorf("line %d: %q: %v", line, sc.Text(), err)
		}
		a := log[f[0]]
		for len(a) <= k {
			a = append(a, -1)
		}
		a[k] = ns
		log[f[0]] = a
	}
	return log, sc.Err()
}

// readRecords rebuilds each chunk's arrival from llmbench's
// profile_export.jsonl: the first at request_start_ns + time_to_first_token,
// each next one inter_chunk_latency later (both in ms with nanosecond
// digits).
func readRecords(r io.Reader) (arrivalLog, error) {
	type value struct {
		Value json.RawMessage `json:"value"`
	}
	var rec struct {
		Metadata struct {
			ID    string `json:"x_request_id"`
			Start int64  `json:"request_start_ns"`
		} `json:"metadata"`
		Metrics map[string]value `json:"metrics"`
	}
	log := arrivalLog{}
	dec := json.NewDecoder(r)
	for line := 1; ; line++ {
		clear(rec.Metrics)
		if err := dec.Decode(&rec); err == io.EOF {
			return log, nil
		} else if err != nil {
			return nil, fmt.Errorf("record %d: %w", line, err)
		}
		var ttft float64
		var icl []float64
		if err := json.Unmarshal(rec.Metrics["time_to_first_token"].Value, &ttft); err != nil {
			return nil, fmt.Errorf("record %d (%s): no time_to_first_token: %w", line, rec.Metadata.ID, err)
		}
		if v, ok := rec.Metrics["inter_chunk_latency"]; ok {
			if err := json.Unmarshal(v.Value, &icl); err != nil {
				return nil, fmt.Errorf("record %d: inter_chunk_latency: %w", line, err)
			}
		}
		at := float64(rec.Metadata.Start) + ttft*1e6
		a := []int64{int64(math.Round(at))}
		for _, ms := range icl {
			at += ms * 1e6
			a = append(a, int64(math.Round(at)))
		}
		log[rec.Metadata.ID] = a
	}
}

// errorStats are a client's timing errors (arrival − write, ms): of the
// first chunk (what TTFT carries) and of every later chunk (what ITL and
// inter-chunk latency carry).
type errorStats struct {
	first, later []float64
	unmatched    int
}

func compareLogs(server, client arrivalLog) errorStats {
	var s errorStats
	for id, arrivals := range client {
		writes, ok := server[id]
		if !ok || len(writes) != len(arrivals) {
			s.unmatched++
			continue
		}
		for k, at := range arrivals {
			e := float64(at-writes[k]) / 1e6
			if k == 0 {
				s.first = append(s.first, e)
			} else {
				s.later = append(s.later, e)
			}
		}
	}
	slices.Sort(s.first)
	slices.Sort(s.later)
	return s
}

// quantile is the nearest-rank q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(i, 0)]
}

// compare prints "first_p50 first_p99 later_p50 later_p99 requests" (ms).
func compare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	serverPath := fs.String("server", "", "the server's write log (GET /log)")
	clientPath := fs.String("client", "", "the reference client's CSV, or llmbench's profile_export.jsonl")
	_ = fs.Parse(args)
	sf, err := os.Open(*serverPath)
	if err != nil {
		return err
	}
	defer sf.Close()
	server, err := readCSV(sf)
	if err != nil {
		return fmt.Errorf("%s: %w", *serverPath, err)
	}
	cf, err := os.Open(*clientPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	var client arrivalLog
	if strings.HasSuffix(*clientPath, ".jsonl") {
		client, err = readRecords(cf)
	} else {
		client, err = readCSV(cf)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", *clientPath, err)
	}
	s := compareLogs(server, client)
	if len(client) == 0 {
		return fmt.Errorf("%s: no requests", *clientPath)
	}
	if s.unmatched > 0 {
		return fmt.Errorf("%d of %d requests do not match the server's log by id and chunk count", s.unmatched, len(client))
	}
	fmt.Printf("%.4f %.4f %.4f %.4f %d\n", quantile(s.first, 0.5), quantile(s.first, 0.99), quantile(s.later, 0.5), quantile(s.later, 0.99), len(s.first))
	return nil
}
