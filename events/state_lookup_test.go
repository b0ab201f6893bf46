package events_test

import (
	"bytes"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jsonvalue"
)

// TestKeyedAccessors: after every event of rich runs (and after a decode round trip), each
// keyed accessor answers exactly the entry the whole-list accessor holds at that key, and
// nothing for an unknown key.
func TestKeyedAccessors(t *testing.T) {
	for _, ending := range []synth.Ending{synth.EndingCompleted, synth.EndingFailed, synth.EndingCancelled} {
		data, err := synth.BytesWith(300, 2, synth.Options{Profile: synth.ProfileRich, Ending: ending})
		if err != nil {
			t.Fatal(err)
		}
		s := events.NewReducerState()
		checkKeyed(t, s)
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			e, err := events.ParseEvent(line)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = events.Reduce(s, e); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			if i%7 == 0 {
				checkKeyed(t, s)
			}
		}
		checkKeyed(t, s)
		enc, _ := s.MarshalJSON()
		d, err := events.DecodeReducerState(enc)
		if err != nil {
			t.Fatal(err)
		}
		checkKeyed(t, d)
	}
}

func enc(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonvalue.Canonicalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkKeyed(t *testing.T, s events.ReducerState) {
	t.Helper()
	for i, m := range s.Messages() {
		if got := s.MessageIndex(m.MessageID); got != i {
			t.Fatalf("MessageIndex(%s) = %d, want %d", m.MessageID, got, i)
		}
	}
	for _, m := range s.Messages() {
		if got := s.MessagePartCount(m.MessageID); got != len(m.Content) {
			t.Fatalf("MessagePartCount(%s) = %d, want %d", m.MessageID, got, len(m.Content))
		}
		for _, from := range []int{-1, 0, 1, len(m.Content) / 2, len(m.Content) - 1, len(m.Content), len(m.Content) + 3} {
			got, ok := s.MessageFrom(m.MessageID, from)
			tail := m.Content[min(max(from, 0), len(m.Content)):]
			if !ok || got.MessageID != m.MessageID || got.Role != m.Role || len(got.Content) != len(tail) {
				t.Fatalf("MessageFrom(%s, %d) = %d parts, want %d", m.MessageID, from, len(got.Content), len(tail))
			}
			for j := range tail {
				if got.Content[j].Type != tail[j].Type || enc(t, got.Content[j].Raw) != enc(t, tail[j].Raw) {
					t.Fatalf("MessageFrom(%s, %d) part %d differs", m.MessageID, from, j)
				}
			}
		}
	}
	if _, ok := s.MessageFrom("nope", 0); ok || s.MessagePartCount("nope") != -1 {
		t.Fatal("MessageFrom or MessagePartCount found an unknown id")
	}
	for _, c := range s.ToolCalls() {
		got, ok := s.ToolCall(c.ToolCallID)
		if !ok || enc(t, got.Raw) != enc(t, c.Raw) || got.Name != c.Name {
			t.Fatalf("ToolCall(%s) = %v %v", c.ToolCallID, got, ok)
		}
	}
	for _, p := range s.ToolProgress() {
		got, ok := s.ToolProgressOf(p.ToolCallID)
		if !ok || len(got.Content) != len(p.Content) {
			t.Fatalf("ToolProgressOf(%s) = %v %v", p.ToolCallID, got, ok)
		}
		for j := range p.Content {
			if enc(t, got.Content[j].Raw) != enc(t, p.Content[j].Raw) {
				t.Fatalf("ToolProgressOf(%s) part %d differs", p.ToolCallID, j)
			}
		}
	}
	for _, r := range s.ToolResults() {
		got, ok := s.ToolResult(r.ToolCallID)
		if !ok || enc(t, got.Raw) != enc(t, r.Raw) || (got.IsError == nil) != (r.IsError == nil) {
			t.Fatalf("ToolResult(%s) = %v %v", r.ToolCallID, got, ok)
		}
	}
	for _, r := range s.ToolErrors() {
		got, ok := s.ToolError(r.ToolCallID)
		if !ok || enc(t, got.Raw) != enc(t, r.Raw) || got.Error != r.Error || (got.Code == nil) != (r.Code == nil) {
			t.Fatalf("ToolError(%s) = %v %v", r.ToolCallID, got, ok)
		}
	}
	if s.MessageIndex("nope") != -1 {
		t.Fatal("MessageIndex of an unknown id")
	}
	for _, f := range []func(string) bool{
		func(id string) bool { _, ok := s.ToolCall(id); return ok },
		func(id string) bool { _, ok := s.ToolProgressOf(id); return ok },
		func(id string) bool { _, ok := s.ToolResult(id); return ok },
		func(id string) bool { _, ok := s.ToolError(id); return ok },
	} {
		if f("nope") {
			t.Fatal("a keyed accessor found an unknown id")
		}
	}
}
