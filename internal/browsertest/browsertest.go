// Package browsertest opens a local HTML file in headless Chromium and
// reports what a person's browser would see: console errors, network
// requests, values computed by the page's scripts, and a screenshot.
//
// It exists because a self-contained report is only right if it is right in a
// browser: a test that greps the HTML cannot tell that a chart script threw, a
// font was fetched from the internet, or a canvas stayed blank. Tests that use
// it skip when no Chromium is installed, except under CI, where they fail.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Defaults for the zero fields of Options.
const (
	DefaultWidth   = 1280
	DefaultHeight  = 800
	DefaultTimeout = 60 * time.Second
)

// Options tune Open. The zero value is usable.
type Options struct {
	// Ready is a JavaScript expression that Open waits to become truthy
	// after the load event, such as "window.reportReady === true". Empty
	// means no wait beyond the load event.
	Ready string
	// Width and Height are the viewport size in CSS pixels (device scale 1).
	Width, Height int
	// Timeout bounds the whole life of the Page: starting Chromium, loading,
	// waiting for Ready, and every later call. A hung browser fails the test
	// instead of hanging it.
	Timeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Page is a file loaded in its own headless Chromium. Its methods are safe
// for concurrent use.
type Page struct {
	ctx context.Context // the tab; carries the overall timeout
	url string          // file:// URL of the page itself

	mu       sync.Mutex
	errs     []string
	requests []string
}

// debianChromium is the binary that Debian's /usr/bin/chromium script runs.
const debianChromium = "/usr/lib/chromium/chromium"

// Chromium returns the path of a Chromium binary: $LLMBENCH_CHROMIUM if set,
// else the first of chromium, chromium-browser and google-chrome found on
// PATH, else "".
//
// Debian's chromium on PATH is a shell script that sources /etc/chromium.d,
// which exports Google API keys and adds --enable-remote-extensions and
// --load-extension, and costs about 0.4 s a start. When the script is found,
// the binary it wraps is returned instead.
func Chromium() string {
	if p := os.Getenv("LLMBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return unwrapScript(p, debianChromium)
		}
	}
	return ""
}

// unwrapScript returns bin when path is a script ("#!") and bin is an
// executable file, and path otherwise.
func unwrapScript(path, bin string) string {
	f, err := os.Open(path)
	if err != nil {
		return path
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != "#!" {
		return path
	}
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return path
	}
	return bin
}

// Open loads the file at path in a fresh headless Chromium with a new
// temporary profile, waits for the load event and then for opts.Ready, and
// returns the Page. Without Chromium it skips the test, or fails it when the
// CI environment variable is set. The browser is closed by t.Cleanup.
func Open(t testing.TB, path string, opts Options) *Page {
	t.Helper()
	bin := Chromium()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("browsertest: chromium not installed: .ci/run installs Debian's chromium")
		}
		t.Skip("browsertest: no Chromium found; install Debian's chromium or set LLMBENCH_CHROMIUM to run this test")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("browsertest: resolve %s: %v", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("browsertest: open page: %v", err)
	}
	opts = opts.withDefaults()

	proxy, err := deadProxy(t)
	if err != nil {
		t.Fatalf("browsertest: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, allocatorOptions(bin, proxy, opts)...)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	// Closing the tab context closes the browser gracefully; the allocator
	// then waits for the process to exit and removes its profile directory.
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancel()
	})

	p := &Page{
		ctx: tabCtx,
		url: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(),
	}
	// Listen starts the browser. It must come before the navigation so that
	// nothing the page does while loading is missed.
	if err := chromedp.Listen(tabCtx, p.record); err != nil {
		t.Fatalf("browsertest: start %s: %v", bin, err)
	}
	// chromedp enables these domains when it attaches; enabling them here
	// keeps the events this package relies on independent of that.
	enable := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return fmt.Errorf("enable network events: %w", err)
		}
		if _, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{}); err != nil {
			return fmt.Errorf("enable log events: %w", err)
		}
		return nil
	})
	if err := chromedp.Do(tabCtx,
		enable,
		chromedp.EmulateViewport(int64(opts.Width), int64(opts.Height)),
		chromedp.Navigate(p.url),
	); err != nil {
		t.Fatalf("browsertest: load %s: %v", p.url, err)
	}
	if opts.Ready != "" {
		remaining := opts.Timeout
		if dl, ok := tabCtx.Deadline(); ok {
			remaining = time.Until(dl)
		}
		_, err := chromedp.Run(tabCtx, chromedp.Poll[chromedp.Void](opts.Ready,
			chromedp.WithPollingInterval(10*time.Millisecond),
			chromedp.WithPollingTimeout(remaining)))
		if err != nil {
			t.Fatalf("browsertest: wait for %q in %s: %v (console errors: %q)", opts.Ready, p.url, err, p.ConsoleErrors())
		}
	}
	return p
}

