package dataset

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wavBytes is a 16-bit mono PCM WAV of frames frames at rate Hz, written
// here by hand from the RIFF layout.
func wavBytes(rate, frames int) []byte {
	data := make([]byte, 2*frames)
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(rate))
	le(uint32(rate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

func TestDatasetMediaFields(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "media"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("media/pixel.png", pngBuf.Bytes())
	wav := wavBytes(16000, 24000) // 1.5 s
	write("media/clip.wav", wav)
	b64 := base64.StdEncoding.EncodeToString(wav)
	lines := strings.Join([]string{
		`{"text":"look","image":"media/pixel.png"}`,
		`{"text":"two","images":["https://example.com/a.jpg","data:image/png;base64,` + base64.StdEncoding.EncodeToString(pngBuf.Bytes()) + `"]}`,
		`{"text":"hear","audio":"media/clip.wav"}`,
		`{"audios":["wav,` + b64 + `","data:audio/wav;base64,` + b64 + `"]}`,
		`{"texts":["a","b","c"]}`,
		`{"text":"watch","video":"https://example.com/v.mp4","images":["https://example.com/i.png"]}`,
	}, "\n")
	write("data.jsonl", []byte(lines))
	convs, err := ReadFile(filepath.Join(dir, "data.jsonl"), FileOptions{Type: "single_turn", Corpus: NewCorpus(builtin(t))})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(i int) Turn { return convs[i].Turns[0] }
	if im := turn(0).Images; len(im) != 1 || im[0].Format != "png" || !bytes.Equal(im[0].Data, pngBuf.Bytes()) ||
		im[0].URL != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBuf.Bytes()) {
		t.Errorf("file image: %+v", im)
	}
	if im := turn(1).Images; len(im) != 2 || im[0].URL != "https://example.com/a.jpg" || im[0].Data != nil || !bytes.Equal(im[1].Data, pngBuf.Bytes()) {
		t.Errorf("URL and data: images: %d", len(im))
	}
	if a := turn(2).Audios; len(a) != 1 || a[0].Format != "wav" || a[0].Seconds != 1.5 || !bytes.Equal(a[0].Data, wav) {
		t.Errorf("file audio: %d clips, first %v s", len(a), a[0].Seconds)
	}
	if a := turn(3).Audios; len(a) != 2 || a[0].Seconds != 1.5 || a[1].Seconds != 1.5 || turn(3).Text != "" {
		t.Errorf("base64 audio: %+v", turn(3))
	}
	if tx := turn(4).Texts; len(tx) != 3 || tx[2] != "c" {
		t.Errorf("texts: %q", tx)
	}
	if v := turn(5).Videos; len(v) != 1 || v[0].URL != "https://example.com/v.mp4" || len(turn(5).Images) != 1 {
		t.Errorf("video: %+v", turn(5))
	}
}
