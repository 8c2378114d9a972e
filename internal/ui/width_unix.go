//go:build unix

package ui

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth asks the terminal behind f for its width; 0 when it does
// not answer.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
