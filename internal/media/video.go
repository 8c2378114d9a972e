package media

import (
	"errors"
	"fmt"
)

// ErrNoVideoEncoder is returned by VideoOptions.Validate when synthetic video
// is requested: AIPerf shells out to ffmpeg for VP9/H.264, and no pure-Go
// encoder for those codecs is used here.
var ErrNoVideoEncoder = errors.New("synthetic video needs an encoder for webm/mp4 (VP9, H.264), which llmbench does not ship in pure Go; pass videos in a dataset file instead")

// VideoOptions mirrors AIPerf's --video-* options, so that a request for
// synthetic video is recognised and refused clearly.
type VideoOptions struct {
	Width, Height   int
	Duration, FPS   float64
	Synth           string // moving_shapes, grid_clock, noise
	Format, Codec   string // webm/mp4; ffmpeg codec name
	AudioSampleRate float64
	AudioChannels   int
	AudioCodec      string
	AudioDepth      int
}

// Enabled reports whether video is requested: width and height both set.
func (o VideoOptions) Enabled() bool { return o.Width > 0 && o.Height > 0 }

// Validate refuses synthetic video; options that leave it disabled pass.
func (o VideoOptions) Validate() error {
	if o.Width < 0 || o.Height < 0 {
		return fmt.Errorf("--video-width and --video-height must be positive, got %dx%d", o.Width, o.Height)
	}
	if o.Enabled() {
		return ErrNoVideoEncoder
	}
	return nil
}
