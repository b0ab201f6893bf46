package events_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentwire/agentwire/events"
)

// FuzzReduce feeds NDJSON event streams through ParseEvent and Reduce. It must never panic,
// and it checks the reducer's contract on every step:
//
//   - a refused event returns the input state, whose encoding is unchanged (§8.2, case 59), and
//     the error is a *ReduceError;
//   - applying the same event to an older state (a fork) changes neither state's encoding;
//   - every state satisfies marshal → DecodeReducerState → marshal equality (§8.6), and the
//     decoded state answers the next event exactly like the original (case 61);
//   - every state indents (MarshalIndent), however deep the events it holds.
//
// Seeds live in testdata/fuzz/FuzzReduce (valid runs, refusals, replays and forks).
func FuzzReduce(f *testing.F) {
	f.Add([]byte(`{"type":"run.started","protocolVersion":1,"eventId":"e1","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := events.NewReducerState()
		var older []events.ReducerState
		for _, line := range bytes.Split(data, []byte("\n")) {
			e, err := events.ParseEvent(line)
			if err != nil {
				continue
			}
			before, _ := s.MarshalJSON()
			next, err := events.Reduce(s, e)

			if _, err := s.MarshalIndent("  "); err != nil {
				t.Fatalf("MarshalIndent: %v", err)
			}
			// Case 61: the decoded form of s answers e exactly like s.
			decoded, derr := events.DecodeReducerState(before)
			if derr != nil {
				t.Fatalf("state does not decode: %v\n%s", derr, before)
			}
			if again, _ := decoded.MarshalJSON(); !bytes.Equal(again, before) {
				t.Fatalf("marshal → decode → marshal differs:\n%s\n%s", before, again)
			}
			dnext, derr := events.Reduce(decoded, e)
			if (err == nil) != (derr == nil) || err != nil && err.Error() != derr.Error() {
				t.Fatalf("decoded state answers differently: %v vs %v", err, derr)
			}
			a, _ := next.MarshalJSON()
			b, _ := dnext.MarshalJSON()
			if !bytes.Equal(a, b) {
				t.Fatalf("decoded state reduces differently:\n%s\n%s", a, b)
			}

			if err != nil {
				var re *events.ReduceError
				if !errors.As(err, &re) {
					t.Fatalf("refusal of type %T: %v", err, err)
				}
				if !bytes.Equal(a, before) {
					t.Fatalf("refused Reduce returned another state")
				}
				if now, _ := s.MarshalJSON(); !bytes.Equal(now, before) {
					t.Fatalf("refused Reduce changed its input")
				}
				continue
			}
			// A fork: apply e to a state two steps back; neither s nor next may change.
			if len(older) >= 2 {
				_, _ = events.Reduce(older[len(older)-2], e)
				if now, _ := next.MarshalJSON(); !bytes.Equal(now, a) {
					t.Fatalf("a fork changed a newer state")
				}
			}
			older = append(older, s)
			s = next
		}
	})
}
