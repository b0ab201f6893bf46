package sqlite

import (
	"context"
	"testing"
	"time"
)

// TestWriterLanes checks the writer's choice between its lanes: a foreground op goes first
// while the background lane has been served recently; a background op goes when no
// foreground op waits, or first once the lane has waited backgroundMaxWait; closed lanes are
// drained before next reports the end.
func TestWriterLanes(t *testing.T) {
	mk := func(n int) (chan writeOp, []writeOp) {
		ch := make(chan writeOp, n)
		ops := make([]writeOp, n)
		for i := range ops {
			ops[i] = &sweepOp{opBase: newOpBase(context.Background())}
			ch <- ops[i]
		}
		return ch, ops
	}
	w := &writer{}
	fg, fgOps := mk(3)
	bg, bgOps := mk(2)

	w.lastBG = time.Now()
	if op, background, ok := w.next(fg, bg); !ok || background || op != fgOps[0] {
		t.Fatalf("recently served background lane: got background=%v, want the first foreground op", background)
	}
	w.lastBG = time.Now().Add(-2 * backgroundMaxWait)
	if op, background, ok := w.next(fg, bg); !ok || !background || op != bgOps[0] {
		t.Fatalf("background lane waiting past backgroundMaxWait: got background=%v, want the first background op", background)
	}
	if time.Since(w.lastBG) > backgroundMaxWait {
		t.Fatal("serving the background lane did not reset its clock")
	}
	for _, want := range fgOps[1:] {
		if op, background, ok := w.next(fg, bg); !ok || background || op != want {
			t.Fatalf("foreground op waiting: got background=%v", background)
		}
	}
	if op, background, ok := w.next(fg, bg); !ok || !background || op != bgOps[1] {
		t.Fatalf("no foreground op waiting: got background=%v, want the second background op", background)
	}
	close(fg)
	late := &sweepOp{opBase: newOpBase(context.Background())}
	bg <- late
	close(bg)
	if op, background, ok := w.next(fg, bg); !ok || !background || op != late {
		t.Fatal("a closed foreground lane must not hide the background ops still queued")
	}
	if _, _, ok := w.next(fg, bg); ok {
		t.Fatal("both lanes closed and drained: next must report the end")
	}
}
