package benchmark

import "testing"

// TestRawStreamMatches: a body sent as it is must ask for the answer the
// way --streaming reads it.
func TestRawStreamMatches(t *testing.T) {
	cases := []struct {
		body      string
		streaming bool
		ok        bool
	}{
		{`{"stream":true}`, true, true},
		{`{"stream":false}`, false, true},
		{`{}`, false, true},
		{`{"stream":true}`, false, false},
		{`{}`, true, false},
		{`{"stream":"yes"}`, true, false},
	}
	for _, c := range cases {
		if err := rawStreamMatches([]byte(c.body), c.streaming); (err == nil) != c.ok {
			t.Errorf("%s with --streaming=%t: %v, want ok %t", c.body, c.streaming, err, c.ok)
		}
	}
}
