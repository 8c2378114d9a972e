package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// wavFile is what parseWAV reads back, chunk by chunk, from a RIFF/WAVE file.
type wavFile struct {
	format, channels, bits, blockAlign int
	rate, byteRate                     int
	data                               []byte
}

func parseWAV(t *testing.T, b []byte) wavFile {
	t.Helper()
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("not RIFF/WAVE: % x", b[:min(12, len(b))])
	}
	if size := int(binary.LittleEndian.Uint32(b[4:])); size != len(b)-8 {
		t.Fatalf("RIFF size %d, file has %d bytes after the header", size, len(b)-8)
	}
	var w wavFile
	sawFmt, sawData := false, false
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8:]
		if n > len(body) {
			t.Fatalf("chunk %q length %d overruns the file", id, n)
		}
		body = body[:n]
		switch id {
		case "fmt ":
			sawFmt = true
			le := binary.LittleEndian
			w.format = int(le.Uint16(body[0:]))
			w.channels = int(le.Uint16(body[2:]))
			w.rate = int(le.Uint32(body[4:]))
			w.byteRate = int(le.Uint32(body[8:]))
			w.blockAlign = int(le.Uint16(body[12:]))
			w.bits = int(le.Uint16(body[14:]))
		case "data":
			if !sawFmt {
				t.Fatal("data chunk before fmt chunk")
			}
			sawData = true
			w.data = body
		}
		p += 8 + n + n&1
	}
	if !sawFmt || !sawData {
		t.Fatalf("fmt chunk %v, data chunk %v", sawFmt, sawData)
	}
	return w
}

// samples decodes little-endian PCM into signed values (8-bit: minus 128).
func (w wavFile) samples() []int64 {
	step := w.bits / 8
	out := make([]int64, 0, len(w.data)/step)
	for i := 0; i+step <= len(w.data); i += step {
		d := w.data[i:]
		switch w.bits {
		case 8:
			out = append(out, int64(d[0])-128)
		case 16:
			out = append(out, int64(int16(binary.LittleEndian.Uint16(d))))
		case 24:
			out = append(out, int64(int32(uint32(d[0])|uint32(d[1])<<8|uint32(d[2])<<16)<<8>>8))
		case 32:
			out = append(out, int64(int32(binary.LittleEndian.Uint32(d))))
		}
	}
	return out
}

