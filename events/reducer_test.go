package events_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// ---- event builders ----

// ev builds a valid event of type typ whose eventId is run-1:<n>, logicalSequence and
// sequence n, in run run-1, session s-1, phase p-1. kv are payload members, then overrides of
// envelope members (a later pair replaces an earlier one in place).
func ev(t testing.TB, n int, typ string, kv ...any) events.Event {
	t.Helper()
	o := jsonvalue.ObjectOf(
		"type", typ,
		"protocolVersion", 1.0,
		"eventId", fmt.Sprintf("run-1:%d", n),
		"runId", "run-1",
		"sessionId", "s-1",
		"phaseId", "p-1",
		"logicalSequence", float64(n),
		"sequence", float64(n),
		"timestamp", fmt.Sprintf("2025-01-01T00:00:%02d.000Z", n%60),
	)
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	e, err := events.CloneEvent(o)
	if err != nil {
		t.Fatalf("building %s event %d: %v", typ, n, err)
	}
	return e
}

func parse(t testing.TB, text string) events.Event {
	t.Helper()
	e, err := events.ParseEvent([]byte(text))
	if err != nil {
		t.Fatalf("ParseEvent(%s): %v", text, err)
	}
	return e
}

func obj(kv ...any) *jsonvalue.Object { return jsonvalue.ObjectOf(kv...) }

func text(s string) *jsonvalue.Object { return obj("type", "text", "text", s) }

func call(id string) *jsonvalue.Object {
	return obj("toolCallId", id, "name", "weather", "input", obj("city", "Oslo"))
}

func result(id string) *jsonvalue.Object {
	return obj("toolCallId", id, "name", "weather", "input", obj("city", "Oslo"), "output", obj("tempC", -3.0))
}

func toolError(id string, code string) *jsonvalue.Object {
	return obj("toolCallId", id, "name", "weather", "input", obj("city", "Oslo"), "error", "boom", "code", code)
}

func interrupt(id string) *jsonvalue.Object {
	return obj("kind", "tool-approval", "interruptId", id, "prompt", "Tool execution requires approval.",
		"actions", []any{obj("id", "a-1", "name", "weather", "input", obj("city", "Oslo"))})
}

// Named events of a conventional run; each takes the sequence number.
func start(t testing.TB, n int) events.Event { return ev(t, n, "run.started") }
func msgStarted(t testing.TB, n int, id string) events.Event {
	return ev(t, n, "message.started", "messageId", id, "role", "assistant")
}
func delta(t testing.TB, n int, id, s string) events.Event {
	return ev(t, n, "message.part.delta", "messageId", id, "part", text(s))
}
func completed(t testing.TB, n int, kv ...any) events.Event {
	return ev(t, n, "run.completed", append([]any{"finishReason", "stop", "content", []any{}}, kv...)...)
}

func mustReduce(t testing.TB, s events.ReducerState, es ...events.Event) events.ReducerState {
	t.Helper()
	for i, e := range es {
		var err error
		if s, err = events.Reduce(s, e); err != nil {
			t.Fatalf("event %d (%s %s): %v", i, e.Type(), e.EventID(), err)
		}
	}
	return s
}

func marshal(t testing.TB, s events.ReducerState) string {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !jsonvalue.Valid(b) {
		t.Fatalf("state marshals to invalid JSON: %s", b)
	}
	return string(b)
}

// member returns the encoding of one top-level member of the state's JSON form.
func member(t testing.TB, s events.ReducerState, name string) string {
	t.Helper()
	o, err := s.Value()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := o.Get(name)
	if !ok {
		t.Fatalf("state has no member %s", name)
	}
	return string(jsonvalue.AppendEncoded(nil, v))
}

// ---- tests ----

const initialJSON = `{"protocolVersion":null,"runId":null,"sessionId":null,"status":"idle","messages":[],` +
	`"toolCalls":[],"toolProgress":[],"toolResults":[],"toolErrors":[],"interrupt":null,` +
	`"interruptResolution":null,"usage":null,"limit":null,"finishReason":null,"errorCode":null,` +
	`"cancellationReason":null,"lastSequence":0,"lastLogicalSequence":0,"lastPhaseId":null,` +
	`"eventIds":[],"eventFingerprints":{}}`

func TestInitialState(t *testing.T) {
	for name, s := range map[string]events.ReducerState{"NewReducerState": events.NewReducerState(), "zero": {}} {
		if got := marshal(t, s); got != initialJSON {
			t.Errorf("%s marshals to\n%s\nwant\n%s", name, got, initialJSON)
		}
		if s.Status() != events.StatusIdle || s.EventCount() != 0 || s.IsTerminal() {
			t.Errorf("%s: unexpected accessors", name)
		}
		if _, ok := s.RunID(); ok {
			t.Errorf("%s: runId should be null", name)
		}
	}
}

