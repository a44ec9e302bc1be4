//go:build !unix

package transcript

import "time"

// processCPU is unavailable here; the cpu-ns/op metric reads zero.
func processCPU() time.Duration { return 0 }
