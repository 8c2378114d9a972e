package tokenizer

import (
	"slices"
	"strings"
	"sync"
)

// buildTrie numbers the entries in the order of their keys and places the
// keys in the double array, breadth first; false if two entries have one
// key (characters a vocabulary drops), as a node holds one token.
func (b *btBuild) buildTrie() bool {
	bt, es := b.bt, b.entries
	b.entries = sortEntries(es)
	es = b.entries
	bt.toks = make([]btToken, len(es))
	bt.idOf = make([]int32, len(es))
	b.own = make([]int32, len(bt.code))
	for i := range b.own {
		b.own[i] = -1
	}
	for i, e := range es {
		bt.idOf[i] = e.id
		b.own[e.id] = int32(i)
	}
	b.node = make([]int32, len(es))
	// A real vocabulary's trie has 2.1 to 2.2 nodes a token, which the
	// double array packs into about as many slots.
	size := len(es)*9/4 + 512
	d := daBuilder{da: make([]daSlot, 0, size), next: make([]int32, 0, size)}
	d.use(0)
	d.da[0] = daSlot{check: -1, tok: -1}
	type item struct{ slot, lo, hi, depth int32 }
	queue := make([]item, 1, size)
	queue[0] = item{0, 0, int32(len(es)), 0}
	var lbls, bounds []int32
	for qi := 0; qi < len(queue); qi++ {
		it := queue[qi]
		lo := it.lo
		for ; lo < it.hi && b.symbols(es[lo].key) == int(it.depth); lo++ {
			if d.da[it.slot].tok >= 0 {
				return false
			}
			d.da[it.slot].tok = lo
			b.node[lo] = it.slot
		}
		if lo == it.hi {
			continue
		}
		lbls, bounds = lbls[:0], bounds[:0]
		for j := lo; j < it.hi; {
			c := b.label(es[j].key, int(it.depth))
			lbls, bounds = append(lbls, c), append(bounds, j)
			for j < it.hi && b.label(es[j].key, int(it.depth)) == c {
				j++
			}
		}
		bounds = append(bounds, it.hi)
		base := d.place(lbls)
		d.da[it.slot].base = base
		for i, c := range lbls {
			d.da[base+c] = daSlot{check: it.slot, tok: -1}
			queue = append(queue, item{base + c, bounds[i], bounds[i+1], it.depth + 1})
		}
	}
	bt.da = d.da[:d.top+1]
	if cap(bt.da) > len(bt.da)+len(bt.da)/8 {
		bt.da = slices.Clone(bt.da)
	}
	for id, e := range b.own {
		if e >= 0 && b.initial[id] {
			bt.toks[e] = btToken{rankN: 1, shorter: -1, left: -1, right: -1}
			bt.da[b.node[e]].tok = e | daSearched
		}
	}
	return true
}

// daBuilder places a double array's nodes: each node's children at a base
// where every label's slot is free.
type daBuilder struct {
	da    []daSlot
	next  []int32 // union-find towards the next free slot (itself if free)
	first int32   // no slot below it is free
	top   int32   // the highest slot used
}

// free returns the first free slot at or after i.
func (d *daBuilder) free(i int32) int32 {
	d.grow(i)
	r := i
	for d.next[r] != r {
		r = d.next[r]
		d.grow(r)
	}
	for d.next[i] != r { // compress the path
		d.next[i], i = r, d.next[i]
	}
	return r
}

func (d *daBuilder) grow(i int32) {
	for int32(len(d.next)) <= i {
		d.next = append(d.next, int32(len(d.next)))
		d.da = append(d.da, daSlot{check: -1, tok: -1})
	}
}

func (d *daBuilder) use(i int32) {
	d.grow(i + 1)
	d.next[i] = i + 1
	d.top = max(d.top, i)
	if i == d.first {
		d.first = d.free(i + 1)
	}
}

// place finds a base for the sorted labels and takes their slots.
func (d *daBuilder) place(labels []int32) int32 {
	c0 := labels[0]
	for p := d.free(max(c0+1, d.first)); ; p = d.free(p + 1) {
		base := p - c0
		fits := true
		for _, c := range labels[1:] {
			if s := base + c; s < int32(len(d.next)) && d.next[s] != s {
				fits = false
				break
			}
		}
		if fits {
			for _, c := range labels {
				d.use(base + c)
			}
			return base
		}
	}
}

// fillFirst2 makes the dense table of a byte-level trie's first two
// levels.
func (b *btBuild) fillFirst2() {
	bt := b.bt
	bt.first2 = make([]daFirst2, 1<<16)
	for c0 := range int32(256) {
		n1 := bt.child(0, c0)
		for c1 := range int32(256) {
			f := daFirst2{node: bt.child(n1, c1), tok1: bt.da[n1].tok, tok2: -1}
			if f.node >= 0 {
				f.base, f.tok2 = bt.da[f.node].base, bt.da[f.node].tok
			}
			bt.first2[c0<<8|c1] = f
		}
	}
}

// sortEntries sorts es by key, its halves on two goroutines, then merged.
func sortEntries(es []btEntry) []btEntry {
	cmp := func(x, y btEntry) int { return strings.Compare(x.key, y.key) }
	half := len(es) / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(es[half:], cmp)
	}()
	slices.SortFunc(es[:half], cmp)
	wg.Wait()
	out := make([]btEntry, 0, len(es))
	a, b := es[:half], es[half:]
	for len(a) > 0 && len(b) > 0 {
		if cmp(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