func meanStd(xs []int64) (float64, float64) {
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	m := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (float64(x) - m) * (float64(x) - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// TestAudioWAV reads every clip's header back and checks the frame count:
// frames = length × rate rounded half away from zero (hand-computed here).
func TestAudioWAV(t *testing.T) {
	tests := []struct {
		length   float64
		rateKHz  float64
		depth    int
		channels int
		frames   int
	}{
		{0.5, 16, 16, 1, 8000},
		{0.5, 44.1, 16, 2, 22050},
		{0.01, 8, 8, 1, 80},
		{0.0125, 8, 8, 1, 100},
		{1.0 / 3, 16, 24, 1, 5333},    // 5333.33 → 5333
		{0.1, 22.05, 32, 2, 2205},     // 22.05 kHz → 22050 Hz
		{0.02, 11.025, 24, 2, 221},    // 220.5 → 221 (half away from zero)
		{0.1234, 48, 8, 1, 5923},      // 5923.2 → 5923; odd data length is padded
		{0.0100001, 44.1, 16, 1, 441}, // 441.004 → 441
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%gs_%gkHz_%dbit_%dch", tc.length, tc.rateKHz, tc.depth, tc.channels)
		t.Run(name, func(t *testing.T) {
			o := AudioOptions{LengthMean: tc.length, Depths: []int{tc.depth}, SampleRatesKHz: []float64{tc.rateKHz}, Channels: tc.channels}
			g, err := NewAudio(o, 1)
			if err != nil {
				t.Fatal(err)
			}
			it, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			w := parseWAV(t, it.Data)
			rate := int(math.Round(tc.rateKHz * 1000))
			bytesPer := tc.depth / 8
			if w.format != 1 || w.channels != tc.channels || w.rate != rate || w.bits != tc.depth ||
				w.blockAlign != tc.channels*bytesPer || w.byteRate != rate*tc.channels*bytesPer {
				t.Fatalf("fmt %+v, want PCM %d ch %d Hz %d bit", w, tc.channels, rate, tc.depth)
			}
			frames := len(w.data) / w.blockAlign
			if frames != tc.frames || len(w.data) != tc.frames*w.blockAlign {
				t.Fatalf("%d data bytes = %d frames, want %d", len(w.data), frames, tc.frames)
			}
			if want := float64(tc.frames) / float64(rate); it.Seconds != want {
				t.Errorf("Seconds %v, want %v", it.Seconds, want)
			}
			if it.Format != "wav" || it.MIME != "audio/wav" {
				t.Errorf("format %q mime %q", it.Format, it.MIME)
			}
		})
	}
}

// TestAudioSamples checks 1 s clips per depth: the noise's standard deviation
// is 0.3 of the depth's full scale within 5 %, no sample leaves the range,
// and 8-bit data is unsigned, centred on 128.
func TestAudioSamples(t *testing.T) {
	tests := []struct {
		depth    int
		full     float64 // full scale the noise is multiplied by
		min, max int64   // allowed sample range
	}{
		{8, 128, -128, 127}, // 16-bit scale shifted down 8 bits
		{16, 32767, -32767, 32767},
		{24, 1<<23 - 1, -(1<<23 - 1), 1<<23 - 1},
		{32, math.MaxInt32, -math.MaxInt32, math.MaxInt32},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dbit", tc.depth), func(t *testing.T) {
			g, err := NewAudio(AudioOptions{LengthMean: 1, Depths: []int{tc.depth}, Channels: 2}, 11)
			if err != nil {
				t.Fatal(err)
			}
			it, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			w := parseWAV(t, it.Data)
			s := w.samples()
			if len(s) != 2*16000 {
				t.Fatalf("%d samples, want 32000", len(s))
			}
			for i, v := range s {
				if v < tc.min || v > tc.max {
					t.Fatalf("sample %d = %d outside [%d, %d]", i, v, tc.min, tc.max)
				}
			}
			mean, sd := meanStd(s)
			if want := 0.3 * tc.full; math.Abs(sd-want) > 0.05*want {
				t.Errorf("stddev %.1f, want %.1f ± 5%%", sd, want)
			}
			if tc.depth == 8 {
				// (s16 >> 8) floors, so the byte mean sits half a step below 128.
				tol := 5 * sd / math.Sqrt(float64(len(s)))
				if byteMean := mean + 128; math.Abs(byteMean-127.5) > tol {
					t.Errorf("mean byte %.2f, want 127.5 ± %.2f", byteMean, tol)
				}
			} else if tol := 5 * sd / math.Sqrt(float64(len(s))); math.Abs(mean) > tol {
				t.Errorf("mean %.2f, want 0 ± %.2f", mean, tol)
			}
		})
	}
}

