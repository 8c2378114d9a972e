package ui

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// Width is how many columns the tables written to w may take: the
// terminal's width when w is a terminal, $COLUMNS (through getenv) when
// the terminal does not say, and 0 (no limit) when w is a file or a pipe,
// so that scripts and logs keep every column.
func Width(w io.Writer, getenv func(string) string) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return 0
	}
	if n := terminalWidth(f); n > 0 {
		return n
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 0
}
