// Package media draws the synthetic media attached to request turns —
// images and audio clips — in-process and deterministically from a seed,
// following AIPerf's synthetic multimodal inputs. Synthetic video is refused
// because it needs an encoder llmbench does not ship.
package media

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
)

// Item is one generated media payload.
type Item struct {
	MIME   string // "image/png", "image/jpeg", "audio/wav"
	Format string // "png", "jpeg", "wav": the short name a request carries
	Data   []byte

	Seconds       float64 // audio: frames / sample rate
	Width, Height int     // image: pixel size
}

// Base64 returns Data in standard base64, as carried by input_audio.data.
func (it Item) Base64() string { return base64.StdEncoding.EncodeToString(it.Data) }

// DataURI returns "data:<mime>;base64,<data>", as carried by image_url.url.
func (it Item) DataURI() string {
	prefix := "data:" + it.MIME + ";base64,"
	b := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(it.Data)))
	n := copy(b, prefix)
	base64.StdEncoding.Encode(b[n:], it.Data)
	return string(b)
}

// Separate streams per concern, so that changing one option (say the format)
// does not shift the draws of another (the sizes) for the same seed.
const (
	streamImageDims uint64 = 0x696d672d64696d73 + iota
	streamImageFormat
	streamImageSource
	streamImageNoise
	streamAudioLength
	streamAudioFormat
	streamAudioData
)

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
