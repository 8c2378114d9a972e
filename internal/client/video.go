package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// defaultVideoPoll is how often a video job's status is asked for, as
// AIPerf's AIPERF_HTTP_VIDEO_POLL_INTERVAL (0.1 s).
const defaultVideoPoll = 100 * time.Millisecond

// pollVideo follows a submitted video job to its end: its status is asked
// for every Options.VideoPoll until it is completed or failed, then, with
// Options.DownloadVideo, its content is downloaded. The request's time
// runs from the submission to the end (the download included); the job's
// server figures go into rec.Video. A failed job, a status answer that is
// not one, or a lost job is the request's error.
func (c *Client) pollVideo(a attempt, rec *record.Record, job *endpoint.VideoJob, dec *endpoint.Decoder) {
	clock := c.opts.Clock
	if job == nil || job.ID == "" {
		c.invalid(a, rec, record.CauseNoContent, "the video submission's answer has no job id")
		return
	}
	every := c.opts.VideoPoll
	if every <= 0 {
		every = defaultVideoPoll
	}
	statusURL := strings.TrimRight(c.opts.URL, "/") + "/" + url.PathEscape(job.ID)
	for !job.Finished() {
		t := time.NewTimer(every)
		select {
		case <-a.ctx.Done():
			t.Stop()
			c.fail(a, rec, record.ErrCancelled, 499, "request was cancelled before it completed")
			return
		case <-t.C:
		}
		if !a.deadline.IsZero() && !time.Now().Before(a.deadline) {
			c.fail(a, rec, record.ErrTimeout, 408, "")
			return
		}
		body, status, err := c.get(a.ctx, statusURL)
		if err != nil {
			c.fail(a, rec, record.ErrConnect, 0, fmt.Sprintf("poll video job %s: %v", job.ID, err))
			return
		}
		if status != http.StatusOK {
			c.fail(a, rec, httpErrorType(status), status, fmt.Sprintf("poll video job %s: %s", job.ID, strings.TrimSpace(string(body))))
			return
		}
		dec.Reset()
		ch, err := dec.Response(body)
		if err != nil {
			c.fail(a, rec, parseErrorType(err), 0, fmt.Sprintf("poll video job %s: %v", job.ID, err))
			return
		}
		if ch.Video == nil {
			c.invalid(a, rec, record.CauseNoContent, "a video job's status answer carries no job")
			return
		}
		job = ch.Video
		if msg := dec.Empty(ch); msg != "" {
			c.fail(a, rec, record.ErrServer, 0, msg)
			rec.Video = videoFigures(job)
			return
		}
	}
	rec.Video = videoFigures(job)
	if c.opts.DownloadVideo {
		body, status, err := c.get(a.ctx, statusURL+"/content")
		switch {
		case err != nil:
			c.fail(a, rec, record.ErrConnect, 0, fmt.Sprintf("download video %s: %v", job.ID, err))
			return
		case status != http.StatusOK:
			c.fail(a, rec, httpErrorType(status), status, fmt.Sprintf("download video %s: %s", job.ID, clipText(body)))
			return
		case len(body) == 0:
			c.invalid(a, rec, record.CauseNoContent, "the finished video's content is empty")
			return
		}
	}
	now := clock.Now()
	rec.EndPerf, rec.Trace.LastByte = now, now
	rec.ResponsePerfs = append(rec.ResponsePerfs[:0], now)
	rec.Items = 1
}

// get fetches u with the client's headers (its auth among them).
func (c *Client) get(ctx context.Context, u string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("build GET %s: %w", u, err)
	}
	req.Header = c.header.Clone()
	req.Header.Del("Content-Type")
	req.Header.Set("Accept", "*/*")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	return body, resp.StatusCode, err
}

func videoFigures(j *endpoint.VideoJob) *record.Video {
	return &record.Video{ID: j.ID, InferenceSeconds: j.InferenceSeconds, PeakMemoryMB: j.PeakMemoryMB}
}

func clipText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
