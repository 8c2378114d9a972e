package benchmark

import (
	"fmt"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/media"
)

// attachMedia gives every turn of synthetic conversations its images and
// audio clips (--image-*, --audio-*), drawn in turn order from the seed,
// as AIPerf attaches them to every synthetic turn. A dataset file's turns
// carry what the file gives.
func attachMedia(p config.Profile, seed uint64, convs []dataset.Conversation) error {
	m := p.Input.Media
	if p.Input.File != "" || !m.Image.Enabled() && !m.Audio.Enabled() {
		return nil
	}
	var images *media.Images
	var audio *media.Audio
	var err error
	if m.Image.Enabled() {
		im := m.Image
		images, err = media.NewImages(media.ImageOptions{WidthMean: im.WidthMean, WidthStddev: im.WidthStddev, HeightMean: im.HeightMean,
			HeightStddev: im.HeightStddev, Format: im.Format, Source: im.Source, Sampling: im.Sampling}, seed^0x696d616765) // "image"
		if err != nil {
			return fmt.Errorf("synthetic images: %w", err)
		}
	}
	if m.Audio.Enabled() {
		a := m.Audio
		audio, err = media.NewAudio(media.AudioOptions{LengthMean: a.LengthMean, LengthStddev: a.LengthStddev, Format: a.Format,
			Depths: a.Depths, SampleRatesKHz: a.SampleRatesKHz, Channels: a.Channels}, seed^0x617564696f) // "audio"
		if err != nil {
			return fmt.Errorf("synthetic audio: %w", err)
		}
	}
	for i := range convs {
		for k := range convs[i].Turns {
			t := &convs[i].Turns[k]
			for j := 0; images != nil && j < m.Image.BatchSize; j++ {
				it, err := images.Next()
				if err != nil {
					return fmt.Errorf("synthetic image: %w", err)
				}
				// The data: URI alone: every type reads the bytes from
				// it, and a turn holds its media once.
				t.Images = append(t.Images, endpoint.MediaItem{URL: it.DataURI(), Format: it.Format})
			}
			for j := 0; audio != nil && j < m.Audio.BatchSize; j++ {
				it, err := audio.Next()
				if err != nil {
					return fmt.Errorf("synthetic audio: %w", err)
				}
				t.Audios = append(t.Audios, endpoint.MediaItem{URL: it.DataURI(), Format: it.Format, Seconds: it.Seconds})
			}
		}
	}
	return nil
}
