package media

import (
	"errors"
	"strings"
	"testing"
)

func TestVideoOptionsValidate(t *testing.T) {
	const refusal = "synthetic video needs an encoder for webm/mp4 (VP9, H.264), which llmbench does not ship in pure Go; pass videos in a dataset file instead"
	tests := []struct {
		name    string
		o       VideoOptions
		enabled bool
		want    string
	}{
		{"unset", VideoOptions{Duration: 5, FPS: 4, Format: "webm"}, false, ""},
		{"width only", VideoOptions{Width: 640}, false, ""},
		{"negative", VideoOptions{Width: -1, Height: 480}, false, "--video-width and --video-height must be positive, got -1x480"},
		{"webm", VideoOptions{Width: 640, Height: 480, Duration: 5, FPS: 4, Synth: "moving_shapes", Format: "webm", Codec: "libvpx-vp9"}, true, refusal},
		{"mp4", VideoOptions{Width: 64, Height: 64, Format: "mp4", Codec: "libx264"}, true, refusal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.o.Enabled(); got != tc.enabled {
				t.Errorf("Enabled = %v, want %v", got, tc.enabled)
			}
			err := tc.o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
			if tc.want == refusal && !errors.Is(err, ErrNoVideoEncoder) {
				t.Error("refusal is not ErrNoVideoEncoder")
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}
