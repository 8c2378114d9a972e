package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// client is the bare reference: concurrency goroutines, each sending the
// next request as soon as its last one ended, over net/http with one kept
// connection per goroutine. It reads each response line by line and notes
// the wall-clock time a "data:" line arrived; nothing is parsed or
// stored beyond that. It writes "id,chunk,arrival_ns" lines.
func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:18950/v1/chat/completions", "endpoint")
	concurrency := fs.Int("concurrency", 64, "requests in flight")
	requests := fs.Int("requests", 1000, "requests in all")
	out := fs.String("out", "reference.csv", "arrival log")
	_ = fs.Parse(args)

	transport := &http.Transport{MaxIdleConnsPerHost: *concurrency, MaxIdleConns: *concurrency, DisableCompression: true}
	hc := &http.Client{Transport: transport}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	arrivals := make([][]int64, *requests)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *concurrency)
	for range *concurrency {
		wg.Go(func() {
			for {
				n := int(next.Add(1) - 1)
				if n >= *requests {
					return
				}
				a, err := send(hc, *url, "ref-"+strconv.Itoa(n), body)
				if err != nil {
					errs <- err
					return
				}
				arrivals[n] = a
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	for n, a := range arrivals {
		for k, ns := range a {
			fmt.Fprintf(bw, "ref-%d,%d,%d\n", n, k, ns)
		}
	}
	return errors.Join(bw.Flush(), f.Close())
}

// send posts one request and returns when each data line (but [DONE])
// arrived.
func send(hc *http.Client, url, id string, body []byte) ([]int64, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", id)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var arrivals []int64
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data:")) && !bytes.Contains(line, []byte("[DONE]")) {
			arrivals = append(arrivals, time.Now().UnixNano())
		}
		if err == io.EOF {
			return arrivals, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
