package events_test

import (
	"bytes"
	"errors"
	"github.com/agentwire/agentwire/internal/cputime"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
)

// The reducer benchmarks of events.md §8.5 and case 62. Run them with, e.g.,
//
//	go test -run='^$' -bench='Reduce|Tokenize' -benchtime=3x -count=3 ./events/
//
// BenchmarkReduceNDJSON100k is the whole consumer path (bytes → ParseEvent → Reduce → final
// snapshot); BenchmarkTokenizeNDJSON100k merely tokenizes the same bytes with jsontext, the
// ceiling any strict consumer is measured against; BenchmarkReduceDeltas shows that Reduce is
// linear in the number of deltas on one message (ns/event stays flat as the count doubles).

const benchEvents = 100_000

var (
	benchOnce sync.Once
	benchRun  []byte
	benchErr  error
)

// cpuClock sums process CPU time over the timed regions of a benchmark (see cputime.Process).
type cpuClock struct {
	total, start time.Duration
	ok           bool
}

func (c *cpuClock) startTimer(b *testing.B) {
	b.StartTimer()
	c.start, c.ok = cputime.Process()
}

func (c *cpuClock) stopTimer(b *testing.B) {
	if now, ok := cputime.Process(); ok && c.ok {
		c.total += now - c.start
	}
	b.StopTimer()
}

// report adds the cpu-ns/event metric (CPU time of the timed regions per event).
func (c *cpuClock) report(b *testing.B, events int) {
	if c.ok {
		b.ReportMetric(float64(c.total.Nanoseconds())/float64(events), "cpu-ns/event")
	}
}

// run100k is a 100k-event synthetic run, generated once per process.
func run100k(b *testing.B) []byte {
	benchOnce.Do(func() { benchRun, benchErr = synth.Bytes(benchEvents, 1, "") })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRun
}

// eachLine calls fn for every non-empty line of data.
func eachLine(data []byte, fn func([]byte) error) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > 0 {
			if err := fn(data[:i]); err != nil {
				return err
			}
		}
		data = data[min(i+1, len(data)):]
	}
	return nil
}

// bench100k times fn over the 100k-event run b.N times and reports throughput (bytes and
// events/s) and cpu-ns/event.
func bench100k(b *testing.B, fn func(data []byte)) {
	data := run100k(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.StopTimer()
	b.ResetTimer()
	var clock cpuClock
	for i := 0; i < b.N; i++ {
		clock.startTimer(b)
		fn(data)
		clock.stopTimer(b)
	}
	b.ReportMetric(float64(benchEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	clock.report(b, benchEvents*b.N)
}

func BenchmarkReduceNDJSON100k(b *testing.B) {
	var snapshot []byte
	bench100k(b, func(data []byte) {
		s := events.NewReducerState()
		err := eachLine(data, func(line []byte) error {
			e, err := events.ParseEvent(line)
			if err != nil {
				return err
			}
			s, err = events.Reduce(s, e)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		snapshot = s.AppendJSON(snapshot[:0])
	})
	if len(snapshot) == 0 {
		b.Fatal("empty snapshot")
	}
}

func BenchmarkTokenizeNDJSON100k(b *testing.B) {
	bench100k(b, func(data []byte) {
		dec := jsontext.NewDecoder(bytes.NewReader(data))
		tokens := 0
		for {
			_, err := dec.ReadToken()
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				b.Fatal(err)
			}
			tokens++
		}
		if tokens == 0 {
			b.Fatal("no tokens")
		}
	})
}

// BenchmarkParseNDJSON100k is the ParseEvent share of BenchmarkReduceNDJSON100k: the same
// lines parsed, validated and fingerprinted, the events dropped.
func BenchmarkParseNDJSON100k(b *testing.B) {
	bench100k(b, func(data []byte) {
		if err := eachLine(data, func(line []byte) error {
			_, err := events.ParseEvent(line)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkReduceOnly100k is the Reduce share of BenchmarkReduceNDJSON100k: the same run,
// parsed outside the timer.
func BenchmarkReduceOnly100k(b *testing.B) {
	data := run100k(b)
	var es []events.Event
	if err := eachLine(data, func(line []byte) error {
		e, err := events.ParseEvent(line)
		es = append(es, e)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.StopTimer()
	b.ResetTimer()
	var clock cpuClock
	for i := 0; i < b.N; i++ {
		clock.startTimer(b)
		if _, err := events.ReduceAll(es); err != nil {
			b.Fatal(err)
		}
		clock.stopTimer(b)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(es)*b.N), "ns/event")
	clock.report(b, len(es)*b.N)
}

// deltaLine is the text of the n-th event of the delta stream: start (1), message.started (2),
// deltas, run.completed (last).
func deltaLine(dst []byte, n, deltas int) []byte {
	dst = append(dst, `{"type":`...)
	switch {
	case n == 1:
		dst = append(dst, `"run.started"`...)
	case n == 2:
		dst = append(dst, `"message.started","messageId":"m-1","role":"assistant"`...)
	case n == deltas+3:
		dst = append(dst, `"run.completed","finishReason":"stop","content":[]`...)
	default:
		dst = append(dst, `"message.part.delta","messageId":"m-1","part":{"type":"text","text":"tok`...)
		dst = strconv.AppendInt(dst, int64(n%1000), 10)
		dst = append(dst, ` "}`...)
	}
	dst = append(dst, `,"protocolVersion":1,"eventId":"run-1:`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"sequence":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, `,"timestamp":"2025-01-01T00:00:00.000Z"}`...)
}

// BenchmarkReduceDeltas reduces start + message.started + N deltas on that one message +
// run.completed (case 62). Events are parsed in chunks with the timer stopped, so the timer
// measures Reduce alone and memory holds one chunk of events at a time; ns/event must stay
// flat as N doubles.
func BenchmarkReduceDeltas(b *testing.B) {
	for _, deltas := range []int{250_000, 500_000, 1_000_000} {
		b.Run(strconv.Itoa(deltas/1000)+"k", func(b *testing.B) {
			total := deltas + 3
			const chunk = 16_384
			chunkEvents := make([]events.Event, 0, chunk)
			var line []byte
			var clock cpuClock
			b.ReportAllocs()
			b.StopTimer()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := events.NewReducerState()
				for from := 1; from <= total; from += chunk {
					chunkEvents = chunkEvents[:0]
					for n := from; n < from+chunk && n <= total; n++ {
						line = deltaLine(line[:0], n, deltas)
						e, err := events.ParseEvent(line)
						if err != nil {
							b.Fatal(err)
						}
						chunkEvents = append(chunkEvents, e)
					}
					clock.startTimer(b)
					for _, e := range chunkEvents {
						var err error
						if s, err = events.Reduce(s, e); err != nil {
							b.Fatal(err)
						}
					}
					clock.stopTimer(b)
				}
				if s.Status() != events.StatusCompleted {
					b.Fatal("run not completed")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total*b.N), "ns/event")
			clock.report(b, total*b.N)
		})
	}
}

// BenchmarkDecodeState100k decodes the final state of the 100k-event run (what the relay does
// when it loads a run's checkpoint), including the depth check of every value the state holds.
func BenchmarkDecodeState100k(b *testing.B) {
	data := run100k(b)
	s := events.NewReducerState()
	if err := eachLine(data, func(line []byte) error {
		e, err := events.ParseEvent(line)
		if err == nil {
			s, err = events.Reduce(s, e)
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	snap := s.AppendJSON(nil)
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := events.DecodeReducerState(snap); err != nil {
			b.Fatal(err)
		}
	}
}
