//go:build !unix

package clientload

import "time"

// processCPU is unknown here: the report then rests on the timer delay.
func processCPU() time.Duration { return 0 }
