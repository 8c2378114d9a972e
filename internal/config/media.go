package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/endpoint"
)

// Media are the non-text inputs of synthetic requests, and the inputs of
// the types that take something else than a prompt (AIPerf's Prompt,
// Audio Input, Image Input, Video Input and Rankings groups).
type Media struct {
	// PromptBatchSize is the texts per request of batch types
	// (embeddings): --prompt-batch-size.
	PromptBatchSize int           `json:"prompt_batch_size"`
	Image           ImageInput    `json:"image"`
	Audio           AudioInput    `json:"audio"`
	Video           VideoInput    `json:"video"`
	Rankings        RankingsInput `json:"rankings"`
	// DownloadVideoContent also downloads a finished video, inside the
	// request's time (video_generation).
	DownloadVideoContent bool `json:"download_video_content,omitempty"`
	// RequestContentType is --request-content-type: empty, or the type's
	// own (a check, as the type decides).
	RequestContentType string `json:"request_content_type,omitempty"`
}

// ImageInput shapes synthetic images.
type ImageInput struct {
	WidthMean    float64 `json:"width_mean"`
	WidthStddev  float64 `json:"width_stddev"`
	HeightMean   float64 `json:"height_mean"`
	HeightStddev float64 `json:"height_stddev"`
	BatchSize    int     `json:"batch_size"`
	Format       string  `json:"format"`
	Source       string  `json:"source"`
	Sampling     string  `json:"source_sampling"`
}

// Enabled reports whether requests carry synthetic images.
func (i ImageInput) Enabled() bool { return i.WidthMean > 0 && i.HeightMean > 0 && i.BatchSize > 0 }

// AudioInput shapes synthetic audio clips.
type AudioInput struct {
	BatchSize      int       `json:"batch_size"`
	LengthMean     float64   `json:"length_mean"`
	LengthStddev   float64   `json:"length_stddev"`
	Format         string    `json:"format"`
	Depths         []int     `json:"depths"`
	SampleRatesKHz []float64 `json:"sample_rates"`
	Channels       int       `json:"num_channels"`
}

// Enabled reports whether requests carry synthetic audio.
func (a AudioInput) Enabled() bool { return a.LengthMean > 0 && a.BatchSize > 0 }

// VideoInput shapes synthetic videos (refused: no pure-Go encoder).
type VideoInput struct {
	BatchSize        int     `json:"batch_size"`
	Duration         float64 `json:"duration"`
	FPS              float64 `json:"fps"`
	Width            int     `json:"width,omitempty"`
	Height           int     `json:"height,omitempty"`
	SynthType        string  `json:"synth_type"`
	Format           string  `json:"format"`
	Codec            string  `json:"codec"`
	AudioSampleRate  float64 `json:"audio_sample_rate"`
	AudioNumChannels int     `json:"audio_num_channels"`
	AudioCodec       string  `json:"audio_codec,omitempty"`
	AudioDepth       int     `json:"audio_depth"`
}

// Enabled reports whether synthetic videos were asked for.
func (v VideoInput) Enabled() bool { return v.Width > 0 && v.Height > 0 }

// RankingsInput shapes synthetic ranking requests: a query and passages.
type RankingsInput struct {
	PassagesMean        float64 `json:"passages_mean"`
	PassagesStddev      float64 `json:"passages_stddev"`
	PassageTokensMean   float64 `json:"passages_prompt_token_mean"`
	PassageTokensStddev float64 `json:"passages_prompt_token_stddev"`
	QueryTokensMean     float64 `json:"query_prompt_token_mean"`
	QueryTokensStddev   float64 `json:"query_prompt_token_stddev"`
}

// defaultMedia is AIPerf's defaults.
func defaultMedia() Media {
	return Media{
		PromptBatchSize: 1,
		Image:           ImageInput{BatchSize: 1, Format: "png", Source: "noise", Sampling: "random-with-replacement"},
		Audio:           AudioInput{BatchSize: 1, Format: "wav", Depths: []int{16}, SampleRatesKHz: []float64{16}, Channels: 1},
		Video: VideoInput{BatchSize: 1, Duration: 5, FPS: 4, SynthType: "moving_shapes", Format: "webm", Codec: "libvpx-vp9",
			AudioSampleRate: 44100, AudioDepth: 16},
		Rankings: RankingsInput{PassagesMean: 1, PassageTokensMean: 550, QueryTokensMean: 550},
	}
}

