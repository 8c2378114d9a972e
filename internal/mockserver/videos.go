package mockserver

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// videoJobs are the video jobs submitted to the server. They run one at
// a time, in the order submitted, on a video engine of their own (not in
// the MaxNumSeqs slots): a job's times are set at its submission, and its
// status follows from the clock.
type videoJobs struct {
	mu   sync.Mutex
	jobs map[string]*videoJob
	// free is when the engine is done with the last job queued.
	free time.Time
}

// videoJob is one video being made.
type videoJob struct {
	id, model, size, seconds string
	width, height            int
	secs                     float64
	created, start, end      time.Time
}

// videoSubmit serves OpenAI's POST /v1/videos (multipart, or JSON):
// prompt, model, size (720x1280), seconds (4). The job is queued; its
// generation takes VideoTime (times MediaTimeScale) for 4 seconds of
// 1280x720, in proportion to the seconds and pixels asked for.
func (s *Server) videoSubmit(w http.ResponseWriter, r *http.Request) {
	c := s.newCall(w, r)
	if c == nil {
		return
	}
	fields := map[string]string{}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		form, ok := parseForm(w, r)
		if !ok {
			return
		}
		for k := range form.Value {
			fields[k] = formValue(form.Value, k)
		}
	} else {
		var body map[string]json.RawMessage
		if !c.decode(r, &body) {
			return
		}
		for k, v := range body {
			var str string
			if json.Unmarshal(v, &str) != nil {
				str = string(v) // a number: "seconds": 8
			}
			fields[k] = str
		}
	}
	job, err := newVideoJob(fields)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if c.refused(r) {
		return
	}
	defer c.reshape()()
	job.id = "video_" + strconv.FormatUint(c.seq, 10)
	job.created = c.arrival
	d := s.mediaTime(s.cfg.VideoTime, job.secs/4*float64(job.width*job.height)/(1280*720))
	promptTokens := s.lang.Count(fields["prompt"])

	v := &s.videos
	v.mu.Lock()
	job.start = v.free
	if job.start.Before(job.created) {
		job.start = job.created
	}
	job.end = job.start.Add(d)
	v.free = job.end
	v.jobs[job.id] = job
	v.mu.Unlock()

	// The job waits, runs, and is done on the engine's clock, whoever
	// polls it: timers move it through the gauges and count it.
	s.state.waiting.Add(1)
	time.AfterFunc(time.Until(job.start), func() {
		s.state.waiting.Add(-1)
		s.state.running.Add(1)
		s.gpu.change(job.start, 1)
		time.AfterFunc(time.Until(job.end), func() {
			s.state.running.Add(-1)
			s.gpu.change(job.end, -1)
			s.engine().served(job.start.Sub(job.created).Seconds(), job.end.Sub(job.created).Seconds(), promptTokens, 0)
		})
	})
	c.reply("application/json", job.appendJSON(nil, job.created))
}

// newVideoJob checks a video request's fields.
func newVideoJob(f map[string]string) (*videoJob, error) {
	if strings.TrimSpace(f["prompt"]) == "" {
		return nil, fmt.Errorf("prompt is required")
	}
	job := &videoJob{model: modelOr(f["model"]), size: f["size"], seconds: f["seconds"]}
	if job.size == "" {
		job.size = "720x1280"
	}
	w, h, ok := strings.Cut(job.size, "x")
	var errW, errH error
	job.width, errW = strconv.Atoi(w)
	job.height, errH = strconv.Atoi(h)
	if !ok || errW != nil || errH != nil || job.width < 1 || job.height < 1 || job.width > 8192 || job.height > 8192 {
		return nil, fmt.Errorf("size %q: want WIDTHxHEIGHT, for example 1280x720", job.size)
	}
	if job.seconds == "" {
		job.seconds = "4"
	}
	secs, err := strconv.ParseFloat(job.seconds, 64)
	if err != nil || !(secs > 0 && secs <= 120) {
		return nil, fmt.Errorf("seconds %q: want a number of seconds between 0 and 120", job.seconds)
	}
	job.secs = secs
	return job, nil
}

// appendJSON appends the job as OpenAI's video object at now, with
// SGLang's inference_time_s and peak_memory_mb once completed.
func (j *videoJob) appendJSON(b []byte, now time.Time) []byte {
	// Queued up to its start: the submission's answer always is.
	status, progress := "queued", 0
	switch {
	case !now.After(j.start):
	case !now.Before(j.end):
		status, progress = "completed", 100
	default:
		status, progress = "in_progress", min(99, int(100*now.Sub(j.start)/j.end.Sub(j.start)))
	}
	b = fmt.Appendf(b, `{"id":%q,"object":"video","created_at":%d,"status":%q,"model":`, j.id, j.created.Unix(), status)
	b = appendJSONValue(b, j.model)
	b = fmt.Appendf(b, `,"progress":%d,"seconds":%q,"size":%q,`, progress, j.seconds, j.size)
	if status != "completed" {
		return append(b, `"completed_at":null,"expires_at":null,"error":null}`...)
	}
	// A diffusion model's memory: its weights, and activations growing
	// with the video's pixels and frames.
	peak := 18432 + float64(j.width*j.height)*j.secs/1000
	return fmt.Appendf(b, `"completed_at":%d,"expires_at":null,"error":null,"inference_time_s":%.3f,"peak_memory_mb":%.1f}`,
		j.end.Unix(), j.end.Sub(j.start).Seconds(), peak)
}

// videoJob returns the job GET /v1/videos/{id}… names, answering 401 or
// 404 when there is none to give.
func (s *Server) videoJob(w http.ResponseWriter, r *http.Request) *videoJob {
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "invalid API key: send it as Authorization: Bearer <key> or x-api-key: <key>")
		return nil
	}
	id := r.PathValue("id")
	s.videos.mu.Lock()
	job := s.videos.jobs[id]
	s.videos.mu.Unlock()
	if job == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("video %q not found", id))
	}
	return job
}

// videoStatus serves GET /v1/videos/{id}: the job as it is now.
func (s *Server) videoStatus(w http.ResponseWriter, r *http.Request) {
	if job := s.videoJob(w, r); job != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(job.appendJSON(nil, time.Now()))
	}
}

// videoContent serves GET /v1/videos/{id}/content: a completed job's
// video, a small fake MP4.
func (s *Server) videoContent(w http.ResponseWriter, r *http.Request) {
	job := s.videoJob(w, r)
	if job == nil {
		return
	}
	if time.Now().Before(job.end) {
		writeError(w, http.StatusConflict, fmt.Sprintf("video %q is not completed yet: poll GET /v1/videos/%s until its status is completed", job.id, job.id))
		return
	}
	b := fakeMP4(job.id)
	w.Header().Set("Content-Type", "video/mp4")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// fakeMP4 is an MP4's boxes without a playable stream: an ftyp box and an
// mdat of 4 KiB of bytes that depend on the id.
func fakeMP4(id string) []byte {
	const payload = 4096
	b := make([]byte, 0, 24+8+payload)
	b = binary.BigEndian.AppendUint32(b, 24)
	b = append(b, "ftypisom\x00\x00\x02\x00isommp41"...)
	b = binary.BigEndian.AppendUint32(b, 8+payload)
	b = append(b, "mdat"...)
	rng := rand.New(rand.NewPCG(uint64(len(id)), uint64(unitHash(id)*(1<<53))))
	for range payload / 8 {
		b = binary.LittleEndian.AppendUint64(b, rng.Uint64())
	}
	return b
}
