package config

// Canonical is the canonical name of the flag called name: its own name,
// the name an alias stands for, or x for a boolean's --no-x negation; ""
// when the flag set has no flag of that name. A config file's flags and
// the command line's are compared by it, so that -H on the command line
// replaces a file's --header rather than adding to it.
func (f *Flags) Canonical(name string) string {
	for _, h := range f.help {
		for _, n := range h.names {
			if n == name {
				return h.names[0]
			}
		}
	}
	if f.fs.Lookup(name) != nil {
		return name // a --mock-* flag, or one that is refused
	}
	return ""
}