// bindMediaFlags registers the Prompt, Audio, Image, Video and Rankings
// groups.
func (f *Flags) bindMediaFlags() {
	m := &f.p.Input.Media
	f.section("Prompt")
	f.vars((*intValue)(&m.PromptBatchSize), "Texts per request for batch types (embeddings, nim_embeddings).", "prompt-batch-size", "b", "batch-size-text", "batch-size")

	f.section("Audio Input")
	a := &m.Audio
	f.vars((*intValue)(&a.BatchSize), "Audio clips per request.", "audio-batch-size", "batch-size-audio")
	f.vars((*floatValue)(&a.LengthMean), "Mean synthetic clip length in seconds (> 0 adds audio to every request).", "audio-length-mean")
	f.vars((*floatValue)(&a.LengthStddev), "Standard deviation of the clip length, seconds.", "audio-length-stddev")
	f.vars((*stringValue)(&a.Format), "Clip encoding: wav (mp3 is refused: no pure-Go encoder).", "audio-format")
	f.vars(intList(&a.Depths), "Bit depths to pick from at random: 8, 16, 24, 32.", "audio-depths")
	f.vars(floatList(&a.SampleRatesKHz), "Sample rates in kHz to pick from at random.", "audio-sample-rates")
	f.vars((*intValue)(&a.Channels), "Channels: 1 (mono) or 2 (stereo).", "audio-num-channels")

	f.section("Image Input")
	im := &m.Image
	f.vars((*floatValue)(&im.WidthMean), "Mean synthetic image width in px (width and height > 0 add images to every request).", "image-width-mean")
	f.vars((*floatValue)(&im.WidthStddev), "Standard deviation of the width.", "image-width-stddev")
	f.vars((*floatValue)(&im.HeightMean), "Mean synthetic image height in px.", "image-height-mean")
	f.vars((*floatValue)(&im.HeightStddev), "Standard deviation of the height.", "image-height-stddev")
	f.vars((*intValue)(&im.BatchSize), "Images per request.", "image-batch-size", "batch-size-image")
	f.vars((*stringValue)(&im.Format), "Encoding: png, jpeg, or random per image.", "image-format")
	f.vars((*stringValue)(&im.Source), "Pixels: noise (random) or a directory of images resized to the drawn size.", "image-source")
	f.vars((*stringValue)(&im.Sampling), "Order of a directory's images: random-with-replacement, shuffle-cycle or sequential-cycle.", "image-source-sampling")

	f.section("Video Input")
	v := &m.Video
	f.vars((*intValue)(&v.BatchSize), "Videos per request.", "video-batch-size", "batch-size-video")
	f.vars((*floatValue)(&v.Duration), "Clip length in seconds.", "video-duration")
	f.vars((*floatValue)(&v.FPS), "Frames per second.", "video-fps")
	f.vars((*intValue)(&v.Width), "Frame width in px; synthetic video is refused (no pure-Go encoder): pass videos in a dataset file.", "video-width")
	f.vars((*intValue)(&v.Height), "Frame height in px.", "video-height")
	f.vars((*stringValue)(&v.SynthType), "Frame content: moving_shapes, grid_clock or noise.", "video-synth-type")
	f.vars((*stringValue)(&v.Format), "Container: webm or mp4.", "video-format")
	f.vars((*stringValue)(&v.Codec), "Video codec.", "video-codec")
	f.vars((*floatValue)(&v.AudioSampleRate), "Sample rate of an embedded audio track.", "video-audio-sample-rate")
	f.vars((*intValue)(&v.AudioNumChannels), "Embedded audio channels: 0 (none), 1 or 2.", "video-audio-num-channels")
	f.vars((*stringValue)(&v.AudioCodec), "Embedded audio codec.", "video-audio-codec")
	f.vars((*intValue)(&v.AudioDepth), "Embedded audio bit depth.", "video-audio-depth")

	f.section("Rankings")
	r := &m.Rankings
	f.vars((*floatValue)(&r.PassagesMean), "Mean passages per synthetic ranking request.", "rankings-passages-mean")
	f.vars((*floatValue)(&r.PassagesStddev), "Standard deviation of the passages per request.", "rankings-passages-stddev")
	f.vars((*floatValue)(&r.PassageTokensMean), "Mean tokens per passage.", "rankings-passages-prompt-token-mean")
	f.vars((*floatValue)(&r.PassageTokensStddev), "Standard deviation of the passage tokens.", "rankings-passages-prompt-token-stddev")
	f.vars((*floatValue)(&r.QueryTokensMean), "Mean tokens per query.", "rankings-query-prompt-token-mean")
	f.vars((*floatValue)(&r.QueryTokensStddev), "Standard deviation of the query tokens.", "rankings-query-prompt-token-stddev")
}

