package mockserver

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultRule injects the named fault into every Nth inference request, on
// any route.
type FaultRule struct {
	Name  string
	Every int
}

// fault is one way of misbehaving on purpose, as a broken server or a
// proxy in front of one would. Either respond answers the request in place
// of the route's answer, or alter changes how the answer is written before
// it is and returns what to do after it.
//
// Every fault applies to every route. The responding faults answer with
// their chat-shaped (or empty, or HTML) bodies whatever the route, which
// for the other APIs is an answer without what they expect. Of the
// altering ones, gzip and truncate apply to every answer; ignore-stream
// and force-stream to the routes that can stream (chat, completions,
// responses, messages, TGI's generate, images, transcriptions, RAG) and
// leave the others (embeddings, rankings, image retrieval, video jobs)
// unchanged. A video job's faults strike its submission, not its polls.
type fault struct {
	name    string
	help    string
	respond func(w http.ResponseWriter, r *http.Request, stream bool)
	alter   func(c *call) (after func())
}

// faults lists every fault by name; it is never modified.
var faults = []fault{
	{name: "empty-body", help: "200 with the right Content-Type and no body", respond: func(w http.ResponseWriter, _ *http.Request, stream bool) {
		w.Header().Set("Content-Type", contentType(stream))
		w.WriteHeader(http.StatusOK)
	}},
	{name: "no-data", help: "a stream of keep-alive comments and pings, never a data: line", respond: func(w http.ResponseWriter, _ *http.Request, stream bool) {
		w.Header().Set("Content-Type", contentType(stream))
		if stream {
			fmt.Fprint(w, ": keep-alive\n\nevent: ping\n\n: keep-alive\n\n")
		}
	}},
	{name: "empty-choices", help: `chunks (or a body) whose "choices" are all empty`, respond: func(w http.ResponseWriter, _ *http.Request, stream bool) {
		w.Header().Set("Content-Type", contentType(stream))
		if stream {
			fmt.Fprint(w, strings.Repeat(`data: {"id":"x","object":"chat.completion.chunk","choices":[]}`+"\n\n", 3)+"data: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[]}`)
	}},
	{name: "null-content", help: `"content": null in every chunk (or the message)`, respond: func(w http.ResponseWriter, _ *http.Request, stream bool) {
		w.Header().Set("Content-Type", contentType(stream))
		if stream {
			fmt.Fprint(w, `data: {"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`+"\n\n"+
				`data: {"id":"x","choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`)
	}},
	{name: "html", help: "an HTML page, as a proxy or a wrong path answers", respond: func(w http.ResponseWriter, _ *http.Request, _ bool) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n")
	}},
	{name: "hang", help: "accept the request and never answer", respond: func(w http.ResponseWriter, r *http.Request, _ bool) {
		select {
		case <-r.Context().Done():
		case <-time.After(hangLimit):
		}
	}},
	{name: "ignore-stream", help: `answer with a plain JSON body even when "stream": true`, alter: func(c *call) func() {
		c.stream = false
		return nil
	}},
	{name: "force-stream", help: `answer with an SSE stream even when "stream" is false`, alter: func(c *call) func() {
		c.stream = true
		return nil
	}},
	{name: "gzip", help: "gzip the body although the client sent no Accept-Encoding", alter: func(c *call) func() {
		gz := &gzipWriter{ResponseWriter: c.w, zw: gzip.NewWriter(c.w)}
		c.w = gz
		return func() { _ = gz.zw.Close() }
	}},
	{name: "truncate", help: "end the response cleanly halfway: no finish_reason, no [DONE]", alter: func(c *call) func() {
		c.truncate = true
		return nil
	}},
}

// FaultNames lists the faults --mock-fault accepts, with what each does.
func FaultNames() string {
	var b strings.Builder
	for i, f := range faults {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.name + ": " + f.help)
	}
	return b.String()
}

func lookupFault(name string) (*fault, bool) {
	for i := range faults {
		if faults[i].name == name {
			return &faults[i], true
		}
	}
	return nil, false
}

// ParseFaultRule reads "name" (every request) or "name:N" (every Nth).
func ParseFaultRule(s string) (FaultRule, error) {
	name, every, hasEvery := strings.Cut(strings.TrimSpace(s), ":")
	if _, ok := lookupFault(name); !ok {
		return FaultRule{}, fmt.Errorf("unknown fault %q; the faults are: %s", name, FaultNames())
	}
	r := FaultRule{Name: name, Every: 1}
	if hasEvery {
		n, err := strconv.Atoi(every)
		if err != nil || n < 1 {
			return FaultRule{}, fmt.Errorf("fault %q: %q is not a whole number of at least 1", name, every)
		}
		r.Every = n
	}
	return r, nil
}

// faultFor returns the fault injected into request seq, if any: the first
// rule that matches.
func (s *Server) faultFor(seq uint64) *fault {
	for _, r := range s.cfg.Faults {
		if every(r.Every, seq) {
			f, _ := lookupFault(r.Name) // validated in New
			return f
		}
	}
	return nil
}

func contentType(stream bool) string {
	if stream {
		return "text/event-stream"
	}
	return "application/json"
}

// gzipWriter compresses everything written, flushing the compressor on
// every Flush so streamed chunks still arrive one by one.
type gzipWriter struct {
	http.ResponseWriter
	zw          *gzip.Writer
	wroteHeader bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.wroteHeader {
		g.wroteHeader = true
		g.Header().Set("Content-Encoding", "gzip")
		g.Header().Del("Content-Length")
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	return g.zw.Write(b)
}

func (g *gzipWriter) Flush() {
	_ = g.zw.Flush()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// hangLimit bounds a "hang" so a forgotten server does not hold
// connections forever.
const hangLimit = 10 * time.Minute
