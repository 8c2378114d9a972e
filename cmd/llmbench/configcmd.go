package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/llmbench/llmbench/internal/capacity"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/configfile"
	"github.com/llmbench/llmbench/internal/mockserver"
)

// withConfigFile takes --config FILE (-f FILE, AIPerf's names) out of a
// profile command line's flags and puts the file's flags before the rest,
// leaving out those the command line gives itself: defaults < file <
// command line. Without --config the flags are returned as they are.
func withConfigFile(args []string, getenv func(string) (string, bool)) ([]string, *configfile.File, error) {
	path, rest, err := configFlag(args)
	if err != nil || path == "" {
		return args, nil, err
	}
	f, err := configfile.Load(path, getenv)
	if err != nil {
		return nil, nil, err
	}
	return f.Merge(rest, profileCanonical()), f, nil
}

// configFlag finds --config FILE in a profile command line (before any
// "--") and returns the file and the other arguments.
func configFlag(args []string) (path string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return path, append(rest, args[i:]...), nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" && name != "f" {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				return "", nil, errors.New("--config needs a YAML file")
			}
			i++
			val = args[i]
		}
		if path != "" {
			return "", nil, errors.New("--config is given twice: give one YAML file")
		}
		if path = val; path == "" {
			return "", nil, errors.New("--config needs a YAML file")
		}
	}
	return path, rest, nil
}

// profileCanonical names profile flags by their canonical names.
func profileCanonical() func(string) string {
	fs := flag.NewFlagSet("llmbench profile", flag.ContinueOnError)
	p := config.Default()
	flags := config.BindFlags(fs, &p)
	mock := mockserver.DefaultConfig()
	mock.BindFlags(fs, "mock-")
	return flags.Canonical
}

const configUsage = `Usage:
  llmbench config validate --config-file FILE     load an AIPerf YAML config as profile would; say what is wrong
  llmbench config expand --config-file FILE [-F/--full] [-i/--index N] [-f/--format text|yaml|json]
                                                  list the variations of its sweep (--full: each one's command line)

FILE may also be given as the only argument.
`

// configCommand runs 'llmbench config validate' and 'config expand'. A
// config that does not load exits with 2, the code of a bad command line:
// AIPerf exits with 1, which llmbench keeps for runs whose every request
// failed.
func configCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, configUsage)
		return exitUsage
	}
	switch args[0] {
	case "validate":
		return configValidate(args[1:], stdout, stderr)
	case "expand":
		return configExpand(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, configUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "llmbench config: unknown command %q\n\n%s", args[0], configUsage)
	return exitUsage
}

// configFileArg reads the file of 'config validate' or 'config expand':
// --config-file FILE or the one positional argument.
func configFileArg(cmd string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (string, int) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	file := fs.String("config-file", "", "the YAML config file")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, configUsage)
		return "", exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s. Run 'llmbench config --help'.\n", cmd, flagErrorText(err))
		return "", exitUsage
	}
	switch {
	case *file != "" && len(pos) == 0:
		return *file, -1
	case *file == "" && len(pos) == 1:
		return pos[0], -1
	}
	fmt.Fprintf(stderr, "%s: give one YAML file, as --config-file FILE or as the argument. Run 'llmbench config --help'.\n", cmd)
	return "", exitUsage
}

// loadChecked loads a config file exactly as 'llmbench profile --config
// FILE' would (the file, llmbench's flag parsing and Finish, the checks of
// the command line and of a sweep), short of the machine's resources,
// which concern the machine that will run it.
func loadChecked(file string) (*configfile.File, config.Profile, error) {
	cf, err := configfile.Load(file, os.LookupEnv)
	if err != nil {
		return nil, config.Profile{}, err
	}
	p, _, err := parseProfile([]string{"llmbench", "profile", "--config", file}, nil)
	if err == nil {
		err = p.CheckCommandLine()
	}
	if err == nil && (p.Swept() || p.Search.Recipe != "") {
		err = capacity.Check(p)
	}
	if err != nil {
		msg := flagErrorText(err)
		// "--concurrency 0: …": say which key of the file gave it.
		if name, ok := strings.CutPrefix(msg, "--"); ok {
			if i := strings.IndexAny(name, " :=,"); i > 0 {
				name = name[:i]
			}
			if key := cf.Key(name); key != "" {
				msg += " (" + key + " in the file)"
			}
		}
		return nil, p, fmt.Errorf("%s: %s", file, msg)
	}
	return cf, p, nil
}

