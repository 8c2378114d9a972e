// Package sweep turns swept parameters (AIPerf's magic lists, --concurrency
// 1,4,16) into cells with their labels, directories and seeds, and turns
// the cells' runs into AIPerf's sweep aggregate: the per-cell confidence
// summary, profile_export_aiperf_sweep.json and .csv, and the per-cell
// console table. It runs nothing; an orchestrator calls it.
package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Value is one swept value, an int or a float, printed as AIPerf (Python)
// prints it: ints "10"; floats in Python repr: 5 -> "5.0", 0.5 -> "0.5",
// 2.5e-05 -> "2.5e-05".
type Value struct {
	F   float64
	Int bool
}

// Int is the integer value n.
func Int(n int64) Value { return Value{F: float64(n), Int: true} }

// Float is the float value f.
func Float(f float64) Value { return Value{F: f} }

// String prints v as Python's str() does.
func (v Value) String() string {
	if v.Int && !math.IsNaN(v.F) && !math.IsInf(v.F, 0) {
		return strconv.FormatFloat(v.F, 'f', 0, 64)
	}
	return pyFloat(v.F)
}

// MarshalJSON writes v as Python's json does: int -> 10, float -> 5.0;
// NaN and ±Inf (which JSON lacks) -> null.
func (v Value) MarshalJSON() ([]byte, error) {
	if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
		return []byte("null"), nil
	}
	return []byte(v.String()), nil
}

// pyFloat is Python's repr of a float: the shortest digits that round-trip,
// positional with a ".0" for a whole number when the decimal exponent is
// in [-4, 16), scientific ("1e+16", "2.5e-05") otherwise.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(sci[strings.IndexByte(sci, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return sci // Go's exponent already has Python's sign and two digits
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Param is one swept parameter: its dotted path in the option file
// ("phases.profiling.concurrency") and its values in the order given.
type Param struct {
	Path   string
	Values []Value
}

// Assignment is one parameter's value in a cell.
type Assignment struct {
	Path  string
	Value Value
}

// Cell is one sweep variation.
type Cell struct {
	// Index is the variation index, 0-based, in expansion order.
	Index int
	// Assign holds the cell's values: in sorted path order for grid and
	// zip sweeps, in the order given for scenarios.
	Assign []Assignment
	// Label is "path=value, path=value" in sorted path order
	// ("phases.profiling.concurrency=10"); a scenario's is its name.
	Label string
	// Dir is the cell's directory name: <leaf>_<value> per assignment,
	// joined by "__" and sanitised ("concurrency_10",
	// "mean_128__concurrency_4"); the sanitised label, then
	// "variation_<index>", when that is empty.
	Dir string
	// Seed is the cell's random seed: base + Index, or base with the same
	// seed for every cell; nil without a base seed.
	Seed *int64
}

// Values returns the cell's assignments sorted by path, the order
// AIPerf keys a cell by (variation_values, per_combination_metrics).
func (c Cell) Values() []Assignment {
	out := slices.Clone(c.Assign)
	slices.SortStableFunc(out, func(a, b Assignment) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Expand turns the swept parameters into cells. Paths are sorted
// alphabetically; a grid is their Cartesian product in itertools.product
// order (the last path varies fastest); zip pairs the i-th values of
// every list, which must then all have the same length.
func Expand(params []Param, zip bool) ([]Cell, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("sweep: no parameter has a list of values")
	}
	ps := slices.Clone(params)
	slices.SortStableFunc(ps, func(a, b Param) int { return strings.Compare(a.Path, b.Path) })
	for i, p := range ps {
		if p.Path == "" {
			return nil, fmt.Errorf("sweep: a parameter has no path")
		}
		if i > 0 && ps[i-1].Path == p.Path {
			return nil, fmt.Errorf("sweep: %s is swept twice; give it one list", p.Path)
		}
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("sweep: %s has no values", p.Path)
		}
	}
	var rows [][]Assignment
	if zip {
		n := len(ps[0].Values)
		for _, p := range ps[1:] {
			if len(p.Values) != n {
				lens := make([]string, len(ps))
				for i, p := range ps {
					lens[i] = fmt.Sprintf("%s: %d", p.Path, len(p.Values))
				}
				return nil, fmt.Errorf("zip sweep: every list must have the same length; got %s (use --sweep-type grid for every combination)", strings.Join(lens, ", "))
			}
		}
		for i := range n {
			row := make([]Assignment, len(ps))
			for j, p := range ps {
				row[j] = Assignment{p.Path, p.Values[i]}
			}
			rows = append(rows, row)
		}
	} else {
		idx := make([]int, len(ps))
		for {
			row := make([]Assignment, len(ps))
			for j, p := range ps {
				row[j] = Assignment{p.Path, p.Values[idx[j]]}
			}
			rows = append(rows, row)
			// Odometer: the last path turns fastest.
			j := len(ps) - 1
			for ; j >= 0; j-- {
				if idx[j]++; idx[j] < len(ps[j].Values) {
					break
				}
				idx[j] = 0
			}
			if j < 0 {
				break
			}
		}
	}
	cells := make([]Cell, len(rows))
	for i, row := range rows {
		label := Label(row)
		cells[i] = Cell{Index: i, Assign: row, Label: label, Dir: DirName(row, label, i)}
	}
	return cells, nil
}

