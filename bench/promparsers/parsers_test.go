// Package promparsers compares Prometheus text parsers on the 400 KB
// vLLM-like exposition of scrapetest.BigExposition: expfmt (llmbench's
// parser until issue 12), Prometheus' model/textparse alone (the floor
// under llmbench's parser), llmbench's scrape.Parser in its steady state,
// and VictoriaMetrics' parser. It is a module of its own so that
// VictoriaMetrics stays out of llmbench's dependencies.
//
//	cd bench/promparsers && go test -bench . -count 5
package promparsers

import (
	"bytes"
	"io"
	"testing"

	vmprom "github.com/VictoriaMetrics/VictoriaMetrics/lib/protoparser/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/scrape/scrapetest"
)

func BenchmarkExpfmt(b *testing.B) {
	body := scrapetest.BigExposition()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTextparseAlone(b *testing.B) {
	body := scrapetest.BigExposition()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		tp := textparse.NewPromParser(body, nil, false)
		for {
			entry, err := tp.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if entry == textparse.EntrySeries {
				tp.Series()
			}
		}
	}
}

func BenchmarkLlmbenchParser(b *testing.B) {
	body := scrapetest.BigExposition()
	p := scrape.NewParser()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := p.Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVictoriaMetrics parses the samples only: VictoriaMetrics'
// parser skips # TYPE and # HELP lines, so it cannot tell a counter from
// a gauge or group a histogram's lines by itself.
func BenchmarkVictoriaMetrics(b *testing.B) {
	body := string(scrapetest.BigExposition())
	var rows vmprom.Rows
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rows.UnmarshalWithErrLogger(body, func(s string) { b.Fatal(s) })
	}
	if len(rows.Rows) == 0 {
		b.Fatal("no rows")
	}
}