// TestAudioLengthDistribution checks 2,000 clip lengths, read from the data
// chunk, against normal(0.5, 0.1) within 5 standard errors.
func TestAudioLengthDistribution(t *testing.T) {
	const n = 2000
	g, err := NewAudio(AudioOptions{LengthMean: 0.5, LengthStddev: 0.1, SampleRatesKHz: []float64{1}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	lengths := make([]float64, n)
	for i := range lengths {
		it, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		w := parseWAV(t, it.Data)
		lengths[i] = float64(len(w.data)/w.blockAlign) / float64(w.rate)
		if lengths[i] != it.Seconds {
			t.Fatalf("clip %d: data holds %v s, Seconds says %v", i, lengths[i], it.Seconds)
		}
	}
	checkMoments(t, "length", lengths, 0.5, 0.1)
}

func TestAudioMinimumLength(t *testing.T) {
	g, err := NewAudio(AudioOptions{LengthMean: 0.02, LengthStddev: 0.5, SampleRatesKHz: []float64{16}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	atMin := 0
	for range 200 {
		it, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		frames := len(parseWAV(t, it.Data).data) / 2
		if frames < 160 {
			t.Fatalf("%d frames at 16 kHz, want at least 160 (0.01 s)", frames)
		}
		if frames == 160 {
			atMin++
		}
	}
	if atMin < 50 { // P(normal(0.02, 0.5) < 0.01) ≈ 0.49
		t.Errorf("%d of 200 clips at the 0.01 s floor, want about 100", atMin)
	}
}

func TestAudioDeterministic(t *testing.T) {
	o := AudioOptions{LengthMean: 0.05, LengthStddev: 0.02, Depths: []int{8, 16, 24, 32}, SampleRatesKHz: []float64{8, 16, 44.1}, Channels: 2}
	draw := func(seed uint64) [][]byte {
		g, err := NewAudio(o, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for range 8 {
			it, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, it.Data)
		}
		return out
	}
	a, b, c := draw(3), draw(3), draw(4)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("seed 3 clip %d differs between runs", i)
		}
		if bytes.Equal(a[i], c[i]) {
			t.Fatalf("seeds 3 and 4 drew the same clip %d", i)
		}
	}
}

func TestAudioPicksFromLists(t *testing.T) {
	g, err := NewAudio(AudioOptions{LengthMean: 0.01, Depths: []int{8, 24}, SampleRatesKHz: []float64{8, 44.1}}, 9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]int{}
	for range 200 {
		it, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		w := parseWAV(t, it.Data)
		seen[[2]int{w.rate, w.bits}]++
	}
	for _, k := range [][2]int{{8000, 8}, {8000, 24}, {44100, 8}, {44100, 24}} {
		if seen[k] < 20 {
			t.Errorf("rate/depth %v drawn %d of 200 times, want about 50", k, seen[k])
		}
	}
	if len(seen) != 4 {
		t.Errorf("drew %v, want only the listed rates and depths", seen)
	}
}

func TestAudioOptionsValidate(t *testing.T) {
	ok := AudioOptions{LengthMean: 1}
	with := func(f func(*AudioOptions)) AudioOptions { o := ok; f(&o); return o }
	tests := []struct {
		name string
		o    AudioOptions
		want string
	}{
		{"defaults", ok, ""},
		{"disabled zero value", AudioOptions{}, ""},
		{"explicit", AudioOptions{LengthMean: 2, LengthStddev: 1, Format: "WAV", Depths: []int{8, 16, 24, 32}, SampleRatesKHz: []float64{8, 44.1}, Channels: 2}, ""},
		{"negative mean", with(func(o *AudioOptions) { o.LengthMean = -1 }), "--audio-length-mean must be a finite number >= 0, got -1"},
		{"below minimum", with(func(o *AudioOptions) { o.LengthMean = 0.005 }), "--audio-length-mean 0.005 s is below the 0.01 s minimum"},
		{"negative stddev", with(func(o *AudioOptions) { o.LengthStddev = -0.1 }), "--audio-length-stddev must be a finite number >= 0, got -0.1"},
		{"infinite stddev", with(func(o *AudioOptions) { o.LengthStddev = math.Inf(1) }), "--audio-length-stddev must be a finite number >= 0, got +Inf"},
		{"mp3", with(func(o *AudioOptions) { o.Format = "mp3" }), "--audio-format mp3 is not supported: llmbench has no pure-Go MP3 encoder; use --audio-format wav"},
		{"unknown format", with(func(o *AudioOptions) { o.Format = "flac" }), `unknown --audio-format "flac": use wav`},
		{"depth 12", with(func(o *AudioOptions) { o.Depths = []int{16, 12} }), "unsupported --audio-depths value 12: use 8, 16, 24 or 32"},
		{"zero rate", with(func(o *AudioOptions) { o.SampleRatesKHz = []float64{0} }), "--audio-sample-rates value 0 kHz must be > 0"},
		{"negative rate", with(func(o *AudioOptions) { o.SampleRatesKHz = []float64{16, -8} }), "--audio-sample-rates value -8 kHz must be > 0"},
		{"NaN rate", with(func(o *AudioOptions) { o.SampleRatesKHz = []float64{math.NaN()} }), "--audio-sample-rates value NaN kHz"},
		{"huge rate", with(func(o *AudioOptions) { o.SampleRatesKHz = []float64{1e10} }), "fit a WAV header"},
		{"three channels", with(func(o *AudioOptions) { o.Channels = 3 }), "--audio-num-channels must be 1 or 2, got 3"},
		{"negative channels", with(func(o *AudioOptions) { o.Channels = -1 }), "--audio-num-channels must be 1 or 2, got -1"},
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
			if _, nerr := NewAudio(tc.o, 1); nerr == nil {
				t.Error("NewAudio accepted options Validate refuses")
			}
		})
	}
}

func TestAudioOptionsEnabled(t *testing.T) {
	if (AudioOptions{}).Enabled() || !(AudioOptions{LengthMean: 0.5}).Enabled() {
		t.Error("Enabled should follow LengthMean > 0")
	}
}

func BenchmarkAudio10s(b *testing.B) {
	g, err := NewAudio(AudioOptions{LengthMean: 10}, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
