package browsertest

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// writePage writes html to a file in a fresh temporary directory and returns
// its path.
func writePage(t *testing.T, html string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A 1×1 red PNG, inline: loading it is no request.
const redDot = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

func TestOpenReports(t *testing.T) {
	tests := []struct {
		name  string
		html  string
		ready string
		// wantErrors has one substring for each console error expected,
		// in any order.
		wantErrors   []string
		wantRequests []string // sorted
	}{
		{
			name: "console.error and console.assert",
			html: `<!doctype html><script>
console.log("not an error");
console.warn("not an error either");
console.error("boom", 42);
console.assert(1 === 2, "one is not two");
console.assert(true, "holds");
</script>`,
			wantErrors: []string{"console.error: boom 42", "console.assert: one is not two"},
		},
		{
			name: "uncaught exceptions",
			html: `<!doctype html><script>
setTimeout(() => { window.done = true; null.x; }, 0);
Promise.reject(new RangeError("nobody caught me"));
throw new Error("kaboom");
</script>`,
			ready:      "window.done === true",
			wantErrors: []string{"Uncaught Error: kaboom", "Uncaught TypeError", "Uncaught (in promise) RangeError: nobody caught me"},
		},
		{
			name: "remote image, fetch and websocket",
			html: `<!doctype html>
<img src="http://192.0.2.1/x.png" onerror="window.img = true">
<script>
fetch('https://example.invalid/a').catch(() => { window.fetched = true; });
new WebSocket("ws://192.0.2.1/w").onerror = () => { window.ws = true; };
</script>`,
			ready: "window.img === true && window.fetched === true && window.ws === true",
			wantErrors: []string{
				"(http://192.0.2.1/x.png)",
				"(https://example.invalid/a)",
				"WebSocket connection to 'ws://192.0.2.1/w' failed",
			},
			wantRequests: []string{"http://192.0.2.1/x.png", "https://example.invalid/a", "ws://192.0.2.1/w"},
		},
		{
			name:  "data image",
			html:  `<!doctype html><img id="i" src="` + redDot + `"><script>window.onload = () => { window.done = document.getElementById("i").naturalWidth === 1; };</script>`,
			ready: "window.done === true",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Open(t, writePage(t, tt.html), Options{Ready: tt.ready})

			if errs := p.ConsoleErrors(); !matchAll(errs, tt.wantErrors) {
				t.Errorf("ConsoleErrors() = %q, want %d containing %q", errs, len(tt.wantErrors), tt.wantErrors)
			}

			reqs := p.Requests()
			slices.Sort(reqs)
			if !slices.Equal(reqs, tt.wantRequests) {
				t.Errorf("Requests() = %q, want %q", reqs, tt.wantRequests)
			}
		})
	}
}

// matchAll reports whether got and want have the same length and each of
// got contains a different one of want.
func matchAll(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	used := make([]bool, len(got))
next:
	for _, w := range want {
		for i, g := range got {
			if !used[i] && strings.Contains(g, w) {
				used[i] = true
				continue next
			}
		}
		return false
	}
	return true
}

