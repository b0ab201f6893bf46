package bench

import (
	"sync"
	"time"
)

// waitWithin waits for wg, reporting false if it has not finished within d.
func waitWithin(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
