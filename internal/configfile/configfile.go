// Package configfile reads an AIPerf YAML configuration (schema 2.0: the
// envelope with variables, sweep and multi_run, and the benchmark body)
// into llmbench profile flags. It only translates: the flags then go
// through llmbench's own flag parsing and validation, so a file can ask
// for nothing the command line cannot, and what llmbench cannot do is
// refused in one line naming the key.
package configfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is a config file read into llmbench profile flags.
type File struct {
	// Path is the file as given.
	Path string
	// Args are the flags, "--name value" (booleans "--name" or
	// "--name=false"; a value starting with "-" as "--name=value"), in a
	// fixed order: the table's, not the file's.
	Args []string
	// Sweep is the file's sweep block as flags; nil without one.
	Sweep *Sweep
	// keys are the keys of the file each flag came from.
	keys map[string]string
}

// Key is the key of the file that gave flag (its canonical name), "" when
// none did: for messages about a flag the file set.
func (f *File) Key(flag string) string { return f.keys[flag] }

// Sweep is a file's sweep: the flags it gives comma lists to, and how
// they combine.
type Sweep struct {
	Type   string // grid or zip
	Params []SweptParam
}

// SweptParam is one sweep.parameters entry.
type SweptParam struct {
	Key    string   // as written in the file
	Flag   string   // the llmbench flag it sweeps
	Values []string // as the flag takes them
}

// maxFileSize bounds a config file: inline records make some large, but
// not this large.
const maxFileSize = 64 << 20

// Load reads the config file at path. getenv looks up the ${VAR}
// substitutions (os.LookupEnv in the command). Inline dataset records are
// written to a JSONL file in the temporary directory, named by its content,
// and --input-file points at it.
func Load(path string, getenv func(string) (string, bool)) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config file %s: not a regular file", path)
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("config file %s: %d bytes, more than the %d MiB a config file may have", path, st.Size(), maxFileSize>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	f, err := parse(data, getenv, writeInline)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// writeInline writes inline records to a file named by their content, so
// that loading the same file again (each cell of a sweep does) finds it
// in place.
func writeInline(jsonl []byte) (string, error) {
	sum := sha256.Sum256(jsonl)
	path := filepath.Join(os.TempDir(), "llmbench-inline-"+hex.EncodeToString(sum[:8])+".jsonl")
	if old, err := os.ReadFile(path); err == nil && string(old) == string(jsonl) {
		return path, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".llmbench-inline-*")
	if err != nil {
		return "", fmt.Errorf("write inline records: %w", err)
	}
	_, werr := tmp.Write(jsonl)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write inline records: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write inline records: %w", err)
	}
	return path, nil
}

// parse translates a config file's bytes; inline writes inline records
// and returns the path to give --input-file.
func parse(data []byte, getenv func(string) (string, bool), inline func([]byte) (string, error)) (*File, error) {
	root, err := decode(data)
	if err != nil {
		return nil, err
	}
	if err := substituteEnv(root, "", getenv); err != nil {
		return nil, err
	}
	if err := renderTemplates(root); err != nil {
		return nil, err
	}
	b := &builder{inline: inline}
	if err := b.envelope(root); err != nil {
		return nil, err
	}
	keys := map[string]string{}
	for _, e := range b.out {
		if keys[e.flag] == "" {
			keys[e.flag] = e.path
		}
	}
	return &File{Args: b.args(), Sweep: b.sweep, keys: keys}, nil
}

// SweepOnlyFlags configure a sweep and nothing else; llmbench refuses them
// on a command line without a comma list.
var SweepOnlyFlags = []string{"sweep-type", "parameter-sweep-mode", "parameter-sweep-cooldown-seconds", "parameter-sweep-same-seed", "no-sweep-table"}

// Merge is the command line the profile runs with: the file's flags, then
// cliArgs, leaving out each file flag the command line gives itself
// (MergeArgs). When the command line replaces every flag the file sweeps,
// the file's sweep-only flags go too, which would otherwise configure a
// sweep that no longer exists.
func (f *File) Merge(cliArgs []string, canonical func(name string) string) []string {
	fileArgs := f.Args
	if f.Sweep != nil {
		given := givenFlags(cliArgs, canonical)
		swept := false
		for _, p := range f.Sweep.Params {
			swept = swept || len(p.Values) > 1 && !given[p.Flag]
		}
		if !swept {
			fileArgs = nil
			for _, g := range groupFlags(f.Args) {
				if !slices.Contains(SweepOnlyFlags, canonical(g.name)) {
					fileArgs = append(fileArgs, g.tokens...)
				}
			}
		}
	}
	return MergeArgs(fileArgs, cliArgs, canonical)
}

// MergeArgs puts fileArgs before cliArgs, leaving out every flag of
// fileArgs that cliArgs gives too (under any of its names, compared by
// canonical), so that the command line wins: defaults < file < command
// line. A repeatable flag (--header, --extra-inputs, --url) given on the
// command line replaces all of the file's rather than adding to them.
// fileArgs must be in File.Args' form; cliArgs may be any command line.
func MergeArgs(fileArgs, cliArgs []string, canonical func(name string) string) []string {
	given := givenFlags(cliArgs, canonical)
	for flag, replaced := range replaces {
		if given[flag] {
			for _, r := range replaced {
				given[r] = true
			}
		}
	}
	out := make([]string, 0, len(fileArgs)+len(cliArgs))
	for _, g := range groupFlags(fileArgs) {
		if !given[canonical(g.name)] {
			out = append(out, g.tokens...)
		}
	}
	return append(out, cliArgs...)
}

// replaces are command-line flags that stand in for others of the file:
// --mock benchmarks the built-in server in place of the file's --url.
var replaces = map[string][]string{"mock": {"url"}}

// givenFlags are the canonical names of the flags a command line gives.
// A value that looks like a flag (-1) names none, so it is not counted.
func givenFlags(args []string, canonical func(string) string) map[string]bool {
	given := map[string]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if c := canonical(name); c != "" {
			given[c] = true
		}
	}
	return given
}

// flagGroup is one flag of File.Args with its value, if separate.
type flagGroup struct {
	name   string
	tokens []string
}

// groupFlags splits File.Args-form arguments into flags: each starts with
// "--"; the tokens up to the next one are its values.
func groupFlags(args []string) []flagGroup {
	var out []flagGroup
	for _, a := range args {
		if strings.HasPrefix(a, "--") || len(out) == 0 {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			out = append(out, flagGroup{name: name})
		}
		g := &out[len(out)-1]
		g.tokens = append(g.tokens, a)
	}
	return out
}

// pathError is a problem at a key of the file.
func pathError(path, format string, args ...any) error {
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}

// unsupported refuses a key llmbench has no flag for.
func unsupported(path, why string) error {
	if why == "" {
		return pathError(path, "not supported by llmbench")
	}
	return pathError(path, "not supported by llmbench (%s)", why)
}

// unknownKey refuses a key the schema does not have, with the nearest
// known one when one is near.
func unknownKey(path, key string, known []string) error {
	at := key
	if path != "" {
		at = path + "." + key
	}
	if m := nearest(snake(key), known); m != "" {
		return pathError(at, "unknown key (did you mean %q?)", m)
	}
	slices.Sort(known)
	return pathError(at, "unknown key (known here: %s)", strings.Join(known, ", "))
}

// nearest is the candidate closest to s in edit distance, when it is close
// enough to be a likely typo; "" otherwise.
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if best == "" || d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// snake turns a camelCase key into snake_case; AIPerf takes either for
// every key.
func snake(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
