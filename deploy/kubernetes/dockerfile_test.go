package kubernetes

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The image is built from the repository root's Dockerfile; docker itself
// is not run here (no registry to pull from), so these tests read the
// Dockerfile and run its go build the way it would.

// repoRoot is the module's root, which holds the Dockerfile.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module github.com/llmbench/llmbench\n")) {
		t.Fatalf("%s is not llmbench's module root: %v", root, err)
	}
	return root
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN, …
	args string
}

// stage is a FROM and what follows it.
type stage struct {
	image, name string
	ins         []instruction
}

// parseDockerfile splits a Dockerfile into stages. It knows what these
// tests need: comments, continuation lines and FROM … AS name.
func parseDockerfile(text string) ([]stage, error) {
	var stages []stage
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if body, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			var words []string
			for _, w := range strings.Fields(in.args) {
				if !strings.HasPrefix(w, "--") {
					words = append(words, w)
				}
			}
			if len(words) == 0 {
				return nil, fmt.Errorf("line %d: FROM without an image", in.line)
			}
			st := stage{image: words[0]}
			if len(words) == 3 && strings.EqualFold(words[1], "AS") {
				st.name = words[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			return nil, fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
		}
		stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
	}
	if cur.Len() > 0 {
		return nil, errors.New("the last line continues")
	}
	return stages, nil
}

// shellWords splits a shell command line into words: quotes and
// backslashes as sh reads them, no expansion.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// goBuild finds the stage's `go build`: the variables it runs with (the
// stage's ENV and the assignments before it) and its arguments.
func goBuild(st stage) (env map[string]string, args []string, err error) {
	env = map[string]string{}
	for _, in := range st.ins {
		words, err := shellWords(in.args)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", in.line, err)
		}
		switch in.cmd {
		case "ENV":
			for _, w := range words {
				if k, v, ok := strings.Cut(w, "="); ok {
					env[k] = v
				}
			}
		case "RUN":
			for len(words) > 0 && strings.HasPrefix(words[0], "--") { // --mount=…
				words = words[1:]
			}
			// Each command of a && or ; list on its own.
			for cmd := range splitCommands(words) {
				vars := map[string]string{}
				for len(cmd) > 0 && envNameRE.MatchString(cmd[0]) {
					k, v, _ := strings.Cut(cmd[0], "=")
					vars[k] = v
					cmd = cmd[1:]
				}
				if len(cmd) >= 2 && cmd[0] == "go" && cmd[1] == "build" {
					for k, v := range vars {
						env[k] = v
					}
					return env, cmd[2:], nil
				}
			}
		}
	}
	return nil, nil, errors.New("no go build")
}

// splitCommands yields the commands of a list joined by &&, || or ;.
func splitCommands(words []string) func(func([]string) bool) {
	return func(yield func([]string) bool) {
		start := 0
		for i, w := range words {
			if w == "&&" || w == "||" || w == ";" {
				if !yield(words[start:i]) {
					return
				}
				start = i + 1
			}
		}
		yield(words[start:])
	}
}

// argValue is the value of -name or --name in go build's arguments.
func argValue(args []string, name string) (string, bool) {
	for i, a := range args {
		a = "-" + strings.TrimLeft(a, "-")
		switch {
		case a == "-"+name && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "-"+name+"="):
			return strings.TrimPrefix(a, "-"+name+"="), true
		}
	}
	return "", false
}

