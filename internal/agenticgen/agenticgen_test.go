package agenticgen

import (
	"reflect"
	"testing"
)

// The layered ids, worked by hand: blocks of 100 tokens, L1 250 tokens
// (3 blocks: 0 1 2), L1.5 150 tokens (2 blocks at 3 + group×200), the
// session region from 3 + 1000×200 = 200003, 4000 ids per session.
func TestHashIDsLayout(t *testing.T) {
	c := Default()
	c.BlockSize, c.Cache.Layer1Tokens, c.Cache.Layer15Tokens = 100, 250, 150
	c.Cache.Layer15Groups.NumGroups = 3
	g, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	first := g.hashIDs(2, 1, 701, nil) // 8 blocks: 3 L1, 2 L1.5, 3 of session 2
	if want := []int64{0, 1, 2, 203, 204, 208003, 208004, 208005}; !reflect.DeepEqual(first, want) {
		t.Fatalf("turn 0 ids %v, want %v", first, want)
	}
	next := g.hashIDs(2, 1, 1000, g.sessionIDs(first)) // 10 blocks: the session's grow by 2
	if want := []int64{0, 1, 2, 203, 204, 208003, 208004, 208005, 208006, 208007}; !reflect.DeepEqual(next, want) {
		t.Fatalf("turn 1 ids %v, want %v", next, want)
	}
	if short := g.hashIDs(0, 0, 250, nil); !reflect.DeepEqual(short, []int64{0, 1, 2}) {
		t.Fatalf("a context within L1: %v", short)
	}
}

// Rows: the first turn keeps its layered ids and timestamp; later turns
// take fresh ids past the largest seen, as many as their new tokens need.
func TestRows(t *testing.T) {
	s := []Session{
		{ID: "a", Turns: []Turn{{InputLength: 250, NewTokens: 250, OutputLength: 5, HashIDs: []int64{0, 1, 9}},
			{InputLength: 355, NewTokens: 100, OutputLength: 6, DelayMs: 1.26, HashIDs: []int64{0, 1, 9, 10}}}},
		{ID: "b", Turns: []Turn{{InputLength: 150, NewTokens: 150, OutputLength: 7, HashIDs: []int64{0, 1}},
			{InputLength: 358, NewTokens: 201, OutputLength: 8, DelayMs: 2, HashIDs: []int64{0, 1, 2, 3}}}},
	}
	rows, delays := Rows(s, 100)
	var got [][]int64
	for _, r := range rows {
		got = append(got, r.HashIDs)
	}
	if want := [][]int64{{0, 1, 9}, {10}, {0, 1}, {11, 12, 13}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if *rows[1].InputLength != 100 || *delays[1] != 1.3 || delays[0] != nil || *rows[0].Timestamp != 0 || rows[1].Timestamp != nil {
		t.Errorf("row 1: isl %d delay %v", *rows[1].InputLength, *delays[1])
	}
}

func TestSessionsDeterministic(t *testing.T) {
	draw := func(seed uint64) []Session {
		g, err := New(Default(), seed)
		if err != nil {
			t.Fatal(err)
		}
		return []Session{g.Session(), g.Session(), g.Session()}
	}
	if !reflect.DeepEqual(draw(3), draw(3)) || reflect.DeepEqual(draw(3), draw(4)) {
		t.Error("sessions do not follow the seed")
	}
	for _, s := range draw(5) {
		for k, tr := range s.Turns {
			if tr.InputLength >= Default().MaxPromptTokens || tr.OutputLength < 30 || tr.OutputLength > 1500 {
				t.Errorf("session %s turn %d: isl %d osl %d", s.ID, k, tr.InputLength, tr.OutputLength)
			}
		}
	}
}
