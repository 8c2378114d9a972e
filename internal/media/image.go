package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // directory sources may hold GIFs
	"image/jpeg"
	"image/png"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/image/draw"
)

// Image encodings and sources, spelled as on AIPerf's command line.
const (
	ImagePNG    = "png"
	ImageJPEG   = "jpeg"
	ImageRandom = "random"

	SourceNoise  = "noise"
	SourceAssets = "assets"

	SamplingRandom     = "random-with-replacement"
	SamplingShuffle    = "shuffle-cycle"
	SamplingSequential = "sequential-cycle"
)

// JPEGQuality is the quality AIPerf passes to Pillow (quality=85). Go's
// encoder always subsamples chroma 4:2:0 where AIPerf asks for 4:4:4, so
// JPEG payloads are somewhat smaller than AIPerf's at the same size.
const JPEGQuality = 85

// MaxImageSide bounds a drawn width or height (a 16384² RGBA frame is 1 GiB).
const MaxImageSide = 16384

// ImageOptions configures synthetic images (AIPerf's --image-* options).
// Empty Format, Source and Sampling mean png, noise and
// random-with-replacement, AIPerf's defaults.
type ImageOptions struct {
	WidthMean, WidthStddev   float64
	HeightMean, HeightStddev float64
	Format                   string // png, jpeg or random (per image)
	Source                   string // noise, or a directory of PNG/JPEG/GIF images
	Sampling                 string // random-with-replacement, shuffle-cycle, sequential-cycle
}

// Enabled reports whether images are requested: both means positive.
func (o ImageOptions) Enabled() bool { return o.WidthMean > 0 && o.HeightMean > 0 }

func (o ImageOptions) format() string { return orDefault(strings.ToLower(o.Format), ImagePNG) }
func (o ImageOptions) source() string { return orDefault(o.Source, SourceNoise) }
func (o ImageOptions) sampling() string {
	return orDefault(strings.ToLower(o.Sampling), SamplingRandom)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Validate checks the options; a directory source is read to make sure it
// holds at least one readable image.
func (o ImageOptions) Validate() error {
	_, err := o.check()
	return err
}

// check validates and returns the directory's image paths, if any.
func (o ImageOptions) check() ([]string, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"--image-width-mean", o.WidthMean},
		{"--image-width-stddev", o.WidthStddev},
		{"--image-height-mean", o.HeightMean},
		{"--image-height-stddev", o.HeightStddev},
	} {
		if !finite(f.v) || f.v < 0 {
			return nil, fmt.Errorf("%s must be a finite number >= 0, got %v", f.name, f.v)
		}
	}
	if o.WidthMean > MaxImageSide || o.HeightMean > MaxImageSide {
		return nil, fmt.Errorf("image size %vx%v is above the %d px limit per side; use smaller --image-width-mean/--image-height-mean",
			o.WidthMean, o.HeightMean, MaxImageSide)
	}
	switch o.format() {
	case ImagePNG, ImageJPEG, ImageRandom:
	default:
		return nil, fmt.Errorf("unknown --image-format %q: use png, jpeg or random", o.Format)
	}
	switch o.sampling() {
	case SamplingRandom, SamplingShuffle, SamplingSequential:
	default:
		return nil, fmt.Errorf("unknown --image-source-sampling %q: use %s, %s or %s",
			o.Sampling, SamplingRandom, SamplingShuffle, SamplingSequential)
	}
	switch src := o.source(); src {
	case SourceNoise:
		if s := o.sampling(); s != SamplingRandom {
			return nil, fmt.Errorf("--image-source-sampling %s needs a finite source: noise allows only %s", s, SamplingRandom)
		}
		return nil, nil
	case SourceAssets:
		return nil, errors.New("--image-source assets is not available: llmbench bundles no photos; pass a directory of PNG/JPEG/GIF images instead, or use noise")
	default:
		return scanImageDir(src)
	}
}

// scanImageDir lists, sorted by name, the PNG/JPEG/GIF files in dir whose
// header decodes; unreadable ones are skipped as AIPerf skips them.
func scanImageDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--image-source %q: no such directory; pass noise or an existing directory of images", dir)
		}
		return nil, fmt.Errorf("--image-source %q: %w", dir, err)
	}
	var paths []string
	for _, e := range entries { // ReadDir sorts by name
		if !e.Type().IsRegular() {
			continue
		}
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg", ".gif":
		default:
			continue
		}
		p := filepath.Join(dir, e.Name())
		if readableImage(p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--image-source %q holds no readable PNG, JPEG or GIF image; add some or use noise", dir)
	}
	return paths, nil
}

