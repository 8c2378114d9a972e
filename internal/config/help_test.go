package config

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// helpEntries splits --help output into its flags: the names on each
// entry's heading (and alias) lines, and the entry's whole text.
func helpEntries(t *testing.T, help string) (names map[string]int, texts map[string]string) {
	t.Helper()
	names, texts = map[string]int{}, map[string]string{}
	current := ""
	for _, line := range strings.Split(help, "\n") {
		heading := strings.HasPrefix(line, "  -")
		if heading {
			current = strings.TrimLeft(strings.Fields(line)[0], "-")
		}
		if heading || strings.HasPrefix(line, "      (-") {
			for _, field := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(line)) {
				if strings.HasPrefix(field, "-") {
					names[strings.TrimLeft(field, "-")]++
				}
			}
		}
		if current != "" {
			texts[current] += line + "\n"
		}
	}
	return names, texts
}

// TestHelpListsEveryFlagOnce: --help-all names every registered flag, the
// mock ones too, exactly once as a flag or an alias; no entry states a
// default twice, and the one it states is the one a run gets.
func TestHelpListsEveryFlagOnce(t *testing.T) {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Default()
	f := BindFlags(fs, &p)
	fs.Int("mock-other", 3, "a flag registered apart")
	var b strings.Builder
	f.WriteHelp(&b, "llmbench profile", true)
	names, texts := helpEntries(t, b.String())
	fs.VisitAll(func(fl *flag.Flag) {
		if names[fl.Name] != 1 {
			t.Errorf("--%s is listed %d times in --help-all", fl.Name, names[fl.Name])
		}
	})
	for n := range names {
		// --config (-f) is read before the flag set sees the command line.
		if fs.Lookup(n) == nil && n != "config" && n != "f" {
			t.Errorf("--help-all lists --%s, which is not a flag", n)
		}
	}
	for name, text := range texts {
		if c := strings.Count(strings.ToLower(text), "default"); c > 1 {
			t.Errorf("--%s states a default %d times:\n%s", name, c, text)
		}
	}
	for name, want := range map[string]string{
		"concurrency":             "[default: 1; none with --request-rate]",
		"url":                     "[default: http://localhost:8000]",
		"mock-other":              "[default: 3]",
		"request-timeout-seconds": "[default: 21600]",
	} {
		if !strings.Contains(strings.Join(strings.Fields(texts[name]), " "), want) {
			t.Errorf("--%s: want %q in\n%s", name, want, texts[name])
		}
	}
	if strings.Contains(texts["streaming"], "default") || strings.Contains(texts["request-rate"], "default") {
		t.Error("a flag whose default is off or unset shows one")
	}

	var short strings.Builder
	f.WriteHelp(&short, "llmbench profile", false)
	shortNames, _ := helpEntries(t, short.String())
	for n := range common {
		if shortNames[n] != 1 {
			t.Errorf("--help lacks the common flag --%s", n)
		}
	}
	if shortNames["mock-other"] != 0 || shortNames["histogram-estimator"] != 0 {
		t.Error("--help lists rare flags")
	}
}

// TestUsageStatesNoDefault: a default is stated by WriteHelp alone, never
// in a flag's own usage text, so it cannot contradict the real one.
func TestUsageStatesNoDefault(t *testing.T) {
	p := Default()
	f := BindFlags(flag.NewFlagSet("profile", flag.ContinueOnError), &p)
	for _, h := range f.help {
		if strings.Contains(strings.ToLower(h.usage), "default") {
			t.Errorf("--%s usage states a default: %q", h.names[0], h.usage)
		}
	}
}
