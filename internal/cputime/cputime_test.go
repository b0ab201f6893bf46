package cputime_test

import (
	"runtime"
	"testing"

	"github.com/agentwire/agentwire/internal/cputime"
)

func TestProcessAdvances(t *testing.T) {
	before, ok := cputime.Process()
	if !ok {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Fatal("no CPU time on a unix system")
		}
		t.Skip("no CPU time on", runtime.GOOS)
	}
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	after, _ := cputime.Process()
	if after <= before || x == 0 {
		t.Fatalf("CPU time %v → %v after a busy loop", before, after)
	}
}
