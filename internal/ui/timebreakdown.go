package ui

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/metrics"
)

// breakdownLabels name the parts of a TTFT breakdown for a person.
var breakdownLabels = map[string]string{
	"schedule_lateness": "client schedule lateness",
	"connect_and_send":  "connect and send",
	"server_queue":      "server queue",
	"server_prefill":    "server prefill",
	"delivery":          "delivery (network, client)",
}

// TimeBreakdown is the "Where the time went" block: each part's mean and
// share of the time from due to first token, for the typical request and
// the slowest 1 %; "" when no server gave per-request timings. width is
// the terminal's (0: no limit).
func TimeBreakdown(bd *metrics.Breakdown, width int) string {
	if bd == nil {
		return ""
	}
	var b strings.Builder
	if bd.Records > 0 && len(bd.Bands) > 0 {
		header := []string{"Part"}
		for _, band := range bd.Bands {
			header = append(header, fmt.Sprintf("%s ms", bandName(band)), "share")
		}
		rows := [][]string{header}
		for i := range bd.Bands[0].Parts {
			row := []string{breakdownLabels[bd.Bands[0].Parts[i].Part]}
			for _, band := range bd.Bands {
				p := band.Parts[i]
				row = append(row, num(p.Ms), fmt.Sprintf("%.0f%%", 100*p.Share))
			}
			rows = append(rows, row)
		}
		total := []string{"time to first token, from due"}
		for _, band := range bd.Bands {
			total = append(total, num(band.TotalMs), "100%")
		}
		rows = append(rows, total)
		title := fmt.Sprintf("Where the time went: time to first token by the server's own timings (%d requests)", bd.Records)
		rows, _ = fitRows(rows, width, nil)
		b.WriteString(grid(fitTitle(title, "", width), rows))
		for _, band := range bd.Bands {
			fmt.Fprintf(&b, " %s: mostly %s\n", bandName(band), breakdownLabels[band.Dominant])
		}
	}
	if bd.Rejected > 0 {
		fmt.Fprintf(&b, "WARNING  %d requests' servers sent timing values that cannot be times (negative, not numbers, absurdly large); those values are left out.\n", bd.Rejected)
	}
	if bd.Conflicts > 0 {
		fmt.Fprintf(&b, "WARNING  %d requests had a server time longer than the client's own (an impossible order: a clock or attribution error); their server timings are left out of every statistic.\n", bd.Conflicts)
	}
	return b.String()
}

// bandName says which requests a band averages.
func bandName(band metrics.BreakdownBand) string {
	if band.ToPct >= 100 {
		return fmt.Sprintf("slowest %g%%", 100-band.FromPct)
	}
	return fmt.Sprintf("typical (p%g–p%g)", band.FromPct, band.ToPct)
}
