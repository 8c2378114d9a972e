package media

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodeConfig reads an item's header with the standard library decoders.
func decodeConfig(t *testing.T, it Item) (image.Config, string) {
	t.Helper()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(it.Data))
	if err != nil {
		t.Fatalf("decode config: %v", err)
	}
	return cfg, format
}

func TestImagesFixedSize(t *testing.T) {
	tests := []struct {
		name    string
		format  string
		w, h    float64
		formats []string // accepted decoded formats
	}{
		{"png", "png", 64, 48, []string{"png"}},
		{"jpeg", "jpeg", 33, 17, []string{"jpeg"}},
		{"upper-case JPEG", "JPEG", 8, 8, []string{"jpeg"}},
		{"default png", "", 1, 1, []string{"png"}},
		{"random", "random", 20, 30, []string{"png", "jpeg"}},
		{"mean rounds half away", "png", 10.5, 2.4, []string{"png"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewImages(ImageOptions{WidthMean: tc.w, HeightMean: tc.h, Format: tc.format}, 1)
			if err != nil {
				t.Fatal(err)
			}
			wantW, wantH := int(math.Round(tc.w)), int(math.Round(tc.h))
			seen := map[string]bool{}
			for range 40 {
				it, err := g.Next()
				if err != nil {
					t.Fatal(err)
				}
				cfg, format := decodeConfig(t, it)
				seen[format] = true
				if !contains(tc.formats, format) || it.Format != format || it.MIME != "image/"+format {
					t.Fatalf("decoded %s, item says %s / %s; want one of %v", format, it.Format, it.MIME, tc.formats)
				}
				if cfg.Width != wantW || cfg.Height != wantH || it.Width != wantW || it.Height != wantH {
					t.Fatalf("decoded %dx%d, item %dx%d; want %dx%d", cfg.Width, cfg.Height, it.Width, it.Height, wantW, wantH)
				}
				uri := it.DataURI()
				prefix := "data:image/" + format + ";base64,"
				raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(uri, prefix))
				if !strings.HasPrefix(uri, prefix) || err != nil || !bytes.Equal(raw, it.Data) {
					t.Fatalf("data URI %.40q… does not round-trip (err %v)", uri, err)
				}
			}
			if len(seen) != len(tc.formats) {
				t.Errorf("formats seen %v, want all of %v", seen, tc.formats)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestImagesSizeDistribution checks sample moments of 2,000 decoded sizes
// against the requested normal: each within 5 standard errors (se of the
// mean σ/√n, of the standard deviation σ/√(2(n−1))).
func TestImagesSizeDistribution(t *testing.T) {
	const n = 2000
	o := ImageOptions{WidthMean: 24, WidthStddev: 4, HeightMean: 16, HeightStddev: 3, Format: "random"}
	g, err := NewImages(o, 42)
	if err != nil {
		t.Fatal(err)
	}
	ws, hs := make([]float64, n), make([]float64, n)
	for i := range n {
		it, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := decodeConfig(t, it)
		ws[i], hs[i] = float64(cfg.Width), float64(cfg.Height)
	}
	checkMoments(t, "width", ws, o.WidthMean, o.WidthStddev)
	checkMoments(t, "height", hs, o.HeightMean, o.HeightStddev)
}

func checkMoments(t *testing.T, name string, xs []float64, mean, sd float64) {
	t.Helper()
	n := float64(len(xs))
	var sum float64
	for _, x := range xs {
		sum += x
	}
	m := sum / n
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	s := math.Sqrt(ss / (n - 1))
	if se := sd / math.Sqrt(n); math.Abs(m-mean) > 5*se {
		t.Errorf("%s mean %.3f, want %v ± %.3f", name, m, mean, 5*se)
	}
	if se := sd / math.Sqrt(2*(n-1)); math.Abs(s-sd) > 5*se {
		t.Errorf("%s stddev %.3f, want %v ± %.3f", name, s, sd, 5*se)
	}
}

func TestImagesDeterministic(t *testing.T) {
	o := ImageOptions{WidthMean: 16, WidthStddev: 3, HeightMean: 12, HeightStddev: 2, Format: "random"}
	draw := func(seed uint64) [][]byte {
		g, err := NewImages(o, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for range 6 {
			it, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Data)
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("seed 7 item %d differs between runs", i)
		}
	}
	same := 0
	for i := range a {
		if bytes.Equal(a[i], c[i]) {
			same++
		}
	}
	if same == len(a) {
		t.Fatal("seeds 7 and 8 drew identical images")
	}
}

// TestNoisePixels decodes a noise PNG: opaque, nearly every pixel distinct,
// channel mean near 127.5 (uniform bytes: σ = 73.9).
func TestNoisePixels(t *testing.T) {
	g, err := NewImages(ImageOptions{WidthMean: 32, HeightMean: 32}, 3)
	if err != nil {
		t.Fatal(err)
	}
	it, err := g.Next()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(it.Data))
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[color.RGBA]bool{}
	var sum float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.A != 0xff {
				t.Fatalf("pixel (%d,%d) alpha %d, want opaque", x, y, c.A)
			}
			distinct[c] = true
			sum += float64(c.R) + float64(c.G) + float64(c.B)
		}
	}
	if len(distinct) < 1000 {
		t.Errorf("%d distinct colours in 1024 noise pixels, want ≥ 1000", len(distinct))
	}
	nv := float64(3 * 32 * 32)
	if mean, tol := sum/nv, 5*73.9/math.Sqrt(nv); math.Abs(mean-127.5) > tol {
		t.Errorf("channel mean %.2f, want 127.5 ± %.2f", mean, tol)
	}
}

// writeSolid writes a w×h image of one colour, as PNG or JPEG by extension.
func writeSolid(t *testing.T, path string, w, h int, c color.RGBA) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	var err error
	if strings.HasSuffix(path, ".jpg") {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

var (
	red  = color.RGBA{255, 0, 0, 255}
	blue = color.RGBA{0, 0, 255, 255}
)

// imageDir holds a.png (red 8×8) and b.png (blue 4×6), plus files that
// must be skipped: a text file and a corrupt PNG.
func imageDir(t *testing.T) string {
	dir := t.TempDir()
	writeSolid(t, filepath.Join(dir, "a.png"), 8, 8, red)
	writeSolid(t, filepath.Join(dir, "b.png"), 4, 6, blue)
	for name, data := range map[string]string{"c.png": "not a png", "notes.txt": "hello"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// centre decodes a PNG item and returns its size and centre pixel.
func centre(t *testing.T, it Item) (int, int, color.RGBA) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(it.Data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	c := color.RGBAModel.Convert(img.At(b.Dx()/2, b.Dy()/2)).(color.RGBA)
	return b.Dx(), b.Dy(), c
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return max(x, y)-min(x, y) <= 2 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

func TestImagesDirectory(t *testing.T) {
	dir := imageDir(t)
	tests := []struct {
		sampling string
		check    func(t *testing.T, got []color.RGBA)
	}{
		{SamplingSequential, func(t *testing.T, got []color.RGBA) {
			for i, c := range got {
				want := []color.RGBA{red, blue}[i%2]
				if !near(c, want) {
					t.Fatalf("item %d colour %v, want %v (a.png, b.png, a.png, …)", i, c, want)
				}
			}
		}},
		{SamplingShuffle, func(t *testing.T, got []color.RGBA) {
			for i := 0; i+1 < len(got); i += 2 { // each cycle of two holds both
				if near(got[i], got[i+1]) {
					t.Fatalf("cycle at %d repeats colour %v", i, got[i])
				}
			}
		}},
		{SamplingRandom, func(t *testing.T, got []color.RGBA) {
			reds := 0
			for _, c := range got {
				if near(c, red) {
					reds++
				}
			}
			if reds == 0 || reds == len(got) {
				t.Fatalf("%d of %d draws red, want both images drawn", reds, len(got))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.sampling, func(t *testing.T) {
			g, err := NewImages(ImageOptions{WidthMean: 10, HeightMean: 7, Source: dir, Sampling: tc.sampling}, 5)
			if err != nil {
				t.Fatal(err)
			}
			var got []color.RGBA
			for range 20 {
				it, err := g.Next()
				if err != nil {
					t.Fatal(err)
				}
				w, h, c := centre(t, it)
				if w != 10 || h != 7 {
					t.Fatalf("resized to %dx%d, want 10x7", w, h)
				}
				if !near(c, red) && !near(c, blue) {
					t.Fatalf("centre colour %v is neither source", c)
				}
				got = append(got, c)
			}
			tc.check(t, got)
		})
	}
}

func TestImagesDirectoryJPEGAndDrawnSize(t *testing.T) {
	dir := t.TempDir()
	writeSolid(t, filepath.Join(dir, "photo.jpg"), 40, 30, color.RGBA{10, 200, 30, 255})
	o := ImageOptions{WidthMean: 50, WidthStddev: 10, HeightMean: 20, HeightStddev: 5, Source: dir, Format: "jpeg"}
	g, err := NewImages(o, 9)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[[2]int]bool{}
	for range 10 {
		it, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		cfg, format := decodeConfig(t, it)
		if format != "jpeg" || cfg.Width != it.Width || cfg.Height != it.Height {
			t.Fatalf("decoded %s %dx%d, item %dx%d", format, cfg.Width, cfg.Height, it.Width, it.Height)
		}
		sizes[[2]int{cfg.Width, cfg.Height}] = true
	}
	if len(sizes) < 5 {
		t.Errorf("only %d distinct sizes in 10 draws with stddev > 0", len(sizes))
	}
}

func TestImageOptionsValidate(t *testing.T) {
	dir := imageDir(t)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "bad.jpg"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.png")
	ok := ImageOptions{WidthMean: 10, HeightMean: 10}
	with := func(f func(*ImageOptions)) ImageOptions { o := ok; f(&o); return o }
	tests := []struct {
		name string
		o    ImageOptions
		want string // substring of the error; "" = valid
	}{
		{"defaults", ok, ""},
		{"disabled zero value", ImageOptions{}, ""},
		{"directory", with(func(o *ImageOptions) { o.Source = dir; o.Sampling = SamplingShuffle }), ""},
		{"negative width mean", with(func(o *ImageOptions) { o.WidthMean = -1 }), "--image-width-mean must be a finite number >= 0, got -1"},
		{"negative width stddev", with(func(o *ImageOptions) { o.WidthStddev = -2 }), "--image-width-stddev must be a finite number >= 0, got -2"},
		{"negative height mean", with(func(o *ImageOptions) { o.HeightMean = -3 }), "--image-height-mean must be a finite number >= 0, got -3"},
		{"NaN height stddev", with(func(o *ImageOptions) { o.HeightStddev = math.NaN() }), "--image-height-stddev must be a finite number >= 0, got NaN"},
		{"too large", with(func(o *ImageOptions) { o.WidthMean = 20000 }), "above the 16384 px limit per side"},
		{"unknown format", with(func(o *ImageOptions) { o.Format = "bmp" }), `unknown --image-format "bmp": use png, jpeg or random`},
		{"unknown sampling", with(func(o *ImageOptions) { o.Source = dir; o.Sampling = "zigzag" }), `unknown --image-source-sampling "zigzag"`},
		{"assets", with(func(o *ImageOptions) { o.Source = "assets" }), "--image-source assets is not available: llmbench bundles no photos; pass a directory"},
		{"noise with shuffle", with(func(o *ImageOptions) { o.Sampling = SamplingShuffle }), "noise allows only random-with-replacement"},
		{"noise with sequential", with(func(o *ImageOptions) { o.Sampling = SamplingSequential }), "noise allows only random-with-replacement"},
		{"missing directory", with(func(o *ImageOptions) { o.Source = filepath.Join(dir, "nope") }), "no such directory"},
		{"not a directory", with(func(o *ImageOptions) { o.Source = file }), "not a directory"},
		{"no readable image", with(func(o *ImageOptions) { o.Source = empty }), "holds no readable PNG, JPEG or GIF image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if _, nerr := NewImages(tc.o, 1); nerr == nil || nerr.Error() != err.Error() {
				t.Errorf("NewImages error %v, want %v", nerr, err)
			}
		})
	}
}

func TestImageOptionsEnabled(t *testing.T) {
	for _, tc := range []struct {
		w, h float64
		want bool
	}{{0, 0, false}, {10, 0, false}, {0, 10, false}, {0.5, 1, true}} {
		if got := (ImageOptions{WidthMean: tc.w, HeightMean: tc.h}).Enabled(); got != tc.want {
			t.Errorf("Enabled(%v, %v) = %v, want %v", tc.w, tc.h, got, tc.want)
		}
	}
}

func BenchmarkImage512(b *testing.B) {
	for _, format := range []string{ImagePNG, ImageJPEG} {
		b.Run(format, func(b *testing.B) {
			g, err := NewImages(ImageOptions{WidthMean: 512, HeightMean: 512, Format: format}, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
