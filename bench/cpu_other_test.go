//go:build !unix

package bench

import "time"

// processCPU is unavailable here; benchmarks then report wall-clock metrics only.
func processCPU() (time.Duration, bool) { return 0, false }
