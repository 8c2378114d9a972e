package merge

import (
	"testing"

	"github.com/llmbench/llmbench/internal/export"
)

// TestOffsetBound: shards of one host are as far apart as their anchors
// say (the widest pair: 999,600, 1,000,300 and 999,400 ns apart, 900);
// shards bounded against the server combine their intervals; a pair
// with neither is unbounded.
func TestOffsetBound(t *testing.T) {
	host := func(name string, wall, mono int64) export.ShardInfo {
		return export.ShardInfo{Host: name, Clock: export.ClockAnchors{WallNs: wall, MonotonicNs: mono}}
	}
	server := func(lo, hi int64) export.ShardInfo {
		return export.ShardInfo{Host: "x", ServerClockOffset: &export.OffsetBound{LowNs: lo, HighNs: hi}}
	}
	for _, c := range []struct {
		name   string
		shards []export.ShardInfo
		want   int64
	}{
		{"one shard", []export.ShardInfo{host("a", 10, 5)}, 0},
		{"one host", []export.ShardInfo{host("a", 1_000_000, 400), host("a", 2_000_700, 1_000_400), host("a", 3_000_000, 2_000_600)}, 900},
		{"two hosts", []export.ShardInfo{host("a", 1, 1), host("b", 1, 1)}, -1},
		{"server bounds", []export.ShardInfo{server(100, 300), server(-50, 20)}, 350},
		{"no monotonic", []export.ShardInfo{host("a", 1, 0), host("a", 1, 0)}, -1},
	} {
		if got := offsetBound(c.shards); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