func TestReduceZeroEvent(t *testing.T) {
	for _, s := range []events.ReducerState{events.NewReducerState(), mustReduce(t, events.NewReducerState(), start(t, 1))} {
		before := marshal(t, s)
		got, err := events.Reduce(s, events.Event{})
		var je *events.JSONValidationError
		if !errors.As(err, &je) || err.Error() != "Agent event must be a JSON object." {
			t.Fatalf("Reduce(zero Event) error = %#v", err)
		}
		if marshal(t, got) != before || marshal(t, s) != before {
			t.Fatal("zero Event changed the state")
		}
	}
}

// TestReduceRefusals covers every refusal message of events.md §8.3–§8.4 (cases 40–44, 47–53)
// and case 59: the refused Reduce returns the input state, which marshals identically before
// and after.
func TestReduceRefusals(t *testing.T) {
	s0 := events.NewReducerState()
	running := func(t *testing.T) events.ReducerState { return mustReduce(t, s0, start(t, 1)) }
	decodedPV2 := func(t *testing.T) events.ReducerState {
		b := strings.Replace(marshal(t, running(t)), `"protocolVersion":1`, `"protocolVersion":2`, 1)
		s, err := events.DecodeReducerState([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) events.ReducerState
		event func(t *testing.T) events.Event
		want  string
	}{
		{"40 stream must begin with run.started", func(t *testing.T) events.ReducerState { return s0 },
			func(t *testing.T) events.Event { return msgStarted(t, 1, "m") },
			"Agent event stream must begin with run.started."},
		{"40 terminal first event", func(t *testing.T) events.ReducerState { return s0 },
			func(t *testing.T) events.Event { return completed(t, 1) },
			"Agent event stream must begin with run.started."},
		{"41 logical sequence equal", running,
			func(t *testing.T) events.Event {
				return ev(t, 2, "message.started", "messageId", "m", "role", "user", "logicalSequence", 1.0)
			},
			"Agent event logical sequence must increase monotonically."},
		{"41 logical sequence lower in a new phase", running,
			func(t *testing.T) events.Event {
				return ev(t, 2, "usage.updated", "usage", obj(), "logicalSequence", 0.0, "phaseId", "p-2")
			},
			"Agent event logical sequence must increase monotonically."},
		{"41 first event needs logical sequence ≥ 1", func(t *testing.T) events.ReducerState { return s0 },
			func(t *testing.T) events.Event { return ev(t, 0, "run.started") },
			"Agent event logical sequence must increase monotonically."},
		{"42 sequence equal in the same phase", running,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj(), "sequence", 1.0) },
			"Agent event sequence must increase within a phase."},
		{"42 sequence lower in the same phase", running,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj(), "sequence", 0.0) },
			"Agent event sequence must increase within a phase."},
		{"43 after completed", func(t *testing.T) events.ReducerState { return mustReduce(t, s0, start(t, 1), completed(t, 2)) },
			func(t *testing.T) events.Event { return msgStarted(t, 3, "m") },
			"Agent event cannot be applied after the run is terminal."},
		{"43 after completed, new phase", func(t *testing.T) events.ReducerState { return mustReduce(t, s0, start(t, 1), completed(t, 2)) },
			func(t *testing.T) events.Event { return ev(t, 3, "run.started", "phaseId", "p-2", "sequence", 1.0) },
			"Agent event cannot be applied after the run is terminal."},
		{"43 after failed", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "run.failed", "code", "x", "message", "y"))
		},
			func(t *testing.T) events.Event { return ev(t, 3, "usage.updated", "usage", obj()) },
			"Agent event cannot be applied after the run is terminal."},
		{"43 after cancelled, other run ID checked later", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "run.cancelled"))
		},
			func(t *testing.T) events.Event { return ev(t, 3, "usage.updated", "usage", obj(), "runId", "other") },
			"Agent event cannot be applied after the run is terminal."},
		{"44 same ID, different timestamp", running,
			func(t *testing.T) events.Event {
				return ev(t, 1, "run.started", "timestamp", "2025-01-01T00:00:09.000Z")
			},
			"Agent event ID was reused for different event data."},
		{"44 same ID reused after terminal", func(t *testing.T) events.ReducerState { return mustReduce(t, s0, start(t, 1), completed(t, 2)) },
			func(t *testing.T) events.Event { return ev(t, 1, "usage.updated", "usage", obj()) },
			"Agent event ID was reused for different event data."},
		{"44 ID named constructor reused", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, ev(t, 1, "run.started", "eventId", "constructor"))
		},
			func(t *testing.T) events.Event {
				return ev(t, 2, "usage.updated", "usage", obj(), "eventId", "constructor")
			},
			"Agent event ID was reused for different event data."},
		{"47 run ID", running,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj(), "runId", "run-2") },
			"Agent event run ID does not match reducer state."},
		{"47 session ID", running,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj(), "sessionId", "s-2") },
			"Agent event session ID does not match reducer state."},
		{"47 run ID checked before session ID and sequences", running,
			func(t *testing.T) events.Event {
				return ev(t, 2, "usage.updated", "usage", obj(), "runId", "r", "sessionId", "s", "logicalSequence", 0.0)
			},
			"Agent event run ID does not match reducer state."},
		{"48 protocol version of a decoded state", decodedPV2,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj()) },
			"Agent event protocol version does not match reducer state."},
		{"48 protocol version checked before session ID", decodedPV2,
			func(t *testing.T) events.Event { return ev(t, 2, "usage.updated", "usage", obj(), "sessionId", "s-9") },
			"Agent event protocol version does not match reducer state."},
		{"49 delta for an unknown message", running,
			func(t *testing.T) events.Event { return delta(t, 2, "m", "Hi") },
			"Message delta has no started message."},
		{"50 result for an unknown call", running,
			func(t *testing.T) events.Event { return ev(t, 2, "tool.completed", "result", result("c-1")) },
			"Tool result has no known tool call."},
		{"50 progress for an unknown call", running,
			func(t *testing.T) events.Event {
				return ev(t, 2, "tool.progress", "toolCallId", "c-1", "content", []any{text("…")})
			},
			"Tool progress has no known tool call."},
		{"50 error for an unknown call", running,
			func(t *testing.T) events.Event { return ev(t, 2, "tool.failed", "error", toolError("c-1", "x")) },
			"Tool error has no known tool call."},
		{"50 a message ID is not a tool call", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "c-1"))
		},
			func(t *testing.T) events.Event { return ev(t, 3, "tool.completed", "result", result("c-1")) },
			"Tool result has no known tool call."},
		{"51 tool call ID reused with different input", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "tool.called", "toolCall", call("c-1")))
		},
			func(t *testing.T) events.Event {
				return ev(t, 3, "tool.called", "toolCall", obj("toolCallId", "c-1", "name", "weather", "input", obj("city", "Bergen")))
			},
			"Tool call ID was reused for different tool data."},
		{"51 tool call ID reused with an extra member", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "tool.called", "toolCall", call("c-1")))
		},
			func(t *testing.T) events.Event {
				c := call("c-1")
				c.Set("extra", true)
				return ev(t, 3, "tool.called", "toolCall", c)
			},
			"Tool call ID was reused for different tool data."},
		{"52 run.started while running", running,
			func(t *testing.T) events.Event { return ev(t, 2, "run.started") },
			"Run can only start from idle or waiting state."},
		{"53 second interrupt", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")))
		},
			func(t *testing.T) events.Event { return ev(t, 3, "interrupt.required", "interrupt", interrupt("i-2")) },
			"An interrupt is already pending."},
		{"53 resolution with another ID", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")))
		},
			func(t *testing.T) events.Event {
				return ev(t, 3, "interrupt.resolved", "interruptId", "i-2", "decisions", []any{})
			},
			"Interrupt resolution does not match the pending interrupt."},
		{"53 resolution with none pending", running,
			func(t *testing.T) events.Event {
				return ev(t, 2, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{})
			},
			"Interrupt resolution does not match the pending interrupt."},
		{"53 resolution after the interrupt was resolved", func(t *testing.T) events.ReducerState {
			return mustReduce(t, s0, start(t, 1), ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")),
				ev(t, 3, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{}))
		},
			func(t *testing.T) events.Event {
				return ev(t, 4, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{})
			},
			"Interrupt resolution does not match the pending interrupt."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup(t)
			e := tc.event(t)
			before := marshal(t, s)
			got, err := events.Reduce(s, e)
			var re *events.ReduceError
			if !errors.As(err, &re) {
				t.Fatalf("error = %v (%T), want *ReduceError", err, err)
			}
			if err.Error() != tc.want {
				t.Fatalf("error = %q\nwant    %q", err.Error(), tc.want)
			}
			// Case 59: the input state comes back and is unchanged.
			if marshal(t, got) != before {
				t.Fatal("refused Reduce returned a different state")
			}
			if marshal(t, s) != before {
				t.Fatal("refused Reduce changed its input state")
			}
		})
	}
}

