package relay

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentwire/agentwire/store"
)

// recordingWriter records every Write, so a test sees how a flush reached the connection.
type recordingWriter struct {
	*httptest.ResponseRecorder
	writes [][]byte
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(b))
	return w.ResponseRecorder.Write(b)
}

// TestSSEConnSegments: live frames of one committed batch are written as one slice of the
// batch's buffer; bytes appended after them (a comment, stored frames) and frames of another
// batch keep their order; a frame outside any batch is copied.
func TestSSEConnSegments(t *testing.T) {
	s := &Server{cfg: Config{WriteTimeout: time.Second}, metrics: NewMetrics()}
	batch := func(first, n int64) []*frame {
		evs := make([]store.Event, n)
		for i := range evs {
			seq := first + int64(i)
			evs[i] = store.Event{LogicalSequence: seq, Type: "message.delta", Data: []byte(`{"n":` + strconv.FormatInt(seq, 10) + `}`)}
		}
		return renderFrames(evs, first-1, time.Now())
	}
	text := func(fs ...*frame) string {
		var b strings.Builder
		for _, f := range fs {
			b.Write(f.text)
		}
		return b.String()
	}
	a, b := batch(1, 3), batch(4, 2)
	loose := &frame{seq: 6, prev: 5, text: []byte("id: 6\nevent: x\ndata: {}\n\n")}
	stored := store.Event{LogicalSequence: 7, Type: "run.completed", Data: []byte(`{"s":7}`)}

	for _, tc := range []struct {
		name   string
		steps  func(c *sseConn)
		want   string
		writes int
	}{
		{"one batch is one write", func(c *sseConn) {
			for _, f := range a {
				c.live(f)
			}
		}, text(a...), 1},
		{"two batches are two writes", func(c *sseConn) {
			for _, f := range append(append([]*frame{}, a...), b...) {
				c.live(f)
			}
		}, text(a...) + text(b...), 2},
		{"a comment follows the frames before it", func(c *sseConn) {
			c.live(a[0])
			c.live(a[1])
			c.comment("heartbeat")
			c.live(a[2])
		}, text(a[0], a[1]) + ": heartbeat\n\n" + text(a[2]), 1},
		{"a loose frame is copied in order", func(c *sseConn) {
			for _, f := range append(append([]*frame{}, a...), b...) {
				c.live(f)
			}
			c.live(loose)
		}, text(a...) + text(b...) + string(loose.text), 1},
		{"stored frames follow live ones", func(c *sseConn) {
			c.live(a[0])
			c.stored([]store.Event{stored})
		}, text(a[0]) + "id: 7\nevent: run.completed\ndata: {\"s\":7}\n\n", 1},
		{"a frame at or below the cursor is skipped", func(c *sseConn) {
			c.live(a[0])
			c.live(a[0])
			c.live(a[1])
		}, text(a[0], a[1]), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &recordingWriter{ResponseRecorder: httptest.NewRecorder()}
			c := &sseConn{s: s, w: w, rc: http.NewResponseController(w)}
			tc.steps(c)
			if err := c.flush(); err != nil {
				t.Fatal(err)
			}
			if got := w.Body.String(); got != tc.want {
				t.Errorf("wrote\n%q\nwant\n%q", got, tc.want)
			}
			if len(w.writes) != tc.writes {
				t.Errorf("%d writes, want %d", len(w.writes), tc.writes)
			}
			if len(c.segs) != 0 || len(c.buf) != 0 || len(c.lag) != 0 {
				t.Errorf("flush left segs %d, buf %d, lag %d", len(c.segs), len(c.buf), len(c.lag))
			}
		})
	}
}

// TestCountedHistogram: n observations at once are n observations, in the bucket Prometheus
// would put them in (le: the first upper bound at or above the value).
func TestCountedHistogram(t *testing.T) {
	h := newCountedHistogram("h_seconds", "help", []float64{0.1, 1, 10})
	for _, o := range []struct {
		v float64
		n int
	}{{0.0625, 3}, {0.09375, 1}, {0.5, 2}, {1, 1}, {20, 4}, {5, 0}, {5, -1}} {
		h.observeN(o.v, o.n)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(h)
	want := `# HELP h_seconds help
# TYPE h_seconds histogram
h_seconds_bucket{le="0.1"} 4
h_seconds_bucket{le="1"} 7
h_seconds_bucket{le="10"} 7
h_seconds_bucket{le="+Inf"} 11
h_seconds_sum 82.28125
h_seconds_count 11
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
