package runview_test

import (
	"bytes"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/web/runview"
)

// FuzzApply: for any text, Apply agrees with folding the same non-blank lines through
// ParseEvent and Reduce by hand (same applied count, same refusal message, same state), At of
// the last sequence is the current state, patches keep a page's copy of the messages equal to
// the state's, and ValidateLines lists exactly the lines ParseEvent refuses.
func FuzzApply(f *testing.F) {
	data, _ := synth.BytesWith(60, 1, synth.Options{Profile: synth.ProfileRich})
	lines := bytes.SplitAfter(data, []byte("\n"))
	f.Add(bytes.Join(lines[:6], nil))
	f.Add(append(bytes.Join(lines[:3], nil), lines[1]...))
	f.Add([]byte("{}\n\n[1]\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		s := runview.New(3)
		p := s.Apply(text)
		st := events.NewReducerState()
		applied, refused := 0, ""
		runview.Lines(text, func(_ int, line []byte) bool {
			e, err := events.ParseEvent(line)
			if err == nil {
				var next events.ReducerState
				if next, err = events.Reduce(st, e); err == nil {
					if next.EventCount() > st.EventCount() {
						applied++
					}
					st = next
				}
			}
			if err != nil {
				refused = err.Error()
				return false
			}
			return true
		})
		if p.Applied != applied || (p.Refusal == nil) != (refused == "") || p.Refusal != nil && p.Refusal.Message != refused {
			t.Fatalf("Apply: applied %d refusal %+v; by hand %d %q", p.Applied, p.Refusal, applied, refused)
		}
		a, _ := s.State().MarshalJSON()
		b, _ := st.MarshalJSON()
		if !bytes.Equal(a, b) {
			t.Fatal("states differ")
		}
		at, err := s.At(s.State().LastLogicalSequence())
		if err != nil {
			t.Fatal(err)
		}
		if c, _ := at.MarshalJSON(); !bytes.Equal(c, a) {
			t.Fatal("At(last) differs from the state")
		}
		// The same lines applied in two parts: the second patch sends each message from the
		// parts the first left, and a page kept up to date from the two patches holds the
		// state's messages.
		cut := bytes.IndexByte(text[len(text)/2:], '\n')
		if cut >= 0 {
			cut += len(text) / 2
			s2, mir := runview.New(3), mirror{}
			if p1 := s2.Apply(text[:cut]); p1.Refusal == nil {
				checkPatch(t, p1, s2.State(), mir)
				checkPatch(t, s2.Apply(text[cut:]), s2.State(), mir)
			}
		}
		invalid := 0
		runview.Lines(text, func(_ int, line []byte) bool {
			if _, err := events.ParseEvent(line); err != nil {
				invalid++
			}
			return true
		})
		if len(runview.ValidateLines(text)) != invalid {
			t.Fatal("ValidateLines count")
		}
	})
}