// TestReduceScenarios covers the accepting cases 39, 42, 45, 46, 49, 51, 52, 54–58.
func TestReduceScenarios(t *testing.T) {
	s0 := events.NewReducerState()

	t.Run("39 basic run and exact re-application", func(t *testing.T) {
		last := completed(t, 4)
		s := mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "Hello"), last)
		if s.Status() != events.StatusCompleted {
			t.Fatalf("status %s", s.Status())
		}
		if got := member(t, s, "messages"); got != `[{"messageId":"m","role":"assistant","content":[{"type":"text","text":"Hello"}]}]` {
			t.Fatalf("messages = %s", got)
		}
		again, err := events.Reduce(s, last)
		if err != nil || marshal(t, again) != marshal(t, s) {
			t.Fatalf("re-applying the last event: %v", err)
		}
	})

	t.Run("42 new phase restarts sequence", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "m"),
			ev(t, 3, "usage.updated", "usage", obj(), "phaseId", "p-2", "sequence", 1.0))
		if got := member(t, s, "lastPhaseId") + member(t, s, "lastSequence") + member(t, s, "lastLogicalSequence"); got != `"p-2"13` {
			t.Fatalf("last* = %s", got)
		}
		// A different phase accepts any sequence, even 0 and lower ones.
		s = mustReduce(t, s, ev(t, 4, "usage.updated", "usage", obj(), "phaseId", "p-1", "sequence", 0.0))
		if s.LastSequence() != 0 || s.LastLogicalSequence() != 4 {
			t.Fatalf("sequence %v logical %v", s.LastSequence(), s.LastLogicalSequence())
		}
	})

	t.Run("45 same members in a different order are an exact duplicate", func(t *testing.T) {
		a := parse(t, `{"type":"message.part.delta","messageId":"m","part":{"type":"text","text":"Hel"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`)
		b := parse(t, `{"timestamp":"2025-01-01T00:00:00.200Z","sequence":3,"logicalSequence":3,"phaseId":"p-1","sessionId":"s-1","runId":"run-1","eventId":"run-1:3","protocolVersion":1,"part":{"text":"Hel","type":"text"},"messageId":"m","type":"message.part.delta"}`)
		s := mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "m"), a)
		got, err := events.Reduce(s, b)
		if err != nil || marshal(t, got) != marshal(t, s) {
			t.Fatalf("reordered duplicate: %v", err)
		}
	})

	t.Run("46 replaying an earlier event is a no-op", func(t *testing.T) {
		es := []events.Event{start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "a"), delta(t, 4, "m", "b")}
		s := mustReduce(t, s0, es...)
		for _, e := range es {
			got, err := events.Reduce(s, e)
			if err != nil || marshal(t, got) != marshal(t, s) {
				t.Fatalf("replay of %s: %v", e.EventID(), err)
			}
		}
		// Also after the run is terminal.
		s = mustReduce(t, s, completed(t, 5))
		for _, e := range es {
			if _, err := events.Reduce(s, e); err != nil {
				t.Fatalf("replay after terminal of %s: %v", e.EventID(), err)
			}
		}
	})

	t.Run("49 delta after message.completed is appended", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "a"),
			ev(t, 4, "message.completed", "messageId", "m", "role", "assistant", "content", []any{text("ab")}),
			delta(t, 5, "m", "c"))
		if got := member(t, s, "messages"); got != `[{"messageId":"m","role":"assistant","content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]}]` {
			t.Fatalf("messages = %s", got)
		}
	})

	t.Run("51 identical tool call under a new event ID", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1), ev(t, 2, "tool.called", "toolCall", call("c-1")))
		before := member(t, s, "toolCalls")
		// Same record with members in another order: equal canonical form.
		reordered := obj("input", obj("city", "Oslo"), "name", "weather", "toolCallId", "c-1")
		s = mustReduce(t, s, ev(t, 3, "tool.called", "toolCall", reordered))
		if got := member(t, s, "toolCalls"); got != before {
			t.Fatalf("toolCalls changed: %s", got)
		}
		if s.EventCount() != 3 || s.LastLogicalSequence() != 3 {
			t.Fatal("the event itself must still be applied")
		}
	})

	t.Run("52 run.started while waiting", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1), ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")))
		if s.Status() != events.StatusWaiting {
			t.Fatalf("status %s", s.Status())
		}
		s = mustReduce(t, s, ev(t, 3, "run.started", "phaseId", "p-2", "sequence", 1.0))
		if s.Status() != events.StatusRunning {
			t.Fatalf("status %s", s.Status())
		}
		if in, ok := s.Interrupt(); !ok || in.InterruptID != "i-1" {
			t.Fatal("interrupt must stay pending")
		}
		s = mustReduce(t, s, ev(t, 4, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{true}, "phaseId", "p-2", "sequence", 2.0))
		if s.Status() != events.StatusRunning || member(t, s, "interrupt") != "null" {
			t.Fatal("resolution after restart")
		}
	})

	t.Run("54 tools, progress, interrupt, limit", func(t *testing.T) {
		limit := obj("kind", "steps", "limit", 10.0, "used", 10.0)
		s := mustReduce(t, s0, start(t, 1),
			ev(t, 2, "tool.called", "toolCall", call("c-1")),
			ev(t, 3, "tool.progress", "toolCallId", "c-1", "content", []any{text("working")}),
			ev(t, 4, "interrupt.required", "interrupt", interrupt("i-1")),
			ev(t, 5, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{obj("approvalId", "a-1", "approved", true)}),
			ev(t, 6, "tool.completed", "result", result("c-1")),
			completed(t, 7, "limit", limit))
		want := map[string]string{
			"status":              `"completed"`,
			"toolProgress":        `[{"toolCallId":"c-1","content":[{"type":"text","text":"working"}]}]`,
			"interrupt":           `null`,
			"interruptResolution": `{"interruptId":"i-1","decisions":[{"approvalId":"a-1","approved":true}]}`,
			"limit":               `{"kind":"steps","limit":10,"used":10}`,
			"toolResults":         `[{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"output":{"tempC":-3}}]`,
			"finishReason":        `"stop"`,
		}
		for name, w := range want {
			if got := member(t, s, name); got != w {
				t.Errorf("%s = %s, want %s", name, got, w)
			}
		}
	})

	t.Run("55 messages, upserts and tool errors", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1),
			msgStarted(t, 2, "a"), msgStarted(t, 3, "b"),
			delta(t, 4, "a", "x"), delta(t, 5, "a", "y"), delta(t, 6, "b", "z"),
			ev(t, 7, "message.completed", "messageId", "a", "role", "assistant", "content", []any{text("xy!")}),
			ev(t, 8, "message.started", "messageId", "b", "role", "tool"),
			ev(t, 9, "message.completed", "messageId", "c", "role", "user", "content", []any{}),
			ev(t, 10, "tool.called", "toolCall", call("c-1")),
			ev(t, 11, "tool.completed", "result", result("c-1")),
			ev(t, 12, "tool.failed", "error", toolError("c-1", "tool_timeout")),
			ev(t, 13, "tool.failed", "error", toolError("c-1", "tool_execution_failed")),
			ev(t, 14, "tool.progress", "toolCallId", "c-1", "content", []any{text("1")}),
			ev(t, 15, "tool.progress", "toolCallId", "c-1", "content", []any{text("2")}),
		)
		if got := member(t, s, "messages"); got != `[{"messageId":"a","role":"assistant","content":[{"type":"text","text":"xy!"}]},{"messageId":"b","role":"tool","content":[]},{"messageId":"c","role":"user","content":[]}]` {
			t.Errorf("messages = %s", got)
		}
		if got := member(t, s, "toolErrors"); got != `[{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"error":"boom","code":"tool_execution_failed"}]` {
			t.Errorf("toolErrors = %s", got)
		}
		if got := member(t, s, "toolProgress"); got != `[{"toolCallId":"c-1","content":[{"type":"text","text":"2"}]}]` {
			t.Errorf("toolProgress = %s", got)
		}
		if n := len(s.ToolResults()); n != 1 {
			t.Errorf("a call may be in both lists: %d results", n)
		}
		if errs := s.ToolErrors(); len(errs) != 1 || errs[0].Code == nil || *errs[0].Code != "tool_execution_failed" {
			t.Errorf("ToolErrors() = %+v", errs)
		}
	})

	t.Run("56 failed and cancelled", func(t *testing.T) {
		f := mustReduce(t, s0, start(t, 1), ev(t, 2, "run.failed", "code", "agent_step_limit", "message", "too many", "limit", obj("kind", "steps")))
		if f.Status() != events.StatusFailed || member(t, f, "errorCode") != `"agent_step_limit"` || member(t, f, "limit") != `{"kind":"steps"}` {
			t.Errorf("failed: %s", marshal(t, f))
		}
		c := mustReduce(t, s0, start(t, 1), ev(t, 2, "run.cancelled"))
		if c.Status() != events.StatusCancelled || member(t, c, "cancellationReason") != "null" || member(t, c, "limit") != "null" {
			t.Errorf("cancelled: %s", marshal(t, c))
		}
		c = mustReduce(t, s0, start(t, 1), ev(t, 2, "run.cancelled", "reason", "user"))
		if r, ok := c.CancellationReason(); !ok || r != "user" {
			t.Errorf("cancellation reason %q %v", r, ok)
		}
	})

	t.Run("57 usage replaced wholesale, kept by run.completed without usage", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1),
			ev(t, 2, "usage.updated", "usage", obj("inputTokens", 5.0)),
			ev(t, 3, "usage.updated", "usage", obj("outputTokens", 2.0)),
			completed(t, 4))
		if got := member(t, s, "usage"); got != `{"outputTokens":2}` {
			t.Fatalf("usage = %s", got)
		}
		s = mustReduce(t, s0, start(t, 1), ev(t, 2, "usage.updated", "usage", obj("inputTokens", 5.0)),
			completed(t, 3, "usage", obj("totalTokens", 9.0)))
		if got := member(t, s, "usage"); got != `{"totalTokens":9}` {
			t.Fatalf("usage = %s", got)
		}
	})

	t.Run("58 event IDs named like prototype members", func(t *testing.T) {
		for _, id := range []string{"constructor", "__proto__", "toString", "hasOwnProperty"} {
			s := mustReduce(t, s0, ev(t, 1, "run.started", "eventId", id), ev(t, 2, "usage.updated", "usage", obj(), "eventId", id+"x"))
			if fp, ok := s.Fingerprint(id); !ok || !strings.HasPrefix(fp, "sha256:") {
				t.Fatalf("%s not recorded", id)
			}
		}
	})

	t.Run("run.completed with a pending interrupt keeps it", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1), ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")), completed(t, 3))
		if s.Status() != events.StatusCompleted || member(t, s, "interrupt") == "null" {
			t.Fatal("interrupt must stay")
		}
	})

	t.Run("interrupt.required clears the previous resolution", func(t *testing.T) {
		s := mustReduce(t, s0, start(t, 1),
			ev(t, 2, "interrupt.required", "interrupt", interrupt("i-1")),
			ev(t, 3, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{}),
			ev(t, 4, "interrupt.required", "interrupt", interrupt("")))
		if member(t, s, "interruptResolution") != "null" || s.Status() != events.StatusWaiting {
			t.Fatal("resolution must be cleared")
		}
		s = mustReduce(t, s, ev(t, 5, "interrupt.resolved", "interruptId", "", "decisions", []any{nil, "x"}))
		if got := member(t, s, "interruptResolution"); got != `{"interruptId":"","decisions":[null,"x"]}` {
			t.Fatalf("interruptResolution = %s", got)
		}
	})

	t.Run("unknown members retained in records and parts", func(t *testing.T) {
		part := obj("type", "text", "text", "a", "x-extra", []any{1.0})
		c := call("c-1")
		c.Set("meta", obj("k", nil))
		s := mustReduce(t, s0, start(t, 1), msgStarted(t, 2, "m"),
			ev(t, 3, "message.part.delta", "messageId", "m", "part", part, "unknown", true),
			ev(t, 4, "tool.called", "toolCall", c))
		if got := member(t, s, "messages"); !strings.Contains(got, `"x-extra":[1]`) {
			t.Errorf("messages = %s", got)
		}
		if got := member(t, s, "toolCalls"); !strings.Contains(got, `"meta":{"k":null}`) {
			t.Errorf("toolCalls = %s", got)
		}
	})
}

