package servermetrics

import "unsafe"

// Footprint is the memory a store's samples take, for measuring the
// compression (bench/scrapememory): what the run's heap holds because of
// the store, apart from the label and bound strings it shares with the
// scrape parser and the maps' own bookkeeping.
type Footprint struct {
	Series, Scrapes int
	// Used is the bytes written: the encoded samples, the endpoints'
	// timestamps, and every series' fixed-size headers. Allocated adds the
	// spare capacity of the buffers that grow.
	Used, Allocated int64
}

// Footprint sums the store's buffers' lengths and capacities.
func (st *Store) Footprint() Footprint {
	st.mu.Lock()
	defer st.mu.Unlock()
	var f Footprint
	add := func(len, cap int, size uintptr) {
		f.Used += int64(len) * int64(size)
		f.Allocated += int64(cap) * int64(size)
	}
	for _, ts := range st.scrapes {
		f.Scrapes += len(ts)
		add(len(ts), cap(ts), 8)
	}
	for k, ss := range st.series {
		f.Series++
		add(1, 1, unsafe.Sizeof(k)+unsafe.Sizeof(ss)+unsafe.Sizeof(*ss))
		add(len(ss.runs), cap(ss.runs), unsafe.Sizeof(scrapeRun{}))
		add(len(ss.cols), cap(ss.cols), unsafe.Sizeof(column{}))
		add(len(ss.w.buf), cap(ss.w.buf), 1)
	}
	for k, b := range st.bounds {
		add(len(k), len(k), 1)
		add(len(b.bounds), cap(b.bounds), 8)
		add(len(b.text), cap(b.text), unsafe.Sizeof(""))
		for _, t := range b.text {
			add(len(t), len(t), 1)
		}
	}
	return f
}
