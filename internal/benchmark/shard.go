package benchmark

import (
	"fmt"
	"os"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/schedule"
)

// shardRun is what a shard of a sharded run keeps for the merge: its
// records file and what run_info says of it. Both are nil on an ordinary
// run.
type shardRun struct {
	log  *shardLog
	info *export.ShardInfo
}

// startShard opens a shard's records file and anchors its clock.
func startShard(p config.Profile, dir, version string) (shardRun, error) {
	sh := p.Shard
	if !sh.Sharded() {
		return shardRun{}, nil
	}
	hash := p.PlanHash()
	log, err := newShardLog(dir, ShardHeader{Version: version, PlanHash: hash, Profile: p.Redacted()})
	if err != nil {
		return shardRun{}, err
	}
	host, _ := os.Hostname()
	return shardRun{log: log, info: &export.ShardInfo{
		Index: sh.Index, Count: sh.Count, IndexFrom: sh.IndexFrom, PlanHash: hash, Host: host,
		StartAt: sh.StartAtText, Clock: clockAnchors(), ScrapedServerMetrics: sh.Scrapes(),
	}}, nil
}

// ran records how the shard's schedule went.
func (s shardRun) ran(out schedule.Outcome, win *window) {
	if s.info == nil {
		return
	}
	s.info.LateNs = int64(out.Late)
	s.info.Cancelled = out.Cancelled
	s.info.Profiled, s.info.ProfilingStartNs, s.info.ProfilingEndNs = win.profiled, win.startNs, win.endNs
	s.info.Records = s.log.count
	s.info.ServerClockOffset = s.log.clock.bound()
}

// LateWarning is how late after --start-at a schedule may start before
// it is warned of: a timer's wake-up and a busy host's scheduling delay
// (a few ms) are not worth a warning; every lateness is recorded.
const LateWarning = 10 * time.Millisecond

// lateWarning is what a schedule that started late says ("" otherwise).
func lateWarning(p config.Profile, out schedule.Outcome) string {
	if p.Shard.StartAt.IsZero() || out.Late <= LateWarning {
		return ""
	}
	return fmt.Sprintf("WARNING  the schedule started %s after --start-at %s: this process came late (run_info.shard.late_ns records it)", out.Late.Round(time.Microsecond), p.Shard.StartAtText)
}