func readableImage(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, _, err = image.DecodeConfig(f)
	return err == nil
}

// Images draws synthetic images. It is not safe for concurrent use.
type Images struct {
	format   string
	sampling string
	o        ImageOptions

	dims, formats, source, noise *rand.Rand

	paths []string // directory source; nil for noise
	queue []int    // shuffle-cycle: indexes left in this cycle
	next  int      // sequential-cycle: next index

	png png.Encoder
}

// NewImages validates o and returns a generator seeded with seed.
func NewImages(o ImageOptions, seed uint64) (*Images, error) {
	paths, err := o.check()
	if err != nil {
		return nil, err
	}
	g := &Images{
		format:   o.format(),
		sampling: o.sampling(),
		o:        o,
		dims:     newRand(seed, streamImageDims),
		formats:  newRand(seed, streamImageFormat),
		source:   newRand(seed, streamImageSource),
		noise:    newRand(seed, streamImageNoise),
		paths:    paths,
	}
	// Noise does not compress: zlib level 6 (AIPerf's compress_level=6) costs
	// 30× the time of stored blocks for a payload within 0.1 % of the size.
	g.png.CompressionLevel = png.DefaultCompression
	if paths == nil {
		g.png.CompressionLevel = png.NoCompression
	}
	g.png.BufferPool = &singleBuffer{}
	return g, nil
}

// Next draws one image: size from the normal distributions, pixels from the
// source, encoded as the format says.
func (g *Images) Next() (Item, error) {
	format := g.format
	if format == ImageRandom {
		format = [...]string{ImagePNG, ImageJPEG}[g.formats.IntN(2)]
	}
	w := drawSide(g.dims, g.o.WidthMean, g.o.WidthStddev)
	h := drawSide(g.dims, g.o.HeightMean, g.o.HeightStddev)

	var img *image.RGBA
	if g.paths == nil {
		img = noiseImage(g.noise, w, h)
	} else {
		var err error
		if img, err = g.fromSource(w, h); err != nil {
			return Item{}, err
		}
	}

	var buf bytes.Buffer
	buf.Grow(w*h*3 + 1024)
	var err error
	switch format {
	case ImageJPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: JPEGQuality})
	default:
		err = g.png.Encode(&buf, img)
	}
	if err != nil {
		return Item{}, fmt.Errorf("encode %dx%d %s image: %w", w, h, format, err)
	}
	return Item{MIME: "image/" + format, Format: format, Data: buf.Bytes(), Width: w, Height: h}, nil
}

// drawSide draws a side length from normal(mean, stddev), rounded half away
// from zero and kept within [1, MaxImageSide].
func drawSide(r *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v += stddev * r.NormFloat64()
	}
	return int(math.Max(1, math.Min(MaxImageSide, math.Round(v))))
}

// noiseImage returns an opaque image of uniform random RGB bytes.
func noiseImage(r *rand.Rand, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	pix := img.Pix
	var u uint64
	bits := 0
	for i := 0; i+3 < len(pix); i += 4 {
		if bits < 24 {
			u, bits = r.Uint64(), 64
		}
		pix[i], pix[i+1], pix[i+2], pix[i+3] = byte(u), byte(u>>8), byte(u>>16), 0xff
		u >>= 24
		bits -= 24
	}
	return img
}

func (g *Images) pick() int {
	n := len(g.paths)
	switch g.sampling {
	case SamplingShuffle:
		if len(g.queue) == 0 {
			g.queue = g.source.Perm(n)
		}
		i := g.queue[0]
		g.queue = g.queue[1:]
		return i
	case SamplingSequential:
		i := g.next
		g.next = (g.next + 1) % n
		return i
	default:
		return g.source.IntN(n)
	}
}

// fromSource decodes the next source image and resizes it to w×h with a
// bicubic (Catmull-Rom) filter, as Pillow's default resize.
func (g *Images) fromSource(w, h int) (*image.RGBA, error) {
	path := g.paths[g.pick()]
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open source image: %w", err)
	}
	defer f.Close()
	src, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode source image %s: %w", path, err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst, nil
}

// singleBuffer is a png.EncoderBufferPool holding one buffer, so repeated
// encodes by one generator reuse the encoder's scratch space.
type singleBuffer struct{ b *png.EncoderBuffer }

func (p *singleBuffer) Get() *png.EncoderBuffer {
	b := p.b
	p.b = nil
	return b
}

func (p *singleBuffer) Put(b *png.EncoderBuffer) { p.b = b }
