//go:build unix

package client

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// alive reports whether an idle connection can still carry a request: the
// server has neither closed it nor sent anything on it (a kept-alive
// connection has nothing to say between responses). It peeks at the
// socket without blocking, one recv call.
func alive(conn net.Conn) bool {
	for {
		switch c := conn.(type) {
		case *tls.Conn:
			conn = c.NetConn()
			continue
		case *countingConn:
			conn = c.Conn
			continue
		}
		break
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read yet: open and quiet. 0 bytes: closed by the
		// server. Data: not a clean idle connection either.
		ok = n < 0 && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
		return true
	})
	return err == nil && ok
}
