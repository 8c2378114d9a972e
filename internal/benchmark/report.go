package benchmark

import (
	"fmt"
	"path/filepath"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/report"
)

// writeReport draws the run's report.html from the files just written,
// last, so that it shows what the exports hold. A report that cannot be
// drawn is a warning, not a failed run: the exports are complete, and
// `llmbench plot` can draw it again.
func writeReport(dir string, names export.Files, opts Options, res *Result) {
	r, err := artifacts.LoadRun(dir, artifacts.Names{Records: names.Records, Export: names.ProfileJSON}, report.RecordTags...)
	if err == nil {
		_, err = report.WriteAs(dir, names.Report, report.SingleRun(r, "llmbench "+opts.Version))
	}
	if err != nil {
		fmt.Fprintf(opts.Log, "WARNING  no report: %v; the exports are complete, and 'llmbench plot %s' draws it\n", err, dir)
		return
	}
	res.Files = append(res.Files, filepath.Base(names.Report))
}

// newRecordWriter streams profile_export.jsonl, and with --export-level
// raw profile_export_raw.jsonl beside it (payloads redacted as
// inputs.json's are), or discards the records with --export-level summary.
func newRecordWriter(p config.Profile, dir string, names export.Files, clock record.Clock, red *config.Redactor) (*export.RecordWriter, error) {
	if !p.Output.WritesRecords() {
		return export.DiscardRecords(), nil
	}
	rw, err := export.NewRecordWriter(dir, names.Records, clock)
	if err != nil || p.Output.ExportLevel != config.ExportRaw {
		return rw, err
	}
	raw, err := export.NewRawWriter(dir, names.Raw, clock, red.RedactBytes)
	if err != nil {
		_ = rw.Close()
		return nil, err
	}
	return rw.WithRaw(raw), nil
}
