package config

import (
	"reflect"
	"testing"
)

// TestMediaFlags: AIPerf's media and rankings flags, aliases included,
// land where the run reads them; their defaults are AIPerf's.
func TestMediaFlags(t *testing.T) {
	p, err := parse(t, "-m", "m", "--endpoint-type", "chat", "--image-width-mean", "640", "--image-height-mean", "480", "--batch-size-image", "2",
		"--image-format", "jpeg", "--audio-length-mean", "3.5", "--audio-depths", "8,24", "--audio-sample-rates", "16 44.1", "--audio-num-channels", "2",
		"--batch-size-audio", "3")
	if err != nil {
		t.Fatal(err)
	}
	m := p.Input.Media
	if want := (ImageInput{WidthMean: 640, HeightMean: 480, BatchSize: 2, Format: "jpeg", Source: "noise", Sampling: "random-with-replacement"}); m.Image != want {
		t.Errorf("image %+v, want %+v", m.Image, want)
	}
	if want := (AudioInput{BatchSize: 3, LengthMean: 3.5, Format: "wav", Depths: []int{8, 24}, SampleRatesKHz: []float64{16, 44.1}, Channels: 2}); !reflect.DeepEqual(m.Audio, want) {
		t.Errorf("audio %+v, want %+v", m.Audio, want)
	}
	p, err = parse(t, "-m", "m", "--endpoint-type", "nim_rankings", "--rankings-passages-mean", "5", "--rankings-passages-stddev", "1",
		"--rankings-query-prompt-token-mean", "30", "--rankings-passages-prompt-token-stddev", "9")
	if err != nil {
		t.Fatal(err)
	}
	if want := (RankingsInput{PassagesMean: 5, PassagesStddev: 1, PassageTokensMean: 550, PassageTokensStddev: 9, QueryTokensMean: 30}); p.Input.Media.Rankings != want {
		t.Errorf("rankings %+v, want %+v", p.Input.Media.Rankings, want)
	}
	p, err = parse(t, "-m", "m", "--endpoint-type", "embeddings", "-b", "16")
	if err != nil || p.Input.Media.PromptBatchSize != 16 {
		t.Errorf("-b 16: %d, %v", p.Input.Media.PromptBatchSize, err)
	}
	if _, err := parse(t, "-m", "m", "--audio-length-mean", "1", "--audio-depths", "12"); err == nil {
		t.Error("--audio-depths 12 accepted")
	}
}