// The clean page: a script runs, nothing is fetched, nothing goes wrong, and
// the page can be queried.
func TestCleanPage(t *testing.T) {
	t.Parallel()
	p := Open(t, writePage(t, `<!doctype html><title>Clean</title>
<p id="x">hello <b>world</b></p>
<script>window.stats = {n: 3, names: ["a", "b"]}; window.done = true;</script>`), Options{Ready: "window.done === true"})

	if errs := p.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("ConsoleErrors() = %q, want none", errs)
	}
	if reqs := p.Requests(); len(reqs) != 0 {
		t.Errorf("Requests() = %q, want none", reqs)
	}

	var title string
	if err := p.Eval("document.title", &title); err != nil || title != "Clean" {
		t.Errorf(`Eval("document.title") = %q, %v; want "Clean"`, title, err)
	}

	var stats struct {
		N     int      `json:"n"`
		Names []string `json:"names"`
	}
	if err := p.Eval("window.stats", &stats); err != nil || stats.N != 3 || !slices.Equal(stats.Names, []string{"a", "b"}) {
		t.Errorf("Eval(window.stats) = %+v, %v; want {3 [a b]}", stats, err)
	}

	var sum int
	if err := p.Eval("Promise.resolve(1 + 2)", &sum); err != nil || sum != 3 {
		t.Errorf("Eval(promise) = %d, %v; want 3", sum, err)
	}

	var v any
	if err := p.Eval("undefined", &v); err == nil {
		t.Error("Eval(undefined): no error")
	}
	if err := p.Eval("(() => { throw new Error('nope'); })()", &v); err == nil {
		t.Error("Eval(throw): no error")
	}

	texts := []struct {
		sel     string
		want    string
		wantErr error
	}{
		{sel: "#x", want: "hello world"},
		{sel: "p b", want: "world"},
		{sel: "#missing", wantErr: ErrNoElement},
	}
	for _, tt := range texts {
		got, err := p.Text(tt.sel)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("Text(%q) = %q, %v; want %q, %v", tt.sel, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := p.Text("##bad"); err == nil {
		t.Error(`Text("##bad"): no error for an invalid selector`)
	}
}

func TestScreenshot(t *testing.T) {
	t.Parallel()
	const width = 640
	p := Open(t, writePage(t, `<!doctype html>
<style>body { margin: 0; background: #fff; } #c { width: 200px; height: 100px; background: #f00; }</style>
<div id="c"></div>`), Options{Width: width, Height: 480})

	buf, err := p.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != width || b.Dy() < 100 {
		t.Errorf("screenshot is %dx%d, want %d wide and at least 100 tall", b.Dx(), b.Dy(), width)
	}
	probes := []struct {
		x, y int
		want color.RGBA
	}{
		{10, 10, color.RGBA{255, 0, 0, 255}},      // inside the div
		{300, 50, color.RGBA{255, 255, 255, 255}}, // beside it
	}
	for _, pr := range probes {
		if got := color.RGBAModel.Convert(img.At(pr.x, pr.y)).(color.RGBA); got != pr.want {
			t.Errorf("pixel (%d,%d) = %v, want %v", pr.x, pr.y, got, pr.want)
		}
	}
	if flat(img) {
		t.Error("screenshot is a single flat colour, want a drawn page")
	}
}

// flat reports whether every pixel of img has the colour of the first.
func flat(img image.Image) bool {
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	r0, g0, b0, a0 := first.RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// stopRecorder stands in for the test given to Open, so that a test can see
// Open stop it: Fatal and Skip record the message and end the goroutine, as
// the real ones do. Cleanup goes to the real test.
type stopRecorder struct {
	testing.TB
	fatal, skip string
}

func (r *stopRecorder) Helper() {}
func (r *stopRecorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *stopRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *stopRecorder) Skip(args ...any) {
	r.skip = fmt.Sprint(args...)
	runtime.Goexit()
}

// openStopped runs Open with a stopRecorder in its own goroutine and returns
// the recorder once Open has returned or stopped.
func openStopped(t *testing.T, path string, opts Options) *stopRecorder {
	r := &stopRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Open(r, path, opts)
	}()
	<-done
	return r
}

func TestOpenWithoutChromium(t *testing.T) {
	tests := []struct {
		name      string
		ci        string
		wantFatal string
		wantSkip  string
	}{
		{name: "developer", ci: "", wantSkip: "no Chromium found"},
		{name: "CI", ci: "true", wantFatal: "chromium not installed: .ci/run installs Debian's chromium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LLMBENCH_CHROMIUM", "")
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", tt.ci)
			r := openStopped(t, "page.html", Options{})
			if !strings.Contains(r.fatal, tt.wantFatal) || (tt.wantFatal == "") != (r.fatal == "") {
				t.Errorf("Fatal message %q, want %q", r.fatal, tt.wantFatal)
			}
			if !strings.Contains(r.skip, tt.wantSkip) || (tt.wantSkip == "") != (r.skip == "") {
				t.Errorf("Skip message %q, want %q", r.skip, tt.wantSkip)
			}
		})
	}
}

func TestChromiumEnv(t *testing.T) {
	t.Setenv("LLMBENCH_CHROMIUM", "/opt/some/chrome")
	if got := Chromium(); got != "/opt/some/chrome" {
		t.Errorf("Chromium() = %q, want $LLMBENCH_CHROMIUM", got)
	}
}

func TestUnwrapScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := write("chromium", "#!/bin/sh\nexec /usr/lib/chromium/chromium \"$@\"\n", 0o755)
	elf := write("chrome", "\x7fELF...", 0o755)
	bin := write("chromium-bin", "\x7fELF...", 0o755)
	notExec := write("chromium-noexec", "\x7fELF...", 0o644)

	tests := []struct {
		name, path, bin, want string
	}{
		{"script with its binary", script, bin, bin},
		{"script without its binary", script, filepath.Join(dir, "missing"), script},
		{"script with a non-executable binary", script, notExec, script},
		{"binary", elf, bin, elf},
		{"missing path", filepath.Join(dir, "nothing"), bin, filepath.Join(dir, "nothing")},
	}
	for _, tt := range tests {
		if got := unwrapScript(tt.path, tt.bin); got != tt.want {
			t.Errorf("%s: unwrapScript(%q, %q) = %q, want %q", tt.name, tt.path, tt.bin, got, tt.want)
		}
	}
}

// A page that never becomes ready fails the test once the timeout is over; it
// does not hang it.
func TestReadyTimeout(t *testing.T) {
	if Chromium() == "" {
		t.Skip("no Chromium")
	}
	t.Parallel()
	const timeout = 2 * time.Second
	start := time.Now()
	r := openStopped(t, writePage(t, `<!doctype html><p>never ready</p>`), Options{Ready: "window.never === true", Timeout: timeout})
	if r.fatal == "" {
		t.Fatal("Open returned for a page that never became ready")
	}
	t.Log(r.fatal)
	if took := time.Since(start); took > timeout+5*time.Second {
		t.Errorf("Open took %v to give up, want about %v", took, timeout)
	}
}
