package main

import (
	"bufio"
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/capacity"
)

// aiperfDocsAcceptedFloor is how many of the `aiperf profile` command lines
// in testdata/aiperf-doc-commands.tsv llmbench accepted when the test was
// written. It only goes up: when a change makes more of them parse, run
//
//	go test ./cmd/llmbench -run TestAIPerfDocs -count=1 -v
//
// and set this to the "accepted" figure of its summary. Adding command
// lines to the TSV never lowers the count; removing them is not the way
// to make the test pass.
const aiperfDocsAcceptedFloor = 262

// What became of one documented command line.
const (
	docAccepted    = "accepted"
	docNeedsFile   = "needs a file"
	docNeedsNet    = "needs network"
	docRefused     = "refused"
	docNotACommand = "not a command"
	// The docs write "..." for "your other flags": no tool could run the
	// line as written, so it is counted apart from llmbench's refusals.
	docElided = "elided"
)

// TestAIPerfDocs parses every `aiperf profile` command line of AIPerf's
// documentation (testdata/aiperf-doc-commands.tsv: doc path, TAB, the
// command with its continuations joined) as `llmbench profile` would,
// running the same checks profile() runs before its first request and
// nothing after them: no server, no tokenizer, no dataset. It logs how
// many were accepted and why the others were refused, and fails only
// when fewer than aiperfDocsAcceptedFloor were accepted.
func TestAIPerfDocs(t *testing.T) {
	t.Setenv("HF_HUB_OFFLINE", "1")
	// A developer's own settings must not change the count.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "LLMBENCH_") || strings.HasPrefix(name, "AIPERF_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	// Relative files the commands name are looked up in an empty folder.
	tsv, err := filepath.Abs(filepath.Join("testdata", "aiperf-doc-commands.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())

	f, err := os.Open(tsv)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	reasons := map[string][]string{} // refusal → the commands refused with it
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	total := 0
	for sc.Scan() {
		doc, command, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.TrimSpace(command) == "" {
			continue
		}
		total++
		class, reason := checkDocCommand(command)
		counts[class]++
		if class == docRefused {
			reasons[reason] = append(reasons[reason], doc+": "+command)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	t.Logf("%d command lines from AIPerf's docs: %d accepted, %d need a file, %d need network, %d refused; %d elided with \"...\", %d not a command",
		total, counts[docAccepted], counts[docNeedsFile], counts[docNeedsNet], counts[docRefused], counts[docElided], counts[docNotACommand])
	type group struct {
		reason   string
		commands []string
	}
	var groups []group
	for r, cs := range reasons {
		groups = append(groups, group{r, cs})
	}
	slices.SortFunc(groups, func(a, b group) int {
		if c := cmp.Compare(len(b.commands), len(a.commands)); c != 0 {
			return c
		}
		return strings.Compare(a.reason, b.reason)
	})
	for _, g := range groups {
		t.Logf("%4d  %s\n        e.g. %s", len(g.commands), g.reason, g.commands[0])
	}
	if counts[docAccepted] < aiperfDocsAcceptedFloor {
		t.Errorf("%d of AIPerf's documented command lines accepted, fewer than the %d accepted before: a flag or a value that parsed no longer does",
			counts[docAccepted], aiperfDocsAcceptedFloor)
	}
}

// checkDocCommand classifies one documented command line and, when it is
// refused, says why in a form that groups alike refusals.
func checkDocCommand(command string) (class, reason string) {
	words, err := shellWords(command)
	if err != nil {
		return docNotACommand, err.Error()
	}
	// Leading VAR=value assignments set the command's environment;
	// llmbench reads none of AIPerf's, so they are dropped.
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "aiperf" || words[1] != "profile" {
		return docNotACommand, "does not start with aiperf profile"
	}
	if slices.Contains(words, "...") || slices.Contains(words, "…") {
		return docElided, ""
	}
	words[0] = "llmbench"
	if wantsHelp(words[2:]) {
		return docAccepted, ""
	}
	// What profile() checks before it sends anything.
	p, _, err := parseProfile(words, nil)
	if err == nil {
		err = p.CheckCommandLine()
	}
	if err == nil && (p.Swept() || p.Search.Recipe != "") {
		err = capacity.Check(p)
	}
	switch {
	case err == nil:
		return docAccepted, ""
	case errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "no such file or directory"):
		return docNeedsFile, err.Error()
	case strings.Contains(err.Error(), "HF_HUB_OFFLINE"):
		return docNeedsNet, err.Error()
	}
	return docRefused, refusalReason(err)
}

var quoted = regexp.MustCompile(`"[^"]*"`)

// refusalReason is the one line profile() would print, with quoted
// values blanked so that one missing feature is one group.
func refusalReason(err error) string {
	msg := flagErrorText(err)
	if strings.HasPrefix(msg, "unknown flag ") || strings.HasPrefix(msg, "unexpected argument ") {
		return msg
	}
	return quoted.ReplaceAllString(msg, `"…"`)
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// Stand-ins for the shell variables and command substitutions the docs
// write where the reader puts their own value: a URL where the name says
// so, else a small whole number, which every flag taking a name, a count
// or a path accepts as well.
const (
	placeholderURL   = "http://localhost:8000"
	placeholderValue = "8"
)

func placeholderFor(name string) string {
	if strings.Contains(strings.ToUpper(name), "URL") {
		return placeholderURL
	}
	return placeholderValue
}

// shellWords splits one command line into arguments as a POSIX shell
// would: blanks separate words, single quotes keep everything, double
// quotes keep all but $ ` " \, a backslash outside quotes escapes the next
// character. $NAME, ${NAME}, $(…) and `…` become placeholders;
// ${NAME:-default} becomes its default. An unquoted ; | & < > ends the
// command (what follows is another command or a redirection).
func shellWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	// expand reads a $ expansion starting at s[i] == '$' and returns its
	// value and the index after it.
	expand := func(i int) (string, int, error) {
		if i+1 >= len(s) {
			return "$", i + 1, nil
		}
		switch c := s[i+1]; {
		case c == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", 0, errors.New("unclosed ${")
			}
			body := s[i+2 : i+2+end]
			for _, op := range []string{":-", ":=", "-", "="} {
				if name, def, ok := strings.Cut(body, op); ok && name != "" {
					return def, i + 3 + end, nil
				}
			}
			return placeholderFor(body), i + 3 + end, nil
		case c == '(':
			depth, j := 1, i+2
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			if depth > 0 {
				return "", 0, errors.New("unclosed $(")
			}
			return placeholderFor(s[i+2 : j-1]), j, nil
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9') {
				j++
			}
			return placeholderFor(s[i+1 : j]), j, nil
		case '0' <= c && c <= '9' || c == '@' || c == '*' || c == '#' || c == '?':
			return placeholderValue, i + 2, nil
		}
		return "$", i + 1, nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
			i++
		case c == ';' || c == '|' || c == '&' || c == '<' || c == '>':
			// A redirection such as 2>&1 starts with a digit already
			// taken into the word; drop it.
			if inWord && (c == '>' || c == '<') && isDigits(cur.String()) {
				cur.Reset()
				inWord = false
			}
			flush()
			return words, nil
		case c == '#' && !inWord:
			flush()
			return words, nil
		case c == '\\':
			if i+1 < len(s) {
				cur.WriteByte(s[i+1])
				inWord = true
			}
			i += 2
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			inWord = true
			i++
			for {
				if i >= len(s) {
					return nil, errors.New("unclosed double quote")
				}
				d := s[i]
				if d == '"' {
					i++
					break
				}
				switch {
				case d == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
					cur.WriteByte(s[i+1])
					i += 2
				case d == '$':
					v, next, err := expand(i)
					if err != nil {
						return nil, err
					}
					cur.WriteString(v)
					i = next
				case d == '`':
					end := strings.IndexByte(s[i+1:], '`')
					if end < 0 {
						return nil, errors.New("unclosed backquote")
					}
					cur.WriteString(placeholderValue)
					i += end + 2
				default:
					cur.WriteByte(d)
					i++
				}
			}
		case c == '$':
			v, next, err := expand(i)
			if err != nil {
				return nil, err
			}
			cur.WriteString(v)
			inWord = true
			i = next
		case c == '`':
			end := strings.IndexByte(s[i+1:], '`')
			if end < 0 {
				return nil, errors.New("unclosed backquote")
			}
			cur.WriteString(placeholderValue)
			inWord = true
			i += end + 2
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	flush()
	return words, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// TestAIPerfDocsShellWords pins the splitter on the shapes AIPerf's docs use.
func TestAIPerfDocsShellWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`aiperf profile --model "granite4:350m" --streaming`, []string{"aiperf", "profile", "--model", "granite4:350m", "--streaming"}},
		{`aiperf profile --extra-inputs '{"a": 1}' -m m`, []string{"aiperf", "profile", "--extra-inputs", `{"a": 1}`, "-m", "m"}},
		{`aiperf profile --url $ENDPOINT_URL --model ${MODEL}`, []string{"aiperf", "profile", "--url", placeholderURL, "--model", placeholderValue}},
		{`aiperf profile --artifact-dir "${OUT:-runs}/a" --x "$N"`, []string{"aiperf", "profile", "--artifact-dir", "runs/a", "--x", placeholderValue}},
		{`aiperf profile --h "a\"b" c\ d ''`, []string{"aiperf", "profile", "--h", `a"b`, "c d", ""}},
		{`aiperf profile -m m 2>&1 | tee log`, []string{"aiperf", "profile", "-m", "m"}},
		{`aiperf profile -m m && echo done`, []string{"aiperf", "profile", "-m", "m"}},
		{`aiperf profile -m m # a comment`, []string{"aiperf", "profile", "-m", "m"}},
		{`aiperf profile --seed $(date +%s)`, []string{"aiperf", "profile", "--seed", placeholderValue}},
	} {
		got, err := shellWords(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("shellWords(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := shellWords(`aiperf profile --model "open`); err == nil {
		t.Error("an unclosed quote was not reported")
	}
}