// TestFingerprints is case 60: every fingerprint matches ^sha256:[0-9a-f]{64}$ and the §3.7
// example events give the fingerprints stated there.
func TestFingerprints(t *testing.T) {
	startText := `{"type":"run.started","protocolVersion":1,"eventId":"run-1:1","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":1,"sequence":1,"timestamp":"2025-01-01T00:00:00.000Z"}`
	msgText := `{"type":"message.started","messageId":"m-1","role":"assistant","protocolVersion":1,"eventId":"run-1:2","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":2,"sequence":2,"timestamp":"2025-01-01T00:00:00.100Z"}`
	deltaText := `{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hel"},
 "protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1",
 "phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`
	s := mustReduce(t, events.NewReducerState(), parse(t, startText), parse(t, msgText), parse(t, deltaText))
	want := map[string]string{
		"run-1:1": "sha256:5b0830f8bccf9e1202b0342e79b1d092e17a156ad09a598c9ba62150157f75d4",
		"run-1:3": "sha256:2dd49398fc79c44a811403fa8d36fc9516cb13e528e1aa8fe636717867aa684a",
	}
	for id, w := range want {
		if got, ok := s.Fingerprint(id); !ok || got != w {
			t.Errorf("Fingerprint(%s) = %s, want %s", id, got, w)
		}
	}
	if _, ok := s.Fingerprint("run-1:9"); ok {
		t.Error("Fingerprint of an unknown ID")
	}
	re := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	o, _ := s.Value()
	fps, _ := o.Get("eventFingerprints")
	for _, m := range fps.(*jsonvalue.Object).Members() {
		if !re.MatchString(m.Value.(string)) {
			t.Errorf("fingerprint of %s = %v", m.Name, m.Value)
		}
	}
	if got := member(t, s, "eventIds"); got != `["run-1:1","run-1:2","run-1:3"]` {
		t.Errorf("eventIds = %s", got)
	}
	if got := strings.Join(fps.(*jsonvalue.Object).Keys(), ","); got != "run-1:1,run-1:2,run-1:3" {
		t.Errorf("eventFingerprints order = %s", got)
	}
}

