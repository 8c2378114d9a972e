package hrtimer

import (
	"context"
	"encoding/binary"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfdWaiter waits on a Linux timerfd read through the runtime's
// poller. Its context's end makes the pending read, and every later one,
// return at once.
type timerfdWaiter struct {
	ctx      context.Context
	f        *os.File
	fd       int
	buf      [8]byte
	unhook   func() bool
	fallback *goWaiter
}

// New returns the platform's most precise Waiter: a timerfd on Linux.
func New(ctx context.Context) Waiter {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newGoWaiter(ctx)
	}
	w := &timerfdWaiter{ctx: ctx, f: os.NewFile(uintptr(fd), "timerfd"), fd: fd, fallback: newGoWaiter(ctx)}
	w.unhook = context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) })
	return w
}

func (w *timerfdWaiter) Until(at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return w.ctx.Err() == nil
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		return w.fallback.Until(at)
	}
	// The read returns the expiry count once the timer fires.
	n, err := w.f.Read(w.buf[:])
	if w.ctx.Err() != nil {
		return false
	}
	if err != nil || n != 8 || binary.NativeEndian.Uint64(w.buf[:]) == 0 {
		return w.fallback.Until(at)
	}
	return true
}

func (w *timerfdWaiter) Stop() {
	w.unhook()
	w.fallback.Stop()
	_ = w.f.Close()
}
