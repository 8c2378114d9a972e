package tokenizer

import (
	"runtime"
	"slices"
	"sync"
)

// With a vocabulary's backtracking tables (see backtrack), a long word's
// windows are cut at fixed places, every step symbols, rather than where
// the previous window's tokens suggest: a window may begin at any symbol,
// since joining two only needs a token they share (see longWindow). So a
// batch of windows is merged at once, on up to GOMAXPROCS goroutines, and
// then joined in order. Should two windows share no token (no real
// vocabulary's tokens are long enough for that), the word goes on from
// there a window at a time, as without the tables. A byte-level word's
// symbols are its bytes, so its windows are cut from the word itself and
// no symbols are made.

// batchPerWorker is the number of windows a batch gives each goroutine:
// enough that starting them costs little beside the work.
const batchPerWorker = 8

// longWorker is one goroutine's working memory for a batch's windows.
type longWorker struct {
	bs backtrackScratch
	lm *linkedMerge // for a window with a token the tables do not search
	// memo is the last window it merged (its symbols, or its text for a
	// byte-level word): a word that repeats itself gives windows of the
	// same symbols, and the same tokens.
	memoSyms []int32
	memoText string
	memo     window
	syms     []int32 // a byte-level window's, for the heap
	starts   []int32
}

// appendBatches appends (or tallies) word's tokens, merged in batches of
// windows of win symbols, each overlapping the next by overlap: from the
// word's start if ci < 0, else from lw.cur, the window joined last, whose
// tokens from ci on are not emitted yet. It reports whether it did the
// whole word; if not, lw.cur and the returned ci are that state again.
func (m *bpe) appendBatches(lw *longWord, bt *backtrack, dst []int32, mark, win, overlap, ci int) ([]int32, int, bool) {
	step := win - overlap
	workers := max(1, runtime.GOMAXPROCS(0))
	if len(lw.workers) != workers {
		lw.workers = make([]longWorker, workers)
		lw.batch = make([]window, batchPerWorker*workers)
	}
	for i := range lw.workers {
		lw.workers[i].memoSyms = lw.workers[i].memoSyms[:0]
	}
	cur, lo := &lw.cur, 0
	if ci >= 0 {
		// The first window overlaps what cur has not emitted.
		lo = max(cur.start(ci), cur.hi-overlap)
	}
	for {
		total := len(lw.z.word)
		if !m.byteLevel {
			total = lw.fillTo(lo + (len(lw.batch)-1)*step + win)
		}
		if total == 0 {
			return dst, 0, true // every character dropped
		}
		n := 0
		for s := lo; n < len(lw.batch); s += step {
			hi := min(s+win, total)
			lw.batch[n].lo, lw.batch[n].hi = s, hi
			n++
			if hi == total {
				break
			}
		}
		m.mergeBatch(lw, bt, lw.batch[:n])
		for j := range n {
			w := &lw.batch[j]
			if ci >= 0 {
				kc, kn, ok := sharedToken(cur, ci, w)
				if !ok {
					if m.byteLevel {
						lw.restartAt(cur.start(ci))
					}
					return dst, ci, false
				}
				dst = lw.emit(dst, mark, cur.ids[ci:kc])
				ci = kn
			} else {
				ci = 0
			}
			*cur, *w = *w, *cur
			if m.byteLevel {
				// Bytes are the symbols, made by no filler: the bytes
				// done so far are what emit sizes the tokens' array by.
				lw.z.i = cur.hi
			}
		}
		if m.byteLevel && cur.hi == total || !m.byteLevel && lw.done && cur.hi == lw.total() {
			return lw.emit(dst, mark, cur.ids[ci:]), 0, true
		}
		lo += n * step
		if !m.byteLevel {
			lw.drop(min(cur.start(ci), lo))
		}
	}
}

// restartAt makes a byte-level word's symbols again from byte (and symbol)
// i on, for the sequential loop, after batches that made none.
func (lw *longWord) restartAt(i int) {
	lw.z.i, lw.base, lw.baseByte, lw.done = i, i, i, false
	lw.syms, lw.starts = lw.syms[:0], lw.starts[:0]
}

// mergeBatch merges each of wins alone, on up to len(lw.workers)
// goroutines.
func (m *bpe) mergeBatch(lw *longWord, bt *backtrack, wins []window) {
	workers := min(len(lw.workers), len(wins))
	var wg sync.WaitGroup
	for k := 1; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := k; j < len(wins); j += workers {
				m.mergeAlone(lw, bt, &lw.workers[k], &wins[j])
			}
		}()
	}
	for j := 0; j < len(wins); j += workers {
		m.mergeAlone(lw, bt, &lw.workers[0], &wins[j])
	}
	wg.Wait()
}

// mergeAlone merges the window w's symbols alone, by backtracking, or by
// the heap if they hold a token the tables do not search. It reads lw's
// symbols and word, which do not change while a batch is merged.
func (m *bpe) mergeAlone(lw *longWord, bt *backtrack, wk *longWorker, w *window) {
	if m.byteLevel {
		m.mergeBytesAlone(lw, bt, wk, w)
		return
	}
	syms := lw.syms[w.lo-lw.base : w.hi-lw.base]
	probe := min(len(syms), 16)
	if len(wk.memoSyms) == len(syms) && slices.Equal(syms[:probe], wk.memoSyms[:probe]) && slices.Equal(syms, wk.memoSyms) {
		w.ids = append(w.ids[:0], wk.memo.ids...)
		w.pos = append(w.pos[:0], wk.memo.pos...)
		return
	}
	var ok bool
	if w.ids, w.pos, ok = bt.encode(&wk.bs, syms, w.ids[:0], w.pos[:0]); !ok {
		w.ids, w.pos = m.mergeLinked(wk.heap(), syms, nil, "", w.ids[:0], w.pos[:0])
	}
	wk.memoSyms = append(wk.memoSyms[:0], syms...)
	wk.remember(w)
}

// mergeBytesAlone is mergeAlone for a byte-level word, whose window's
// symbols are its bytes.
func (m *bpe) mergeBytesAlone(lw *longWord, bt *backtrack, wk *longWorker, w *window) {
	text := lw.z.word[w.lo:w.hi]
	if wk.memoText == text {
		w.ids = append(w.ids[:0], wk.memo.ids...)
		w.pos = append(w.pos[:0], wk.memo.pos...)
		return
	}
	var ok bool
	if w.ids, w.pos, ok = bt.encodeBytes(&wk.bs, text, w.ids[:0], w.pos[:0]); !ok {
		wk.syms, wk.starts = wk.syms[:0], wk.starts[:0]
		for i := 0; i < len(text); i++ {
			wk.syms = append(wk.syms, m.byteIDs[text[i]])
			wk.starts = append(wk.starts, int32(i))
		}
		var starts []int32
		if m.rankIsID {
			starts = wk.starts
		}
		w.ids, w.pos = m.mergeLinked(wk.heap(), wk.syms, starts, text, w.ids[:0], w.pos[:0])
	}
	wk.memoText = text
	wk.remember(w)
}

// heap is the worker's working memory for merging by the heap.
func (wk *longWorker) heap() *linkedMerge {
	if wk.lm == nil {
		wk.lm = &linkedMerge{}
		wk.lm.pairs.reset()
	}
	return wk.lm
}

func (wk *longWorker) remember(w *window) {
	wk.memo.ids = append(wk.memo.ids[:0], w.ids...)
	wk.memo.pos = append(wk.memo.pos[:0], w.pos...)
}