func TestReduceAll(t *testing.T) {
	es := []events.Event{start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "x"), completed(t, 4)}
	s, err := events.ReduceAll(es)
	if err != nil || s.Status() != events.StatusCompleted || s.EventCount() != 4 {
		t.Fatalf("ReduceAll: %v", err)
	}
	bad := append(es[:3:3], delta(t, 4, "nope", "x"), completed(t, 5))
	s, err = events.ReduceAll(bad)
	var re *events.ReduceError
	if !errors.As(err, &re) || err.Error() != "Message delta has no started message." {
		t.Fatalf("error = %v", err)
	}
	if marshal(t, s) != initialJSON {
		t.Fatal("ReduceAll must return the initial state on error")
	}
	if s, err := events.ReduceAll(nil); err != nil || marshal(t, s) != initialJSON {
		t.Fatal("ReduceAll(nil)")
	}
	if _, err := events.ReduceAll([]events.Event{{}}); err == nil || err.Error() != "Agent event must be a JSON object." {
		t.Fatalf("ReduceAll(zero event) = %v", err)
	}
}

// TestForks applies different continuations to older states: each branch must equal a fresh
// linear reduction of its own events, and no branch may disturb another (events.md §8.5).
func TestForks(t *testing.T) {
	s0 := events.NewReducerState()
	var prefix []events.Event
	prefix = append(prefix, start(t, 1), msgStarted(t, 2, "m"))
	for i := 3; i < 80; i++ {
		prefix = append(prefix, delta(t, i, "m", fmt.Sprint(i)))
	}
	states := []events.ReducerState{s0}
	for _, e := range prefix {
		states = append(states, mustReduce(t, states[len(states)-1], e))
	}
	snapshots := make([]string, len(states))
	for i, s := range states {
		snapshots[i] = marshal(t, s)
	}
	// Fork from several points, including the middle of the delta tail, trie boundaries and the
	// latest state, with continuations that append deltas, start new messages, call tools or
	// reuse IDs that the other branch used for different data.
	for _, at := range []int{2, 3, 10, 33, 34, 35, 66, len(prefix)} {
		for variant := 0; variant < 3; variant++ {
			n := at + 1
			var cont []events.Event
			switch variant {
			case 0:
				cont = []events.Event{delta(t, n, "m", fmt.Sprintf("fork-%d", at)), delta(t, n+1, "m", "again")}
			case 1:
				cont = []events.Event{msgStarted(t, n, "m2"), delta(t, n+1, "m2", "other"), delta(t, n+2, "m", "tail")}
			case 2:
				cont = []events.Event{ev(t, n, "tool.called", "toolCall", call(fmt.Sprint("c", at))), msgStarted(t, n+1, "m"), completed(t, n+2)}
			}
			got := mustReduce(t, states[at], cont...)
			all := append(append([]events.Event{}, prefix[:at]...), cont...)
			want, err := events.ReduceAll(all)
			if err != nil {
				t.Fatal(err)
			}
			if marshal(t, got) != marshal(t, want) {
				t.Fatalf("fork at %d variant %d differs from a linear reduction", at, variant)
			}
		}
	}
	// The original chain is intact, and still extends correctly.
	for i, s := range states {
		if marshal(t, s) != snapshots[i] {
			t.Fatalf("state %d changed after forks", i)
		}
	}
	tail := mustReduce(t, states[len(states)-1], delta(t, 200, "m", "end"))
	want, _ := events.ReduceAll(append(append([]events.Event{}, prefix...), delta(t, 200, "m", "end")))
	if marshal(t, tail) != marshal(t, want) {
		t.Fatal("original chain continues incorrectly after forks")
	}
	// The same event ID with different data on two branches: each branch keeps its own
	// fingerprint.
	a := mustReduce(t, states[5], delta(t, 90, "m", "A"))
	b := mustReduce(t, states[5], delta(t, 90, "m", "B"))
	if _, err := events.Reduce(a, delta(t, 90, "m", "A")); err != nil {
		t.Fatal(err)
	}
	if _, err := events.Reduce(b, delta(t, 90, "m", "A")); err == nil || err.Error() != "Agent event ID was reused for different event data." {
		t.Fatalf("branch b: %v", err)
	}
	if _, ok := states[5].Fingerprint("run-1:90"); ok {
		t.Fatal("a fork leaked an event ID into its base state")
	}
}

