package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
)

// RunParallel runs b.N ops split across writers goroutines; op gets the writer index and
// returns an error to stop the benchmark.
func RunParallel(b *testing.B, writers, batch int, op func(w int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.ReportAllocs()
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(w); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)*float64(batch)/b.Elapsed().Seconds(), "events/s")
}