// finishMedia checks the media and type-specific inputs against the
// endpoint type: each combination that cannot work is one line.
func (p *Profile) finishMedia(kind endpoint.Kind) error {
	m, caps, in := &p.Input.Media, kind.Caps(), &p.Input
	if m.RequestContentType != "" && !strings.EqualFold(strings.TrimSpace(m.RequestContentType), strings.Split(caps.ContentType(), ";")[0]) {
		return fmt.Errorf("--request-content-type %s: the %s endpoint type sends %s", m.RequestContentType, kind, strings.Split(caps.ContentType(), ";")[0])
	}
	for _, c := range []struct {
		bad bool
		msg string
	}{
		{m.PromptBatchSize < 1, "--prompt-batch-size must be at least 1"},
		{m.PromptBatchSize > 1 && caps.Input != endpoint.Texts, fmt.Sprintf("--prompt-batch-size %d: the %s endpoint type sends one text a request; batches are for embeddings and nim_embeddings", m.PromptBatchSize, kind)},
		{m.Image.BatchSize < 0 || m.Audio.BatchSize < 0 || m.Video.BatchSize < 0, "--image-batch-size, --audio-batch-size and --video-batch-size must not be negative"},
		{m.Image.WidthMean < 0 || m.Image.HeightMean < 0 || m.Image.WidthStddev < 0 || m.Image.HeightStddev < 0, "--image-width-* and --image-height-* must not be negative"},
		{m.Audio.LengthMean < 0 || m.Audio.LengthStddev < 0, "--audio-length-mean and --audio-length-stddev must not be negative"},
		{m.Image.Enabled() && !caps.Media.Has(endpoint.Image), fmt.Sprintf("--image-width-mean: the %s endpoint type takes no images (types that do: %s)", kind, kindsWith(endpoint.Image))},
		{m.Audio.Enabled() && !caps.Media.Has(endpoint.Audio), fmt.Sprintf("--audio-length-mean: the %s endpoint type takes no audio (types that do: %s)", kind, kindsWith(endpoint.Audio))},
		{m.Video.Enabled(), "--video-width/--video-height: synthetic video needs a webm or mp4 encoder, which llmbench does not ship in pure Go and will not run ffmpeg for; send videos from a dataset file instead"},
		{m.Audio.Enabled() && m.Audio.Format != "wav", fmt.Sprintf("--audio-format %s: only wav is made (no pure-Go MP3 encoder is used); use --audio-format wav", m.Audio.Format)},
		{caps.Input == endpoint.Ranking && (m.Rankings.PassagesMean < 1 || m.Rankings.QueryTokensMean < 1 || m.Rankings.PassageTokensMean < 1),
			fmt.Sprintf("the %s endpoint type needs a query and passages: --rankings-passages-mean, --rankings-query-prompt-token-mean and --rankings-passages-prompt-token-mean must be at least 1", kind)},
		{caps.Input != endpoint.Ranking && p.anySet("rankings-passages-mean", "rankings-passages-stddev", "rankings-passages-prompt-token-mean", "rankings-passages-prompt-token-stddev", "rankings-query-prompt-token-mean", "rankings-query-prompt-token-stddev"),
			fmt.Sprintf("--rankings-* shape ranking requests, and the %s endpoint type is not a rankings type (cohere_rankings, hf_tei_rankings, nim_rankings)", kind)},
		{caps.Input != endpoint.Conversation && (in.Conversation.TurnMean > 1 || in.Conversation.TurnStddev > 0),
			fmt.Sprintf("--conversation-turn-mean: the %s endpoint type has no conversations; send one turn a request", kind)},
		{kind == endpoint.AudioTranscription && !m.Audio.Enabled(), "the audio_transcription endpoint type sends audio: set --audio-length-mean (seconds)"},
		{kind == endpoint.AudioTranscription && m.Audio.BatchSize != 1, "--audio-batch-size: audio_transcription sends one clip a request"},
		{(kind == endpoint.ImageEdit || kind == endpoint.ImageRetrieval) && !m.Image.Enabled(), fmt.Sprintf("the %s endpoint type sends images: set --image-width-mean and --image-height-mean", kind)},
		{kind == endpoint.ImageEdit && m.Image.BatchSize != 1, "--image-batch-size: image_edit sends one image a request"},
		{m.DownloadVideoContent && !caps.ProducesVideo, "--download-video-content is for the video_generation endpoint type"},
	} {
		if c.bad {
			return errors.New(c.msg)
		}
	}
	if m.Audio.Enabled() {
		for _, d := range m.Audio.Depths {
			if d != 8 && d != 16 && d != 24 && d != 32 {
				return fmt.Errorf("--audio-depths %d: use 8, 16, 24 or 32", d)
			}
		}
		for _, r := range m.Audio.SampleRatesKHz {
			if r <= 0 {
				return fmt.Errorf("--audio-sample-rates %g: a rate is a positive number of kHz", r)
			}
		}
		if m.Audio.Channels != 1 && m.Audio.Channels != 2 {
			return fmt.Errorf("--audio-num-channels %d: use 1 or 2", m.Audio.Channels)
		}
	}
	if m.Image.Enabled() {
		switch m.Image.Format {
		case "png", "jpeg", "random":
		default:
			return fmt.Errorf("--image-format %q: use png, jpeg or random", m.Image.Format)
		}
		if m.Image.Source == "assets" {
			return errors.New("--image-source assets: llmbench bundles no photos; pass a directory of images, or noise")
		}
	}
	return nil
}

