package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzParseISLOSLPairs: no input panics; what parses is positive, has no
// repeated pair, and reads back the same once written out canonically.
// Seeds: testdata/fuzz/FuzzParseISLOSLPairs and the cases below.
func FuzzParseISLOSLPairs(f *testing.F) {
	for _, s := range []string{"128/128", "128/128,512/256", "", "1/2/3", "0/1", " 7 / 9 ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := ParseISLOSLPairs(s)
		if err != nil {
			return
		}
		parts := make([]string, len(pairs))
		for i, p := range pairs {
			if p[0] <= 0 || p[1] <= 0 || slices.Contains(pairs[:i], p) {
				t.Fatalf("%q gave %v", s, pairs)
			}
			parts[i] = fmt.Sprintf("%d/%d", p[0], p[1])
		}
		again, err := ParseISLOSLPairs(strings.Join(parts, ","))
		if err != nil || !slices.Equal(again, pairs) {
			t.Fatalf("%q: %v, read back as %v %v", s, pairs, again, err)
		}
	})
}
