package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	sr := NewReader(r)
	var out []string
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		s := string(ev.Data)
		if len(ev.Name) > 0 {
			s = string(ev.Name) + "|" + s
		}
		out = append(out, s)
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"openai stream", "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, `{"a":2}`, "[DONE]"}},
		{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", []string{"x", "y"}},
		{"no space after colon", "data:x\n\n", []string{"x"}},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments and keep-alives", ": ping\n\n: ping\ndata: z\n\n", []string{"z"}},
		{"event name", "event: error\ndata: boom\n\ndata: ok\n\n", []string{"error|boom", "ok"}},
		{"unterminated last event", "data: a\n\ndata: tail", []string{"a", "tail"}},
		{"other fields ignored", "id: 7\nretry: 10\ndata: q\n\n", []string{"q"}},
		{"empty", "", nil},
		{"blank lines only", "\n\n\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.input), iotest.OneByteReader(strings.NewReader(tc.input))} {
				got, err := readAll(t, r)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	got, err := readAll(t, strings.NewReader("data: "+big+"\n\n"))
	if err != nil || len(got) != 1 || got[0] != big {
		t.Fatalf("long line: err %v, %d events", err, len(got))
	}
	r := NewReader(strings.NewReader("data: " + big))
	r.maxLine = 50_000
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	sr := NewReader(r)
	if ev, err := sr.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event: %q %v", ev.Data, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data:b\r\n\r\n", ": c\n", "event: e\ndata: x\ndata: y\n\n", "data"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sr := NewReader(strings.NewReader(s))
		for i := 0; ; i++ {
			ev, err := sr.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > len(s) {
				t.Fatalf("event data longer than the input")
			}
			if i > len(s) {
				t.Fatalf("more events than input bytes")
			}
		}
	})
}

func BenchmarkReader(b *testing.B) {
	chunk := "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" bako\"}}]}\n\n"
	stream := strings.Repeat(chunk, 256) + "data: [DONE]\n\n"
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	rd := strings.NewReader(stream)
	for b.Loop() {
		rd.Reset(stream)
		sr := NewReader(rd)
		for {
			if _, err := sr.Next(); err != nil {
				break
			}
		}
	}
}