// anySet reports whether any of the flags was given.
func (p *Profile) anySet(names ...string) bool {
	for _, n := range names {
		if p.set[n] {
			return true
		}
	}
	return false
}

// kindsWith lists the endpoint types that take medium m.
func kindsWith(m endpoint.Media) string {
	var names []string
	for _, k := range endpoint.Kinds() {
		if k.Type() != nil && k.Caps().Media.Has(m) {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ", ")
}

// numberList takes comma- or space-separated numbers, each read by parse;
// a flag given replaces the default list.
type numberList[T int | float64] struct {
	p     *[]T
	parse func(string) (T, error)
}

func (l *numberList[T]) Set(v string) error {
	var out []T
	for _, s := range strings.Fields(strings.ReplaceAll(v, ",", " ")) {
		x, err := l.parse(s)
		if err != nil {
			return err
		}
		out = append(out, x)
	}
	*l.p = out
	return nil
}

func (l *numberList[T]) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Trim(fmt.Sprint(*l.p), "[]")
}

func intList(p *[]int) *numberList[int] {
	return &numberList[int]{p, func(s string) (int, error) {
		var n intValue
		err := n.Set(s)
		return int(n), err
	}}
}

func floatList(p *[]float64) *numberList[float64] {
	return &numberList[float64]{p, func(s string) (float64, error) {
		var x floatValue
		err := x.Set(s)
		return float64(x), err
	}}
}

// kindNames are the endpoint types llmbench speaks.
func kindNames() []string {
	var names []string
	for _, k := range endpoint.Kinds() {
		if k.Type() != nil {
			names = append(names, string(k))
		}
	}
	return names
}