func configValidate(args []string, stdout, stderr io.Writer) int {
	const cmd = "llmbench config validate"
	file, code := configFileArg(cmd, flag.NewFlagSet(cmd, flag.ContinueOnError), args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if _, _, err := loadChecked(file); err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: valid\n", file)
	return exitOK
}

// variation is one line of 'config expand'.
type variation struct {
	Index   int            `json:"index" yaml:"index"`
	Label   string         `json:"label" yaml:"label"`
	Dir     string         `json:"dir,omitempty" yaml:"dir,omitempty"`
	Values  map[string]any `json:"values,omitempty" yaml:"values,omitempty"`
	Seed    *int64         `json:"seed,omitempty" yaml:"seed,omitempty"`
	Command string         `json:"command,omitempty" yaml:"command,omitempty"`
}

func configExpand(args []string, stdout, stderr io.Writer) int {
	const cmd = "llmbench config expand"
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var full bool
	fs.BoolVar(&full, "full", false, "each variation's command line")
	fs.BoolVar(&full, "F", false, "alias of --full")
	index := fs.Int("index", -1, "only this variation (implies --full)")
	fs.IntVar(index, "i", -1, "alias of --index")
	format := fs.String("format", "text", "text, yaml or json")
	fs.StringVar(format, "f", "text", "alias of --format")
	file, code := configFileArg(cmd, fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if !slices.Contains([]string{"text", "yaml", "json"}, *format) {
		fmt.Fprintf(stderr, "%s: --format %q: use text, yaml or json\n", cmd, *format)
		return exitUsage
	}
	cf, p, err := loadChecked(file)
	var vs []variation
	if err == nil {
		vs, err = variations(cf, p)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	total := len(vs)
	if *index >= 0 {
		if *index >= len(vs) {
			fmt.Fprintf(stderr, "%s: --index %d: %s has %d variations (0 to %d)\n", cmd, *index, file, len(vs), len(vs)-1)
			return exitUsage
		}
		vs, full = vs[*index:*index+1], true
	}
	if !full {
		for i := range vs {
			vs[i].Command = ""
		}
	}
	sweepType, kind := "none", "no sweep"
	if p.Swept() {
		sweepType, kind = p.Sweep.Type, p.Sweep.Type+" sweep"
	}
	switch *format {
	case "json", "yaml":
		out := struct {
			File       string      `json:"file" yaml:"file"`
			Sweep      string      `json:"sweep" yaml:"sweep"`
			Variations []variation `json:"variations" yaml:"variations"`
		}{file, sweepType, vs}
		var b []byte
		if *format == "json" {
			b, err = json.MarshalIndent(out, "", "  ")
			b = append(b, '\n')
		} else {
			b, err = yaml.Marshal(out)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return exitFailed
		}
		stdout.Write(b)
	default:
		fmt.Fprintf(stdout, "%s: %s, %d variation%s\n", file, kind, total, plural(total))
		for _, v := range vs {
			if v.Label != "" {
				fmt.Fprintf(stdout, "  %d  %s  (%s)\n", v.Index, v.Label, v.Dir)
			} else {
				fmt.Fprintf(stdout, "  %d  the one run\n", v.Index)
			}
			if v.Command != "" {
				fmt.Fprintf(stdout, "     %s\n", v.Command)
			}
		}
	}
	return exitOK
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// variations are the runs the file makes: each cell of its sweep, with
// the command line that runs that cell alone (its values in place of the
// lists, its seed, and no sweep options); or the one run.
func variations(cf *configfile.File, p config.Profile) ([]variation, error) {
	canonical := profileCanonical()
	base := cf.Merge(nil, canonical)
	command := func(args []string) string {
		return config.CommandLine(config.RedactArgs(append([]string{"llmbench", "profile"}, args...)))
	}
	cells, ovs, err := capacity.Cells(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", cf.Path, err)
	}
	if len(cells) == 0 {
		return []variation{{Index: 0, Command: command(base)}}, nil
	}
	single := dropFlags(base, configfile.SweepOnlyFlags, canonical)
	out := make([]variation, len(cells))
	for i, c := range cells {
		var set []string
		for _, o := range ovs[i] {
			set = append(set, "--"+o[0], o[1])
		}
		values := map[string]any{}
		for _, a := range c.Values() {
			if a.Value.Int {
				values[a.Path] = int64(a.Value.F)
			} else {
				values[a.Path] = a.Value.F
			}
		}
		out[i] = variation{Index: c.Index, Label: c.Label, Dir: c.Dir, Values: values, Seed: c.Seed,
			Command: command(configfile.MergeArgs(single, set, canonical))}
	}
	return out, nil
}

// dropFlags leaves out of File.Args-form arguments the flags named.
func dropFlags(args, names []string, canonical func(string) string) []string {
	var given []string
	for _, n := range names {
		given = append(given, "--"+n)
	}
	// MergeArgs leaves out what a "command line" gives: give it these.
	out := configfile.MergeArgs(args, given, canonical)
	return out[:len(out)-len(given)]
}
