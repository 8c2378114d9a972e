package config

import (
	"flag"
	"strings"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512MiB": 512 << 20, "2GB": 2e9, "2gib": 2 << 30, "1.5G": 3 << 29, "64m": 64 << 20,
		"1073741824": 1 << 30, " 100 MB ": 100e6, "3k": 3072, "1TiB": 1 << 40,
	} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1GB", "2 parsecs", "1e30GB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", in)
		}
	}
	if s := FormatByteSize(512 << 20); s != "512MiB" {
		t.Errorf("FormatByteSize = %s", s)
	}
}

// TestRecordsMemoryBudget: the flag sets the budget, too small a one is
// refused, and the default is a quarter of the memory within its bounds.
func TestRecordsMemoryBudget(t *testing.T) {
	d := DefaultRecordsMemoryBudget()
	if d < MinRecordsMemoryBudget || d > maxDefaultRecordsMemoryBudget {
		t.Fatalf("default budget %d", d)
	}
	if got := (Output{}).RecordsMemoryBudgetBytes(); got != d {
		t.Fatalf("unset budget %d, want the default %d", got, d)
	}
	parse := func(args ...string) (Profile, error) {
		p := Default()
		fs := flag.NewFlagSet("profile", flag.ContinueOnError)
		BindFlags(fs, &p)
		if err := fs.Parse(append([]string{"-m", "m", "--mock"}, args...)); err != nil {
			return p, err
		}
		return p, p.Finish()
	}
	p, err := parse("--records-memory-budget", "256MiB")
	if err != nil || p.Output.RecordsMemoryBudgetBytes() != 256<<20 {
		t.Fatalf("budget %d, %v", p.Output.RecordsMemoryBudget, err)
	}
	if _, err := parse("--records-memory-budget", "1MiB"); err == nil || !strings.Contains(err.Error(), "at least 32MiB") {
		t.Fatalf("a 1 MiB budget: %v", err)
	}
}
