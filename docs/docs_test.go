// Package docs holds llmbench's documentation pages; its test checks that
// the README and the pages link only to files and headings that exist, and
// that the README keeps the commands CI and a newcomer run.
package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// anchorOf is the fragment GitHub gives a heading: lower case, every
// character but letters, digits, spaces, hyphens and underscores dropped,
// spaces turned into hyphens; a repeated heading gets -1, -2, ….
func anchorOf(heading string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	a := b.String()
	n := seen[a]
	seen[a]++
	if n > 0 {
		a += "-" + itoa(n)
	}
	return a
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// page is a markdown file's headings' anchors and its links, outside
// fenced code.
type page struct {
	anchors map[string]bool
	links   []string
}

var (
	headingRE = regexp.MustCompile(`^#{1,6} (.+)$`)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRE    = regexp.MustCompile("`[^`]*`")
)

func readPage(t *testing.T, path string) page {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			p.anchors[anchorOf(m[1], seen)] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			p.links = append(p.links, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLinksResolve follows every relative link of README.md and docs/*.md:
// the file must exist and, with a #fragment into a markdown file, so must
// the heading.
func TestLinksResolve(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	pages := map[string]page{}
	load := func(path string) page {
		path = filepath.Clean(path)
		if p, ok := pages[path]; ok {
			return p
		}
		p := readPage(t, path)
		pages[path] = p
		return p
	}
	checked := 0
	for _, from := range files {
		for _, link := range load(from).links {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, frag, _ := strings.Cut(link, "#")
			path := filepath.Clean(from)
			if target != "" {
				path = filepath.Join(filepath.Dir(from), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s: no such file", from, link)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !load(path).anchors[frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", from, link, path, frag)
			}
			checked++
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links checked: the pages were not read", checked)
	}
}

// TestAnchorOf pins the heading-to-fragment rule on headings the pages
// have.
func TestAnchorOf(t *testing.T) {
	seen := map[string]int{}
	for _, c := range []struct{ heading, want string }{
		{"Where llmbench's defaults differ from AIPerf's", "where-llmbenchs-defaults-differ-from-aiperfs"},
		{"Reports: `report.html`, `llmbench plot`", "reports-reporthtml-llmbench-plot"},
		{"Histogram percentiles (`p1_estimate` … `p99_estimate`)", "histogram-percentiles-p1_estimate--p99_estimate"},
		{"Exit codes", "exit-codes"},
		{"Exit codes", "exit-codes-1"},
	} {
		if got := anchorOf(c.heading, seen); got != c.want {
			t.Errorf("anchorOf(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// TestREADMEKeepsTheTwoCommands checks that the README's front page holds
// the main command (a benchmark of the built-in server writing every
// export) and the test command that .ci/run runs.
func TestREADMEKeepsTheTwoCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	const testCommand = "go test -race -timeout 30m ./..."
	if !strings.Contains(string(readme), "```sh\n"+testCommand+"\n```") {
		t.Errorf("README.md has no block with the test command %q", testCommand)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(testCommand) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", testCommand)
	}
	main := regexp.MustCompile("(?s)```sh\n(go run ./cmd/llmbench profile --mock [^`]*)```").FindSubmatch(readme)
	if main == nil {
		t.Fatal("README.md has no main command (go run ./cmd/llmbench profile --mock …)")
	}
	for _, want := range []string{"--server-metrics-formats json csv jsonl parquet", "--mock-gpus"} {
		if !strings.Contains(string(main[1]), want) {
			t.Errorf("the README's main command lacks %q: %s", want, main[1])
		}
	}
}
