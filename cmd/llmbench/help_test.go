package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateHelp = flag.Bool("update-help", false, "rewrite testdata/profile_help*.txt")

// TestProfileHelpGolden: `profile --help` (common flags) and `--help-all`
// (every flag, the --mock-* ones too) as a person reads them. Regenerate
// with go test -run TestProfileHelpGolden -update-help.
func TestProfileHelpGolden(t *testing.T) {
	for _, tc := range []struct{ arg, file string }{
		{"--help", "profile_help.txt"},
		{"-h", "profile_help.txt"},
		{"--help-all", "profile_help_all.txt"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"llmbench", "profile", tc.arg}, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
			t.Fatalf("%s: exit %d, stderr %q", tc.arg, code, stderr.String())
		}
		got := stdout.String()
		path := filepath.Join("testdata", tc.file)
		if *updateHelp {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("%s differs from %s (-update-help rewrites it):\n%s", tc.arg, path, got)
		}
		for i, line := range strings.Split(got, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("%s line %d is %d columns: %q", tc.arg, i+1, n, line)
			}
		}
	}
	// --help-all wins wherever it stands, and a flag before it is not checked.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile", "--concurrency", "0", "--help-all"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "--mock-ttft-ms") {
		t.Fatalf("--help-all after a flag: exit %d, %q", code, stderr.String())
	}
}