// Scenario is one named cell of a scenario sweep.
type Scenario struct {
	Name   string
	Values []Assignment // in the order given; the directory name keeps it
}

// Scenarios turns named scenarios into cells, indexed in order. The
// label is the name (the formatted values when it has none); the
// directory name is built from the values in their given order, so
// pareto-sweep's shape_128_128_c1 with {isl, osl, concurrency} gets
// isl_128__osl_128__concurrency_1.
func Scenarios(scenarios []Scenario) []Cell {
	cells := make([]Cell, len(scenarios))
	for i, s := range scenarios {
		label := s.Name
		if label == "" {
			label = Label(Cell{Assign: s.Values}.Values())
		}
		cells[i] = Cell{Index: i, Assign: slices.Clone(s.Values), Label: label, Dir: DirName(s.Values, label, i)}
	}
	return cells
}

// Label formats assignments as AIPerf labels a cell: "path=value"
// joined by ", ", in the order given (Expand gives sorted paths).
func Label(assign []Assignment) string {
	parts := make([]string, len(assign))
	for i, a := range assign {
		parts[i] = a.Path + "=" + a.Value.String()
	}
	return strings.Join(parts, ", ")
}

// DirName is a cell's directory name: "<last path segment>_<value>" per
// assignment joined by "__", with "/", "\", ".." and `<>:"|?*` removed;
// when that leaves nothing, the sanitised label, then
// "variation_<index>". AIPerf's docs show request_rate_5.0; its code, and
// so llmbench, uses the leaf segment (rate_5.0).
func DirName(assign []Assignment, label string, index int) string {
	parts := make([]string, len(assign))
	for i, a := range assign {
		parts[i] = leaf(a.Path) + "_" + a.Value.String()
	}
	if d := sanitize(strings.Join(parts, "__")); d != "" {
		return d
	}
	if d := sanitize(label); d != "" {
		return d
	}
	return fmt.Sprintf("variation_%d", index)
}

// sanitize removes what must not be in one path segment, in AIPerf's two
// passes: "/", "\" and ".." in one left-to-right scan (so "..." keeps a
// "."), then any of <>:"|?*.
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '/' || s[i] == '\\':
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '.':
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(`<>:"|?*`, r) {
			return -1
		}
		return r
	}, b.String())
}

// leaf is the last segment of a dotted path.
func leaf(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// AssignSeeds gives each cell its seed: base + Index, or base for every
// cell when same is set (--parameter-sweep-same-seed); nil without base.
func AssignSeeds(cells []Cell, base *int64, same bool) {
	for i := range cells {
		if base == nil {
			cells[i].Seed = nil
			continue
		}
		s := *base
		if !same {
			s += int64(cells[i].Index)
		}
		cells[i].Seed = &s
	}
}

// ShortNames maps each dotted path to the name the sweep aggregate uses
// for it: its leaf segment, or the full path when another path shares
// that leaf (--isl and --osl both end in "mean").
func ShortNames(paths []string) map[string]string {
	count := map[string]int{}
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			count[leaf(p)]++
		}
	}
	out := make(map[string]string, len(seen))
	for p := range seen {
		if count[leaf(p)] == 1 {
			out[p] = leaf(p)
		} else {
			out[p] = p
		}
	}
	return out
}
