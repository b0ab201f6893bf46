//go:build !unix

package cputime

import "time"

// Process is unavailable here: benchmarks then report wall-clock metrics only.
func Process() (d time.Duration, ok bool) { return 0, false }
