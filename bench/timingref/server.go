package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// chunkLog is what the server wrote: for each request (by its
// X-Request-Id), the wall-clock time just before each chunk's write.
type chunkLog struct {
	mu   sync.Mutex
	rows []writeRow
}

type writeRow struct {
	id     string
	writes []int64
}

func (l *chunkLog) add(id string, writes []int64) {
	l.mu.Lock()
	l.rows = append(l.rows, writeRow{id, writes})
	l.mu.Unlock()
}

// writeTo writes "id,chunk,write_ns" lines and forgets them.
func (l *chunkLog) writeTo(w io.Writer) error {
	l.mu.Lock()
	rows := l.rows
	l.rows = nil
	l.mu.Unlock()
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		for k, ns := range r.writes {
			fmt.Fprintf(bw, "%s,%d,%d\n", r.id, k, ns)
		}
	}
	return bw.Flush()
}

// serve runs a streaming chat-completions server that logs when it wrote
// each chunk. It speaks HTTP/1.1 on raw connections (one goroutine each, one
// write per chunk), so what it logs is the moment the bytes went to the
// kernel, with nothing buffered after it. GET /log returns (and clears) the
// log.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18950", "listen address")
	tokens := fs.Int("tokens", 32, "content chunks a response")
	ttft := fs.Duration("ttft", 20*time.Millisecond, "wait before the first chunk")
	itl := fs.Duration("itl", 5*time.Millisecond, "wait between chunks")
	_ = fs.Parse(args)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); ln.Close() }()
	s := &server{tokens: *tokens, ttft: *ttft, itl: *itl, log: &chunkLog{}}
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		go s.handle(conn)
	}
}

type server struct {
	tokens    int
	ttft, itl time.Duration
	log       *chunkLog
}

// request is what the server reads of one request.
type request struct {
	method, path, id string
}

func readRequest(br *bufio.Reader) (request, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return request{}, err
	}
	f := strings.Fields(line)
	if len(f) < 3 {
		return request{}, fmt.Errorf("bad request line %q", line)
	}
	r := request{method: f[0], path: f[1]}
	length := 0
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return request{}, err
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		name, value, _ := strings.Cut(h, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.Atoi(value); err != nil {
				return request{}, fmt.Errorf("bad Content-Length %q", value)
			}
		case "x-request-id":
			r.id = value
		}
	}
	if _, err := br.Discard(length); err != nil {
		return request{}, err
	}
	return r, nil
}

func (s *server) handle(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		r, err := readRequest(br)
		if err != nil {
			return
		}
		if r.method == http.MethodGet && r.path == "/log" {
			var b bytes.Buffer
			_ = s.log.writeTo(&b)
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", b.Len())
			if _, err := conn.Write(b.Bytes()); err != nil {
				return
			}
			continue
		}
		if err := s.stream(conn, r.id); err != nil {
			return
		}
	}
}

// stream answers one request: the head with the first chunk after ttft,
// then a chunk every itl, the last with finish_reason, then [DONE].
func (s *server) stream(conn net.Conn, id string) error {
	writes := make([]int64, 0, s.tokens)
	start := time.Now()
	var buf []byte
	for k := range s.tokens {
		due := start.Add(s.ttft + time.Duration(k)*s.itl)
		time.Sleep(time.Until(due))
		buf = buf[:0]
		if k == 0 {
			buf = append(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"...)
		}
		finish := "null"
		if k == s.tokens-1 {
			finish = `"length"`
		}
		event := fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"finish_reason":%s}]}`+"\n\n", finish)
		buf = fmt.Appendf(buf, "%x\r\n%s\r\n", len(event), event)
		if k == s.tokens-1 {
			const done = "data: [DONE]\n\n"
			buf = fmt.Appendf(buf, "%x\r\n%s\r\n0\r\n\r\n", len(done), done)
		}
		writes = append(writes, time.Now().UnixNano())
		if _, err := conn.Write(buf); err != nil {
			return errors.Join(err, conn.Close())
		}
	}
	if id != "" {
		s.log.add(id, writes)
	}
	return nil
}
