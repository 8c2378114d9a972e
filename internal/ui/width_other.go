//go:build !unix

package ui

import "os"

// terminalWidth is 0 where no ioctl asks the terminal: Width then falls
// back to $COLUMNS.
func terminalWidth(*os.File) int { return 0 }