// TestConcurrentReduce reduces many different events onto the same states from several
// goroutines; every result must equal the serial computation.
func TestConcurrentReduce(t *testing.T) {
	base := mustReduce(t, events.NewReducerState(), start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "a"))
	const workers = 8
	want := make([]string, workers)
	conts := make([][]events.Event, workers)
	for w := range workers {
		n := 4
		next := func() int { n++; return n - 1 }
		for k := 0; k < 50; k++ {
			// Interleave the shared message with one of the worker's own, tool calls (shared
			// IDs with different data on each branch) and progress: every key space of the
			// shared index is written concurrently.
			mine := fmt.Sprintf("m-%d-%d", w, k%3)
			conts[w] = append(conts[w],
				delta(t, next(), "m", fmt.Sprintf("w%d-%d", w, k)),
				ev(t, next(), "message.started", "messageId", mine, "role", "assistant"),
				delta(t, next(), mine, "x"),
				ev(t, next(), "tool.called", "toolCall", obj("toolCallId", fmt.Sprint("c-", k), "name", "n", "input", obj("w", float64(w)))),
				ev(t, next(), "tool.progress", "toolCallId", fmt.Sprint("c-", k), "content", []any{text(mine)}),
			)
		}
		want[w] = marshal(t, mustReduce(t, base, conts[w]...))
	}
	got := make([]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := base
			for _, e := range conts[w] {
				s, _ = events.Reduce(s, e)
			}
			b, _ := s.MarshalJSON()
			got[w] = string(b)
		}()
	}
	wg.Wait()
	for w := range workers {
		if got[w] != want[w] {
			t.Fatalf("worker %d differs from the serial result", w)
		}
	}
}