// dockerfile is what the tests read from the Dockerfile.
type dockerfile struct {
	stages   []stage
	build    stage
	env      map[string]string
	args     []string
	final    stage
	out      string // go build -o
	binary   string // where the final stage has it
	goMinor  string // go.mod's go 1.N
	buildRef string // the build stage's name or index, as COPY --from says
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(string(raw))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a final one", len(stages))
	}
	d := dockerfile{stages: stages, final: stages[len(stages)-1]}
	for i, st := range stages[:len(stages)-1] {
		env, args, err := goBuild(st)
		if err != nil {
			continue
		}
		d.build, d.env, d.args = st, env, args
		d.buildRef = st.name
		if d.buildRef == "" {
			d.buildRef = fmt.Sprint(i)
		}
	}
	if d.args == nil {
		t.Fatal("no stage before the last runs go build")
	}
	d.out, _ = argValue(d.args, "o")
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^go (1\.\d+)`).FindSubmatch(mod); m != nil {
		d.goMinor = string(m[1])
	}
	return d
}

func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)

	img, tag, _ := strings.Cut(d.build.image, ":")
	if img != "golang" || !(tag == d.goMinor || strings.HasPrefix(tag, d.goMinor+".") || strings.HasPrefix(tag, d.goMinor+"-")) {
		t.Errorf("build stage FROM %s, want golang:%s (go.mod's Go)", d.build.image, d.goMinor)
	}
	if d.env["CGO_ENABLED"] != "0" {
		t.Errorf("go build runs with CGO_ENABLED=%q, want 0: a static binary", d.env["CGO_ENABLED"])
	}
	if !slices.Contains(d.args, "-trimpath") {
		t.Errorf("go build %q without -trimpath", d.args)
	}
	if ld, _ := argValue(d.args, "ldflags"); !slices.Contains(strings.Fields(ld), "-s") || !slices.Contains(strings.Fields(ld), "-w") {
		t.Errorf("go build -ldflags %q, want -s -w", ld)
	}
	if d.args[len(d.args)-1] != "./cmd/llmbench" {
		t.Errorf("go build %q does not build ./cmd/llmbench", d.args)
	}
	if d.out == "" {
		t.Fatal("go build has no -o")
	}

	final := d.final.image
	if final != "scratch" && !strings.HasPrefix(final, "gcr.io/distroless/static") {
		t.Errorf("final stage FROM %s, want gcr.io/distroless/static… or scratch", final)
	}
	var entrypoint, user string
	for _, in := range d.final.ins {
		switch in.cmd {
		case "COPY":
			words, err := shellWords(in.args)
			if err != nil {
				t.Fatal(err)
			}
			if len(words) == 3 && words[0] == "--from="+d.buildRef && words[1] == d.out {
				d.binary = words[2]
				if strings.HasSuffix(d.binary, "/") {
					d.binary += path.Base(d.out)
				}
			}
			if final == "scratch" && strings.Contains(in.args, "ca-certificates") {
				final = "scratch with CA certificates"
			}
		case "ENTRYPOINT":
			var ep []string
			if err := json.Unmarshal([]byte(in.args), &ep); err != nil || len(ep) == 0 {
				t.Errorf("ENTRYPOINT %s: want the exec form, [\"/path/llmbench\"] (there is no shell)", in.args)
				continue
			}
			entrypoint = ep[0]
		case "USER":
			user = in.args
		}
	}
	if final == "scratch" {
		t.Error("FROM scratch without CA certificates: https:// servers and the Hub would fail")
	}
	if d.binary == "" {
		t.Fatalf("the final stage does not COPY --from=%s %s", d.buildRef, d.out)
	}
	if entrypoint != d.binary {
		t.Errorf("ENTRYPOINT %q, want the binary, %q", entrypoint, d.binary)
	}
	nonroot := strings.HasSuffix(final, ":nonroot")
	if u, _, _ := strings.Cut(user, ":"); u != "" {
		nonroot = u != "root" && u != "0"
	}
	if !nonroot {
		t.Errorf("the image runs as root (USER %q); the manifests run it as 65532", user)
	}
}

// TestStaticBinary builds llmbench as the Dockerfile does and checks the
// result needs no dynamic loader: it runs on distroless/static or
// scratch.
//
// CI builds the binary once with the Dockerfile's command (.ci/run, which
// TestCIBuildsAsTheDockerfile holds to it) and names it in
// LLMBENCH_STATIC_BINARY: this test then reads that one instead of
// compiling llmbench a second time (minutes of a 2-core machine's CPU).
func TestStaticBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; this host builds", runtime.GOOS)
	}
	if bin := os.Getenv("LLMBENCH_STATIC_BINARY"); bin != "" {
		checkStatic(t, bin)
		return
	}
	if testing.Short() {
		t.Skip("builds llmbench (about a minute on a cold cache)")
	}
	d := readDockerfile(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "llmbench")
	args := slices.Clone(d.args)
	for i := range args {
		if (args[i] == "-o" || args[i] == "--o") && i+1 < len(args) {
			args[i+1] = bin
		}
	}
	cmd := exec.Command(goBin, append([]string{"build"}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = os.Environ()
	for k, v := range d.env {
		if !strings.Contains(v, "$") { // GOOS=$TARGETOS: the host's here
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %q: %v\n%s", args, err, out)
	}
	checkStatic(t, bin)
}

// TestCIBuildsAsTheDockerfile: the binary CI hands TestStaticBinary is
// built with the Dockerfile's flags.
func TestCIBuildsAsTheDockerfile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	d := readDockerfile(t)
	var build string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, "go build") && strings.Contains(line, "LLMBENCH_STATIC_BINARY") || strings.Contains(line, "go build") && strings.Contains(line, "./cmd/llmbench") {
			build = line
		}
	}
	if build == "" {
		t.Fatal(".ci/run builds no llmbench binary")
	}
	for k, v := range d.env {
		if !strings.Contains(v, "$") && !strings.Contains(build, k+"="+v) {
			t.Errorf(".ci/run's build %q lacks the Dockerfile's %s=%s", build, k, v)
		}
	}
	words, err := shellWords(build)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range d.args {
		if strings.HasPrefix(a, "-") && a != "-o" && !slices.Contains(words, a) {
			t.Errorf(".ci/run's build %q lacks the Dockerfile's %s", build, a)
		}
	}
	if !strings.Contains(string(raw), "LLMBENCH_STATIC_BINARY=") {
		t.Error(".ci/run does not hand its binary to TestStaticBinary (LLMBENCH_STATIC_BINARY)")
	}
}

// checkStatic fails unless bin runs without a dynamic loader and is
// stripped.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(p.Open())
			t.Errorf("dynamically linked: PT_INTERP %s", bytes.TrimRight(interp, "\x00"))
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Error("has a PT_DYNAMIC segment")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("needs shared libraries %v (%v)", libs, err)
	}
	if f.Section(".symtab") != nil {
		t.Error("has a symbol table: -ldflags=-s did not strip it")
	}
}

// ignoreRule is one .dockerignore line: a pattern, and whether it
// excludes or (with !) brings back.
type ignoreRule struct {
	re      *regexp.Regexp
	exclude bool
}

// parseDockerignore reads .dockerignore as docker does: patterns relative
// to the context's root, ** for any depth, a matched folder taking its
// contents with it, the last matching line deciding.
func parseDockerignore(text string) ([]ignoreRule, error) {
	var rules []ignoreRule
	for _, line := range strings.Split(text, "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		r := ignoreRule{exclude: true}
		if rest, ok := strings.CutPrefix(p, "!"); ok {
			p, r.exclude = strings.TrimSpace(rest), false
		}
		p = path.Clean(strings.TrimPrefix(p, "/"))
		var b strings.Builder
		b.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case strings.HasPrefix(p[i:], "**/"):
				b.WriteString("(?:.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				b.WriteString(".*")
				i++
			case c == '*':
				b.WriteString("[^/]*")
			case c == '?':
				b.WriteString("[^/]")
			case c == '[' || c == '\\':
				return nil, fmt.Errorf("%q: [ and \\ are beyond what this test reads", p)
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		b.WriteString("(?:/.*)?$")
		re, err := regexp.Compile(b.String())
		if err != nil {
			return nil, err
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules, nil
}

func ignored(rules []ignoreRule, rel string) bool {
	out := false
	for _, r := range rules {
		if r.re.MatchString(rel) {
			out = r.exclude
		}
	}
	return out
}

func TestParseDockerignore(t *testing.T) {
	rules, err := parseDockerignore("# c\n.git\n**/*.test\n/bench\n**/testdata\n*.md\n!README.md\n")
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		".git":                           true,
		".git/HEAD":                      true,
		".github/x":                      false,
		"report.test":                    true,
		"internal/tokenizer/x.test":      true,
		"internal/tokenizer/x.test.go":   false,
		"bench/arrivals/main.go":         true,
		"internal/bench/x.go":            false,
		"internal/a/testdata/b/c.json":   true,
		"internal/a/testdatum.go":        false,
		"NOTES.md":                       true,
		"README.md":                      false,
		"docs/x.md":                      false,
		"cmd/llmbench/main.go":           false,
		"internal/report/assets/page.md": false,
	} {
		if got := ignored(rules, rel); got != want {
			t.Errorf("ignored(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestDockerContext checks .dockerignore keeps every file go build needs
// (Go and assembly files, embedded files, go.mod and go.sum) and leaves
// out the bulk: binaries, node_modules, test data.
func TestDockerContext(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := parseDockerignore(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	needed := map[string]bool{"go.mod": true, "go.sum": true}
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command(goBin, "list", "-deps", "-json=Dir,GoFiles,SFiles,EmbedFiles,Module", "./cmd/llmbench")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var pkg struct {
				Dir                         string
				GoFiles, SFiles, EmbedFiles []string
				Module                      *struct{ Main bool }
			}
			if err := dec.Decode(&pkg); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if pkg.Module == nil || !pkg.Module.Main {
				continue
			}
			for _, f := range slices.Concat(pkg.GoFiles, pkg.SFiles, pkg.EmbedFiles) {
				rel, err := filepath.Rel(root, filepath.Join(pkg.Dir, f))
				if err != nil {
					t.Fatal(err)
				}
				needed[filepath.ToSlash(rel)] = true
			}
		}
	}
	if len(needed) < 10 {
		t.Fatalf("go list found only %d files", len(needed))
	}
	for _, f := range slices.Sorted(maps.Keys(needed)) {
		if ignored(rules, f) {
			t.Errorf(".dockerignore leaves out %s, which go build needs", f)
		}
	}

	// What docker would send: well under the repository's size on disk.
	negated := slices.ContainsFunc(rules, func(r ignoreRule) bool { return !r.exclude })
	var size int64
	var biggest string
	var biggestSize int64
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if ignored(rules, rel) {
			if e.IsDir() && !negated { // else a ! line may bring a file back
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		if info.Size() > biggestSize {
			biggest, biggestSize = rel, info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 32 << 20
	if size > limit {
		t.Errorf("the build context is %d MiB (biggest: %s, %d MiB); add what is not needed to .dockerignore", size>>20, biggest, biggestSize>>20)
	}
	t.Logf("build context: %.1f MiB, %d files needed by go build", float64(size)/(1<<20), len(needed))
}
