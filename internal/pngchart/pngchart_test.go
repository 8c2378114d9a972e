package pngchart

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/llmbench/llmbench/internal/chart"
)

// -pngdir keeps the test charts' PNGs in a directory to look at them.
var pngDir = flag.String("pngdir", "", "write the test charts' PNGs to this directory")

func ramp(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

var (
	red   = color.NRGBA{0xff, 0, 0, 0xff}
	green = color.NRGBA{0, 0x80, 0, 0xff}
	blue  = color.NRGBA{0, 0, 0xff, 0xff}
)

// onWhite is c at alpha a over white, as the rasteriser blends it.
func onWhite(c color.NRGBA, a uint8) color.NRGBA {
	mix := func(v uint8) uint8 {
		return uint8(math.Round(float64(v)*float64(a)/255 + 255*(1-float64(a)/255)))
	}
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// want is a colour a chart must (or must not) show.
type want struct {
	c color.NRGBA
	// shaded also counts c blended on white at half or more coverage:
	// anti-aliasing shades the pixels of a thin line.
	shaded bool
}

func lines(cs ...color.NRGBA) []want {
	out := make([]want, len(cs))
	for i, c := range cs {
		out[i] = want{c, true}
	}
	return out
}

// count counts the pixels of img showing w.c.
func count(img *image.RGBA, w want) int {
	const tol = 6
	n := 0
	for i := 0; i+3 < len(img.Pix); i += 4 {
		p := [3]float64{float64(img.Pix[i]), float64(img.Pix[i+1]), float64(img.Pix[i+2])}
		c := [3]float64{float64(w.c.R), float64(w.c.G), float64(w.c.B)}
		a := 1.0
		if w.shaded {
			// Coverage, from the channel c darkens most.
			k := 0
			for j := range c {
				if c[j] < c[k] {
					k = j
				}
			}
			if c[k] == 255 {
				continue
			}
			a = (255 - p[k]) / (255 - c[k])
			if a < 0.5 {
				continue
			}
		}
		ok := true
		for j := range c {
			if math.Abs(p[j]-(c[j]*a+255*(1-a))) > tol {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// minPix is how many pixels a drawn series colours at least: a line
// across a 640-pixel-wide plot colours over a thousand. (The cases
// render at 800×400 but one: at 1600×800, -race makes each take 3 s.)
const minPix = 500

func TestRender(t *testing.T) {
	x := ramp(100, func(i int) float64 { return float64(i) })
	tests := []struct {
		name          string
		c             chart.Chart
		width, height int
		wantW, wantH  int
		// colours that must cover at least minPix pixels, and that must
		// cover none.
		has, hasNot []want
	}{
		{
			name:  "default size, red line",
			c:     chart.Chart{ID: "line", Title: "Line", X: chart.Axis{Label: "x"}, Y: chart.Axis{Label: "y"}, Series: []chart.Series{{Label: "red", Style: chart.Line, X: x, Y: ramp(100, func(i int) float64 { return math.Sin(float64(i) / 10) }), Color: "#ff0000"}}},
			wantW: 1600, wantH: 800,
			has: lines(red),
		},
		{
			name:  "custom size",
			c:     chart.Chart{ID: "small", Series: []chart.Series{{Style: chart.Line, X: x, Y: x, Color: "#f00"}}},
			width: 640, height: 480, wantW: 640, wantH: 480,
			has: lines(red),
		},
		{
			name:  "zero height takes the default",
			c:     chart.Chart{ID: "half", Series: []chart.Series{{Style: chart.Line, X: x, Y: x, Color: "#ff0000"}}},
			width: 800, wantW: 800, wantH: 800,
			has: lines(red),
		},
		{
			name: "band under a line",
			c: chart.Chart{ID: "band", Title: "Band", Series: []chart.Series{{
				Label: "mean ± CI", Style: chart.Line, X: x, Y: x, Color: "#0000ff",
				Low:  ramp(100, func(i int) float64 { return float64(i) - 20 }),
				High: ramp(100, func(i int) float64 { return float64(i) + 20 }),
			}}},
			width: 800, height: 400, wantW: 800, wantH: 400,
			has: []want{{blue, true}, {onWhite(blue, bandAlpha), false}},
		},
		{
			name: "styles, gaps, labels and the palette",
			c: chart.Chart{ID: "styles", Title: "Styles", X: chart.Axis{Label: "x"}, Y: chart.Axis{Label: "y"}, Series: []chart.Series{
				{Label: "points", Style: chart.Points, X: x, Y: ramp(100, func(i int) float64 { return float64(i%7) * 10 })},
				{Label: "gappy line", Style: chart.Line, X: x, Y: ramp(100, func(i int) float64 {
					if i%25 == 0 {
						return math.NaN()
					}
					return 50 + 20*math.Sin(float64(i)/8)
				})},
				{Label: "p99", Style: chart.Dashed, X: []float64{0, 99}, Y: []float64{90, 90}},
				{Label: "step", Style: chart.Step, X: []float64{0, 20, 40, 60, 80, 99}, Y: []float64{5, 25, 15, 35, math.Inf(1), 30}},
				{Label: "sweep", Style: chart.LinePoints, X: []float64{10, 30, 50, 70, 90}, Y: []float64{20, 40, 55, 62, 66},
					PointLabels: []string{"c=1", "c=2", "c=4", "", "c=16"}},
				{Style: chart.Line, X: []float64{0, 99}, Y: []float64{1, 1}, Color: "#008000"},
			}},
			wantW: 1600, wantH: 800,
			has: lines(paletteColor(0), paletteColor(1), paletteColor(2), paletteColor(3), paletteColor(4), green),
		},
		{
			name:  "empty chart",
			c:     chart.Chart{ID: "empty", Title: "Nothing yet", Series: []chart.Series{{Label: "none", Style: chart.Line, X: []float64{1, 2}, Y: []float64{math.NaN(), math.NaN()}, Color: "#ff0000"}}},
			width: 800, height: 400, wantW: 800, wantH: 400,
			hasNot: lines(red),
		},
		{
			name: "log axes with zeros and infinities",
			c: chart.Chart{ID: "log", Title: "Log", X: chart.Axis{Label: "x", Log: true}, Y: chart.Axis{Label: "y", Log: true}, Series: []chart.Series{
				{Label: "red", Style: chart.LinePoints, X: []float64{0, 1, 10, 100, 1000, math.Inf(1)}, Y: []float64{5, 0, 50, 500, 5000, 1}, Color: "#ff0000"},
				{Label: "band", Style: chart.Line, X: []float64{1, 10, 100}, Y: []float64{2, 20, 200}, Low: []float64{0, 10, 100}, High: []float64{4, 40, 400}},
			}},
			width: 800, height: 400, wantW: 800, wantH: 400,
			has: lines(red),
		},
		{
			name: "log axis within a decade, one value",
			c: chart.Chart{ID: "log1", Y: chart.Axis{Log: true}, Series: []chart.Series{
				{Style: chart.Line, X: []float64{1, 2, 3}, Y: []float64{300, 300, 300}, Color: "#ff0000"},
			}},
			width: 800, height: 400, wantW: 800, wantH: 400,
			has: lines(red),
		},
		{
			name: "right series in a second panel",
			c: chart.Chart{ID: "y2", Title: "Two axes", X: chart.Axis{Label: "time (s)"}, Y: chart.Axis{Label: "tokens/s"}, Y2: &chart.Axis{Label: "requests in flight"}, Series: []chart.Series{
				{Label: "throughput", Style: chart.Step, X: x, Y: ramp(100, func(i int) float64 { return 1000 + 300*math.Sin(float64(i)/9) }), Color: "#ff0000"},
				{Label: "in flight", Style: chart.Step, X: x, Y: ramp(100, func(i int) float64 { return float64(i / 10) }), Right: true, Color: "#0000ff"},
			}, Note: "A note under the chart."},
			width: 800, height: 400, wantW: 800, wantH: 400,
			has: lines(red, blue),
		},
		{
			name: "extreme ranges",
			c: chart.Chart{ID: "extreme", Series: []chart.Series{
				{Style: chart.Points, X: []float64{-math.MaxFloat64, math.MaxFloat64}, Y: []float64{math.MaxFloat64, -math.MaxFloat64}},
				{Style: chart.Line, X: []float64{1, 1 + 1e-15}, Y: []float64{5e-324, 1e-323}},
			}},
			width: 800, height: 400, wantW: 800, wantH: 400,
		},
		{
			name: "only right series",
			c: chart.Chart{ID: "y2only", Y2: &chart.Axis{Label: "right"}, Series: []chart.Series{
				{Label: "gone", Style: chart.Line, X: []float64{1}, Y: []float64{math.NaN()}, Color: "#ff0000"},
				{Label: "right", Style: chart.Line, X: x, Y: x, Right: true, Color: "#0000ff"},
			}},
			width: 800, height: 400, wantW: 800, wantH: 400,
			has:    lines(blue),
			hasNot: lines(red),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, tc.c, tc.width, tc.height); err != nil {
				t.Fatalf("Render: %v", err)
			}
			if *pngDir != "" {
				if err := os.WriteFile(filepath.Join(*pngDir, tc.c.ID+".png"), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			decoded, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			img := image.NewRGBA(decoded.Bounds())
			draw.Draw(img, img.Bounds(), decoded, image.Point{}, draw.Src)
			if b := img.Bounds(); b.Dx() != tc.wantW || b.Dy() != tc.wantH {
				t.Errorf("size %d×%d, want %d×%d", b.Dx(), b.Dy(), tc.wantW, tc.wantH)
			}
			for _, w := range tc.has {
				if n := count(img, w); n < minPix {
					t.Errorf("%d pixels of %+v, want at least %d", n, w, minPix)
				}
			}
			for _, w := range tc.hasNot {
				if n := count(img, w); n != 0 {
					t.Errorf("%d pixels of %+v, want none", n, w)
				}
			}
		})
	}
}

// TestRenderConcurrent renders from several goroutines: gonum/plot's
// font cache is shared, and -race must stay quiet.
func TestRenderConcurrent(t *testing.T) {
	c := chart.Chart{ID: "c", Title: "Concurrent", Series: []chart.Series{{Label: "a", Style: chart.LinePoints, X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}, PointLabels: []string{"x", "y", "z"}}}}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- Render(io.Discard, c, 400, 300) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name          string
		c             chart.Chart
		width, height int
	}{
		{"negative width", chart.Chart{ID: "a"}, -1, 10},
		{"huge", chart.Chart{ID: "a"}, 100000, 100000},
		{"X and Y lengths differ", chart.Chart{ID: "a", Series: []chart.Series{{X: []float64{1, 2}, Y: []float64{1}}}}, 0, 0},
		{"band lengths differ", chart.Chart{ID: "a", Series: []chart.Series{{X: []float64{1, 2}, Y: []float64{1, 2}, Low: []float64{1}, High: []float64{1, 2}}}}, 0, 0},
		{"point labels lengths differ", chart.Chart{ID: "a", Series: []chart.Series{{X: []float64{1, 2}, Y: []float64{1, 2}, PointLabels: []string{"a"}}}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Render(&bytes.Buffer{}, tc.c, tc.width, tc.height); err == nil {
				t.Error("Render succeeded, want an error")
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		id      string
		wantErr bool
	}{
		{id: "time_to_first_token_over_time"},
		{id: "", wantErr: true},
		{id: "../escape", wantErr: true},
		{id: "..", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			dir := t.TempDir()
			c := chart.Chart{ID: tc.id, Title: "TTFT", Series: []chart.Series{{Style: chart.Points, X: []float64{1, 2}, Y: []float64{3, 4}}}}
			path, err := WriteFile(dir, c, 320, 200)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("WriteFile wrote %s, want an error", path)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			if want := filepath.Join(dir, tc.id+".png"); path != want {
				t.Errorf("path %s, want %s", path, want)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cfg, err := png.DecodeConfig(f)
			if err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if cfg.Width != 320 || cfg.Height != 200 {
				t.Errorf("size %d×%d, want 320×200", cfg.Width, cfg.Height)
			}
		})
	}
}

func TestParseColor(t *testing.T) {
	tests := []struct {
		in   string
		want color.NRGBA
		ok   bool
	}{
		{"#1f77b4", color.NRGBA{0x1f, 0x77, 0xb4, 0xff}, true},
		{"#F00", color.NRGBA{0xff, 0, 0, 0xff}, true},
		{"#ff000080", color.NRGBA{0xff, 0, 0, 0x80}, true},
		{"", color.NRGBA{}, false},
		{"red", color.NRGBA{}, false},
		{"#12345", color.NRGBA{}, false},
		{"#gggggg", color.NRGBA{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseColor(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseColor(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSeriesColors(t *testing.T) {
	ss := []chart.Series{{}, {Color: "#000000"}, {}, {Color: "bad"}}
	want := []color.NRGBA{paletteColor(0), {0, 0, 0, 0xff}, paletteColor(1), paletteColor(2)}
	got := seriesColors(ss)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("series %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string // labels within [lo, hi]
	}{
		{1, 1000, []string{"1", "10", "100", "1000"}},
		{150, 900, []string{"200", "500"}},
		{310, 390, []string{"320", "340", "360", "380"}}, // no 1-2-5 tick: linear ticks
		{1e-3, 1e12, []string{"0.001", "0.1", "10", "1000", "100000", "1e+07", "1e+09", "1e+11"}},
		{0, 10, nil},
	}
	for _, tc := range tests {
		t.Run(strconv.FormatFloat(tc.lo, 'g', -1, 64)+"-"+strconv.FormatFloat(tc.hi, 'g', -1, 64), func(t *testing.T) {
			var got []string
			for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
				if tk.Label != "" && tk.Value >= tc.lo && tk.Value <= tc.hi {
					got = append(got, tk.Label)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	st := textStyle(legendSize, textGray)
	long := "a very long label that goes on and on and on and on and on forever"
	tests := []struct {
		name string
		in   string
		w    vg.Length
		cut  bool
	}{
		{"fits", "p50", 100, false},
		{"cut", long, 100, true},
		{"nothing fits", long, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fit(tc.in, st, tc.w)
			if cut := got != tc.in; cut != tc.cut {
				t.Fatalf("fit(%q) = %q, cut %v, want cut %v", tc.in, got, cut, tc.cut)
			}
			if tc.cut && (!strings.HasSuffix(got, "…") || !strings.HasPrefix(tc.in, strings.TrimSuffix(got, "…"))) {
				t.Errorf("fit(%q) = %q, want a prefix and an ellipsis", tc.in, got)
			}
			if tc.cut && len(got) > len("…") && st.Width(got) > tc.w {
				t.Errorf("fit(%q) = %q, %v wide, want at most %v", tc.in, got, st.Width(got), tc.w)
			}
		})
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		n      int
		want   []string
	}{
		{"unit", 0, 100, 10, []string{"0", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"}},
		{"no fixed decimals", 700, 1300, 6, []string{"700", "800", "900", "1000", "1100", "1200", "1300"}},
		{"decimals the step needs", -0.5, 0.5, 4, []string{"-0.4", "-0.2", "0", "0.2", "0.4"}},
		{"millions", 0, 3e6, 3, []string{"0M", "1M", "2M", "3M"}},
		{"tiny", 0, 4e-5, 4, []string{"0", "1.0e-05", "2.0e-05", "3.0e-05", "4.0e-05"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tk := range (linearTicks{n: tc.n}).Ticks(tc.lo, tc.hi) {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
		})
	}
}

func BenchmarkRender10kPoints(b *testing.B) {
	const n = 10000
	c := chart.Chart{ID: "scatter", Title: "10k points", X: chart.Axis{Label: "x"}, Y: chart.Axis{Label: "y"}, Series: []chart.Series{{
		Label: "requests", Style: chart.Points,
		X: ramp(n, func(i int) float64 { return float64(i) }),
		Y: ramp(n, func(i int) float64 { return float64((i * 7919) % 1000) }),
	}}}
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Render(&buf, c, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}