// allocatorOptions are the Chromium flags. The machine's network is closed,
// so every flag that stops a background connection matters: one would show up
// in Requests or stall the start.
func allocatorOptions(bin, proxy string, opts Options) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(opts.Width, opts.Height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-pings", true),
		// Every http(s) and ws request goes to a loopback proxy that
		// closes the connection: the request is still seen (and
		// reported), fails at once, and no packet leaves the machine, even
		// for a literal IP or a name that DNS would try to resolve.
		chromedp.ProxyServer(proxy),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	)
}

// deadProxy listens on a loopback port and closes every connection it
// accepts. It returns the address as a proxy setting for Chromium.
func deadProxy(t testing.TB) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for the blocking proxy: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return "http://" + ln.Addr().String(), nil
}

// record runs on chromedp's event loop: it must be quick and call nothing
// on the browser.
func (p *Page) record(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		p.addError("console." + string(ev.Type) + ": " + argsText(ev.Args))
	case *runtime.EventExceptionThrown:
		p.addError(exceptionText(ev.ExceptionDetails))
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		if e == nil || e.Level != cdplog.EntryLevelError {
			return
		}
		msg := "browser " + string(e.Source) + ": " + e.Text
		if e.URL != "" {
			msg += " (" + e.URL + ")"
		}
		p.addError(msg)
	case *network.EventRequestWillBeSent:
		if ev.Request == nil {
			return
		}
		u := ev.Request.URL
		if u == p.url || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") {
			return
		}
		p.addRequest(u)
	case *network.EventWebSocketCreated:
		// A WebSocket opens no requestWillBeSent, only this.
		p.addRequest(ev.URL)
	}
}

func (p *Page) addRequest(u string) {
	p.mu.Lock()
	p.requests = append(p.requests, u)
	p.mu.Unlock()
}

func (p *Page) addError(msg string) {
	p.mu.Lock()
	p.errs = append(p.errs, msg)
	p.mu.Unlock()
}

// argsText renders console arguments roughly as DevTools shows them:
// strings bare, other primitives as JSON, objects by their description.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a == nil {
			continue
		}
		switch {
		case len(a.Value) > 0:
			var s string
			if a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(a.Value))
			}
		case a.UnserializableValue != "":
			parts = append(parts, string(a.UnserializableValue))
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "uncaught exception"
	}
	msg := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		msg += " " + d.Exception.Description
	} else if d.Exception != nil && len(d.Exception.Value) > 0 {
		msg += " " + string(d.Exception.Value)
	}
	if d.URL != "" {
		msg += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
	}
	return msg
}

// ConsoleErrors returns, as text and in order, the console.error and
// console.assert messages, uncaught exceptions, and errors the browser itself
// logged (such as a resource that failed to load) so far.
func (p *Page) ConsoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// Requests returns the URLs of every request the page made so far,
// WebSockets included, other than the load of the file itself and data: and
// blob: URLs. A self-contained page has none.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Eval evaluates a JavaScript expression, awaiting it if it is a promise, and
// unmarshals its JSON value into out (which may be nil to discard it).
func (p *Page) Eval(expr string, out any) error {
	obj, err := chromedp.Run(p.ctx, chromedp.Evaluate[*runtime.RemoteObject](expr,
		chromedp.EvalAwaitPromise,
		func(ep *runtime.EvaluateParams) { ep.ReturnByValue = ptr(true) }))
	if err != nil {
		return fmt.Errorf("evaluate %q: %w", expr, err)
	}
	if out == nil {
		return nil
	}
	if obj == nil || obj.Type == runtime.RemoteObjectTypeUndefined {
		return fmt.Errorf("evaluate %q: result is undefined", expr)
	}
	if len(obj.Value) == 0 {
		return fmt.Errorf("evaluate %q: result %s has no JSON value", expr, obj.UnserializableValue)
	}
	if err := json.Unmarshal(obj.Value, out); err != nil {
		return fmt.Errorf("evaluate %q: decode %s: %w", expr, obj.Value, err)
	}
	return nil
}

// Text returns the textContent of the first element matching a CSS
// selector, or an error if none matches. It does not wait for the element.
func (p *Page) Text(selector string) (string, error) {
	sel, err := json.Marshal(selector)
	if err != nil {
		return "", fmt.Errorf("text of %q: %w", selector, err)
	}
	var text *string
	expr := fmt.Sprintf("(() => { const e = document.querySelector(%s); return e === null ? null : e.textContent; })()", sel)
	if err := p.Eval(expr, &text); err != nil {
		return "", fmt.Errorf("text of %q: %w", selector, err)
	}
	if text == nil {
		return "", fmt.Errorf("text of %q: %w", selector, ErrNoElement)
	}
	return *text, nil
}

// ErrNoElement is returned by Text when no element matches the selector.
var ErrNoElement = errors.New("no element matches")

// Screenshot returns a PNG of the full page, as tall as its content, at the
// viewport width.
func (p *Page) Screenshot() ([]byte, error) {
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, fmt.Errorf("screenshot %s: %w", p.url, err)
	}
	return buf, nil
}

func ptr[T any](v T) *T { return &v }
