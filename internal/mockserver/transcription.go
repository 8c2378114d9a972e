package mockserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// wordsPerSecond is how fast the simulated speaker talks: 150 words a
// minute.
const wordsPerSecond = 2.5

// transcription serves OpenAI's POST /v1/audio/transcriptions
// (multipart): a file part with a WAV (or MP3) clip, model, prompt,
// response_format (json, text, verbose_json), stream. It takes the clip's
// duration times TranscriptionRTF; streamed, its words come as
// transcript.text.delta events spread over that time, then
// transcript.text.done.
func (s *Server) transcription(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	form, ok := parseForm(w, r)
	if !ok {
		return
	}
	files := form.File["file"]
	if len(files) == 0 {
		writeError(w, http.StatusBadRequest, "file is required: the audio clip as a multipart file part")
		return
	}
	f, err := files[0].Open()
	if err != nil {
		writeError(w, http.StatusBadRequest, "read the file part: "+err.Error())
		return
	}
	clip, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		writeError(w, http.StatusBadRequest, "read the file part: "+err.Error())
		return
	}
	duration, err := audioDuration(clip)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c.stream = formValue(form.Value, "stream") == "true"
	format := formValue(form.Value, "response_format")
	if c.refused(r) {
		return
	}
	defer c.reshape()()

	promptTokens := s.lang.Count(formValue(form.Value, "prompt"))
	n := max(1, int(math.Round(duration.Seconds()*wordsPerSecond)))
	pieces := s.lang.Pieces(rand.New(rand.NewPCG(s.cfg.Seed, c.seq)), n)
	var text []byte
	for _, p := range pieces {
		text = appendJSONString(text, p)
	}
	usage := fmt.Appendf(nil, `{"type":"tokens","input_tokens":%d,"output_tokens":%d,"total_tokens":%d}`, promptTokens, n, promptTokens+n)
	d := time.Duration(float64(duration) * s.cfg.TranscriptionRTF)
	if !c.stream {
		if !s.occupy(c, promptTokens, n, d, 1, nil) {
			return
		}
		switch format {
		case "text", "srt", "vtt":
			var plain bytes.Buffer
			for _, p := range pieces {
				plain.WriteString(p)
			}
			c.reply("text/plain; charset=utf-8", plain.Bytes())
		case "verbose_json":
			c.reply("application/json", fmt.Appendf(nil, `{"task":"transcribe","language":"english","duration":%s,"text":"%s","segments":[],"usage":%s}`,
				strconv.FormatFloat(duration.Seconds(), 'f', 3, 64), text, usage))
		default:
			c.reply("application/json", fmt.Appendf(nil, `{"text":"%s","usage":%s}`, text, usage))
		}
		return
	}
	s.occupy(c, promptTokens, n, d, n, func(k int) bool {
		b := append([]byte(`data: {"type":"transcript.text.delta","delta":"`), appendJSONString(nil, pieces[k])...)
		b = append(b, "\"}\n\n"...)
		if k == n-1 {
			b = fmt.Appendf(b, `data: {"type":"transcript.text.done","text":"%s","usage":%s}`+"\n\n", text, usage)
		}
		return c.event(k, n, b)
	})
}

// audioDuration is how long a WAV clip plays (from its header and data
// size), or an MP3 clip (from its first frame's bit rate and its size, as
// for a constant bit rate).
func audioDuration(b []byte) (time.Duration, error) {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return wavDuration(b)
	case len(b) >= 3 && string(b[:3]) == "ID3", len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		return mp3Duration(b)
	}
	return 0, errors.New("unsupported audio: send a WAV (RIFF/WAVE) or MP3 clip")
}

// wavDuration reads a RIFF/WAVE header: the fmt chunk's byte rate and the
// data chunk's size (clamped to what was sent, for streamed WAVs whose
// size says 0xFFFFFFFF).
func wavDuration(b []byte) (time.Duration, error) {
	var byteRate uint32
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int64(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return 0, errors.New("WAV: fmt chunk too short")
			}
			channels := binary.LittleEndian.Uint16(body[2:4])
			rate := binary.LittleEndian.Uint32(body[4:8])
			byteRate = binary.LittleEndian.Uint32(body[8:12])
			bits := binary.LittleEndian.Uint16(body[14:16])
			if byteRate == 0 {
				byteRate = rate * uint32(channels) * uint32(bits) / 8
			}
		case "data":
			if byteRate == 0 {
				return 0, errors.New("WAV: no fmt chunk (or a zero byte rate) before the data")
			}
			data := min(size, int64(len(body)))
			return time.Duration(float64(data) / float64(byteRate) * float64(time.Second)), nil
		}
		p += 8 + int(min(size, int64(len(b))))
		p += p & 1 // chunks are padded to even sizes
	}
	return 0, errors.New("WAV: no data chunk")
}

// mp3Duration estimates an MP3 clip's duration from its first frame
// header's bit rate, after any ID3v2 tag.
func mp3Duration(b []byte) (time.Duration, error) {
	p := 0
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		p = 10 + (int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f))
	}
	for ; p+4 <= len(b); p++ {
		if b[p] != 0xFF || b[p+1]&0xE0 != 0xE0 {
			continue
		}
		version, layer, index := (b[p+1]>>3)&3, (b[p+1]>>1)&3, int(b[p+2]>>4)
		if layer != 1 || version == 1 || index == 0 || index == 15 { // layer III only
			continue
		}
		// kbit/s by index: MPEG-1 layer III, then MPEG-2 and 2.5 layer III.
		mpeg1 := [...]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}
		mpeg2 := [...]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}
		kbps := mpeg2[index]
		if version == 3 {
			kbps = mpeg1[index]
		}
		return time.Duration(float64(len(b)-p) * 8 / float64(kbps*1000) * float64(time.Second)), nil
	}
	return 0, errors.New("MP3: no frame header")
}