// TestAccessorsAreCopies mutates everything accessors return; the state must not change.
func TestAccessorsAreCopies(t *testing.T) {
	s := mustReduce(t, events.NewReducerState(), start(t, 1), msgStarted(t, 2, "m"), delta(t, 3, "m", "x"),
		ev(t, 4, "tool.called", "toolCall", call("c-1")),
		ev(t, 5, "tool.progress", "toolCallId", "c-1", "content", []any{text("p")}),
		ev(t, 6, "tool.completed", "result", result("c-1")),
		ev(t, 7, "tool.failed", "error", toolError("c-1", "x")),
		ev(t, 8, "interrupt.required", "interrupt", interrupt("i-1")),
		ev(t, 9, "usage.updated", "usage", obj("inputTokens", 1.0)),
		ev(t, 10, "interrupt.resolved", "interruptId", "i-1", "decisions", []any{obj("a", 1.0)}),
		ev(t, 11, "interrupt.required", "interrupt", interrupt("i-2")),
		completed(t, 12, "limit", obj("kind", "steps")))
	before := marshal(t, s)
	for _, m := range s.Messages() {
		m.Content[0].Raw.Set("text", "MUTATED")
		m.Content[0] = events.ContentPart{}
	}
	if m, ok := s.Message("m"); ok {
		m.Content[0].Raw.Set("text", "MUTATED")
	} else {
		t.Fatal("Message(m) missing")
	}
	for _, r := range s.ToolCalls() {
		r.Raw.Set("name", "MUTATED")
		r.Input.Set("city", "MUTATED")
	}
	for _, p := range s.ToolProgress() {
		p.Content[0].Raw.Set("text", "MUTATED")
	}
	for _, r := range s.ToolResults() {
		r.Raw.Set("output", "MUTATED")
	}
	for _, r := range s.ToolErrors() {
		r.Raw.Set("error", "MUTATED")
	}
	in, _ := s.Interrupt()
	in.Raw.Set("prompt", "MUTATED")
	u, _ := s.Usage()
	u.Raw.Set("inputTokens", 99.0)
	l, _ := s.Limit()
	l.Raw.Set("kind", "MUTATED")
	ids := s.EventIDs()
	ids[0] = "MUTATED"
	v, _ := s.Value()
	v.Set("status", "MUTATED")
	if after := marshal(t, s); after != before {
		t.Fatalf("accessor results alias the state:\n%s\n%s", before, after)
	}
	if _, ok := s.InterruptResolution(); ok {
		t.Fatal("interrupt.required clears the resolution")
	}
	if pv, ok := s.ProtocolVersion(); !ok || pv != 1 {
		t.Fatal("protocol version")
	}
	if id, ok := s.SessionID(); !ok || id != "s-1" {
		t.Fatal("session ID")
	}
	if id, ok := s.LastPhaseID(); !ok || id != "p-1" {
		t.Fatal("last phase ID")
	}
	if fr, ok := s.FinishReason(); !ok || fr != "stop" {
		t.Fatal("finish reason")
	}
	if _, ok := s.ErrorCode(); ok {
		t.Fatal("error code")
	}
	if s.MessageCount() != 1 || s.EventCount() != 12 {
		t.Fatal("counts")
	}
}

func TestMarshalIndent(t *testing.T) {
	s := mustReduce(t, events.NewReducerState(), start(t, 1))
	b, err := s.MarshalIndent("  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("{\n  \"protocolVersion\": 1,\n  \"runId\": \"run-1\",")) || !bytes.Contains(b, []byte(`"messages": [],`)) {
		t.Fatalf("MarshalIndent:\n%s", b)
	}
	compact, _ := s.MarshalJSON()
	v1, _ := jsonvalue.Parse(b, "")
	v2, _ := jsonvalue.Parse(compact, "")
	if !jsonvalue.Equal(v1, v2) {
		t.Fatal("indented and compact forms differ")
	}
}
