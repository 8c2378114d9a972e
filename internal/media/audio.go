package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Audio containers.
const (
	AudioWAV = "wav"
	AudioMP3 = "mp3"
)

// MinAudioSeconds is the shortest clip drawn, as AIPerf.
const MinAudioSeconds = 0.01

// noiseSigma is the standard deviation of the Gaussian noise samples, before
// clipping to ±1 (AIPerf's generate_noise_signal).
const noiseSigma = 0.3

// AudioOptions configures synthetic audio clips (AIPerf's --audio-* options).
// Zero values take AIPerf's defaults: wav, 16-bit, 16 kHz, mono.
type AudioOptions struct {
	LengthMean, LengthStddev float64   // seconds
	Format                   string    // wav (mp3 is refused)
	Depths                   []int     // bits per sample, each 8, 16, 24 or 32
	SampleRatesKHz           []float64 // picked at random per clip
	Channels                 int       // 1 or 2
}

// Enabled reports whether audio is requested: a positive mean length.
func (o AudioOptions) Enabled() bool { return o.LengthMean > 0 }

func (o AudioOptions) depths() []int {
	if len(o.Depths) == 0 {
		return []int{16}
	}
	return o.Depths
}

func (o AudioOptions) rates() []float64 {
	if len(o.SampleRatesKHz) == 0 {
		return []float64{16}
	}
	return o.SampleRatesKHz
}

func (o AudioOptions) channels() int {
	if o.Channels == 0 {
		return 1
	}
	return o.Channels
}

// Validate checks the options.
func (o AudioOptions) Validate() error {
	if !finite(o.LengthMean) || o.LengthMean < 0 {
		return fmt.Errorf("--audio-length-mean must be a finite number >= 0, got %v", o.LengthMean)
	}
	if !finite(o.LengthStddev) || o.LengthStddev < 0 {
		return fmt.Errorf("--audio-length-stddev must be a finite number >= 0, got %v", o.LengthStddev)
	}
	if o.Enabled() && o.LengthMean < MinAudioSeconds {
		return fmt.Errorf("--audio-length-mean %v s is below the %v s minimum", o.LengthMean, MinAudioSeconds)
	}
	switch strings.ToLower(orDefault(o.Format, AudioWAV)) {
	case AudioWAV:
	case AudioMP3:
		return errors.New("--audio-format mp3 is not supported: llmbench has no pure-Go MP3 encoder; use --audio-format wav")
	default:
		return fmt.Errorf("unknown --audio-format %q: use wav", o.Format)
	}
	for _, d := range o.depths() {
		switch d {
		case 8, 16, 24, 32:
		default:
			return fmt.Errorf("unsupported --audio-depths value %d: use 8, 16, 24 or 32", d)
		}
	}
	for _, r := range o.rates() {
		// The WAV header holds the rate in 32 bits.
		if !finite(r) || r <= 0 || math.Round(r*1000) < 1 || r*1000 > math.MaxUint32 {
			return fmt.Errorf("--audio-sample-rates value %v kHz must be > 0 and fit a WAV header", r)
		}
	}
	if c := o.channels(); c != 1 && c != 2 {
		return fmt.Errorf("--audio-num-channels must be 1 or 2, got %d", o.Channels)
	}
	return nil
}

// Audio draws synthetic WAV clips of Gaussian noise. It is not safe for
// concurrent use.
type Audio struct {
	o                       AudioOptions
	depths                  []int
	rates                   []float64
	channels                int
	length, formats, sample *rand.Rand
}

// NewAudio validates o and returns a generator seeded with seed.
func NewAudio(o AudioOptions, seed uint64) (*Audio, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Audio{
		o:        o,
		depths:   o.depths(),
		rates:    o.rates(),
		channels: o.channels(),
		length:   newRand(seed, streamAudioLength),
		formats:  newRand(seed, streamAudioFormat),
		sample:   newRand(seed, streamAudioData),
	}, nil
}

// Next draws one clip. Its length is max(0.01 s, normal(mean, stddev)); its
// frame count is that length times the rate, rounded half away from zero
// (AIPerf truncates); Item.Seconds is frames / rate.
func (g *Audio) Next() (Item, error) {
	length := g.o.LengthMean
	if g.o.LengthStddev > 0 {
		length += g.o.LengthStddev * g.length.NormFloat64()
	}
	length = math.Max(MinAudioSeconds, length)
	rate := int(math.Round(g.rates[g.formats.IntN(len(g.rates))] * 1000))
	depth := g.depths[g.formats.IntN(len(g.depths))]

	frames := max(1, int(math.Round(length*float64(rate))))
	bytesPer := depth / 8
	dataLen := frames * g.channels * bytesPer
	if dataLen > math.MaxUint32-64 {
		return Item{}, fmt.Errorf("audio clip of %.1f s at %d Hz is too long for a WAV file (4 GiB); lower --audio-length-mean", length, rate)
	}
	pad := dataLen & 1 // RIFF chunks are word-aligned
	buf := make([]byte, wavHeaderLen+dataLen+pad)
	putWAVHeader(buf, rate, g.channels, depth, dataLen, pad)
	fillNoise(g.sample, buf[wavHeaderLen:wavHeaderLen+dataLen], depth)
	return Item{MIME: "audio/wav", Format: AudioWAV, Data: buf, Seconds: float64(frames) / float64(rate)}, nil
}

const wavHeaderLen = 44

// putWAVHeader writes a canonical RIFF/WAVE header: a PCM (format 1) fmt
// chunk, then the data chunk's header.
func putWAVHeader(b []byte, rate, channels, depth, dataLen, pad int) {
	le := binary.LittleEndian
	blockAlign := channels * depth / 8
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(wavHeaderLen-8+dataLen+pad))
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // WAVE_FORMAT_PCM
	le.PutUint16(b[22:], uint16(channels))
	le.PutUint32(b[24:], uint32(rate))
	le.PutUint32(b[28:], uint32(rate*blockAlign))
	le.PutUint16(b[32:], uint16(blockAlign))
	le.PutUint16(b[34:], uint16(depth))
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(dataLen))
}

// fillNoise writes interleaved little-endian samples of normal(0, 0.3)
// noise clipped to ±1, scaled to the depth's signed range and truncated
// toward zero as numpy's astype. 8-bit follows AIPerf through libsndfile:
// scaled to 16 bits, then written unsigned as (s16 >> 8) + 128.
func fillNoise(r *rand.Rand, data []byte, depth int) {
	next := func() float64 {
		return math.Max(-1, math.Min(1, noiseSigma*r.NormFloat64()))
	}
	le := binary.LittleEndian
	switch depth {
	case 8:
		for i := range data {
			s := int16(next() * math.MaxInt16)
			data[i] = byte(s>>8) + 128
		}
	case 16:
		for i := 0; i < len(data); i += 2 {
			le.PutUint16(data[i:], uint16(int16(next()*math.MaxInt16)))
		}
	case 24:
		const full = 1<<23 - 1
		for i := 0; i < len(data); i += 3 {
			s := int32(next() * full)
			data[i], data[i+1], data[i+2] = byte(s), byte(s>>8), byte(s>>16)
		}
	case 32:
		for i := 0; i < len(data); i += 4 {
			le.PutUint32(data[i:], uint32(int32(next()*math.MaxInt32)))
		}
	}
}
