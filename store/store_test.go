package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentwire/agentwire/store"
)

func TestErrorsWrap(t *testing.T) {
	conflict := error(&store.ConflictError{RunID: "r", Expected: 1, Actual: 2})
	ev := func(reason error) error {
		return &store.EventError{Index: 3, LogicalSequence: 7, EventID: "e", Reason: reason}
	}
	for _, c := range []struct {
		name string
		err  error
		is   []error
		not  []error
		text string
	}{
		{"conflict", conflict, []error{store.ErrConflict}, []error{store.ErrDuplicate, store.ErrInvalid},
			`store: conflict on run "r": expected last logical sequence 1, stored 2`},
		{"duplicate sequence", ev(store.ErrDuplicateSequence), []error{store.ErrDuplicateSequence, store.ErrDuplicate},
			[]error{store.ErrDuplicateEventID, store.ErrOutOfOrder, store.ErrConflict},
			`store: duplicate logical sequence at index 3 (logicalSequence 7, eventId "e")`},
		{"duplicate event ID", ev(store.ErrDuplicateEventID), []error{store.ErrDuplicateEventID, store.ErrDuplicate},
			[]error{store.ErrDuplicateSequence, store.ErrOutOfOrder},
			`store: duplicate event ID at index 3 (logicalSequence 7, eventId "e")`},
		{"out of order", ev(store.ErrOutOfOrder), []error{store.ErrOutOfOrder}, []error{store.ErrDuplicate},
			`store: logical sequence out of order at index 3 (logicalSequence 7, eventId "e")`},
		{"wrapped", fmt.Errorf("relay: %w", conflict), []error{store.ErrConflict}, nil,
			`relay: store: conflict on run "r": expected last logical sequence 1, stored 2`},
		{"invalid cursor", store.ErrInvalidCursor, []error{store.ErrInvalid}, []error{store.ErrNotFound},
			`store: invalid argument: malformed cursor`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, target := range c.is {
				if !errors.Is(c.err, target) {
					t.Errorf("errors.Is(%v, %v) = false", c.err, target)
				}
			}
			for _, target := range c.not {
				if errors.Is(c.err, target) {
					t.Errorf("errors.Is(%v, %v) = true", c.err, target)
				}
			}
			if c.err.Error() != c.text {
				t.Errorf("Error() = %q, want %q", c.err.Error(), c.text)
			}
		})
	}
}

func TestValidateAppend(t *testing.T) {
	ok := func() store.AppendRequest {
		return store.AppendRequest{
			Events:   []store.Event{{LogicalSequence: 1, EventID: "", Type: "run.started", Data: []byte("{}")}},
			Snapshot: []byte("{}"), Status: "running",
		}
	}
	for _, c := range []struct {
		name       string
		org, run   string
		mutate     func(*store.AppendRequest)
		wantErrMsg string
	}{
		{"valid", "o", "r", func(*store.AppendRequest) {}, ""},
		{"empty event ID is valid", "o", "r", func(r *store.AppendRequest) { r.Events[0].EventID = "" }, ""},
		{"empty org", "", "r", func(*store.AppendRequest) {}, "store: invalid argument: empty org"},
		{"empty run", "o", "", func(*store.AppendRequest) {}, "store: invalid argument: empty run ID"},
		{"negative expected", "o", "r", func(r *store.AppendRequest) { r.ExpectedLastLogicalSequence = -1 }, "store: invalid argument: expected last logical sequence -1 is negative"},
		{"no events", "o", "r", func(r *store.AppendRequest) { r.Events = nil }, "store: invalid argument: empty batch"},
		{"no snapshot", "o", "r", func(r *store.AppendRequest) { r.Snapshot = []byte{} }, "store: invalid argument: empty snapshot"},
		{"first batch without snapshot", "o", "r", func(r *store.AppendRequest) { r.Snapshot = nil }, "store: invalid argument: the first batch of a run carries no snapshot"},
		{"later batch without snapshot is valid", "o", "r", func(r *store.AppendRequest) {
			r.Snapshot, r.ExpectedLastLogicalSequence, r.Events[0].LogicalSequence = nil, 1, 2
		}, ""},
		{"no status", "o", "r", func(r *store.AppendRequest) { r.Status = "" }, "store: invalid argument: empty status"},
		{"zero seq", "o", "r", func(r *store.AppendRequest) { r.Events[0].LogicalSequence = 0 }, "store: invalid argument: event 0: logical sequence 0 is not positive"},
		{"no type", "o", "r", func(r *store.AppendRequest) { r.Events[0].Type = "" }, "store: invalid argument: event 0: empty type"},
		{"no data", "o", "r", func(r *store.AppendRequest) { r.Events[0].Data = nil }, "store: invalid argument: event 0: empty data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ok()
			c.mutate(&r)
			err := store.ValidateAppend(c.org, c.run, r)
			if c.wantErrMsg == "" {
				if err != nil {
					t.Fatalf("ValidateAppend: %v", err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalid) || err.Error() != c.wantErrMsg {
				t.Fatalf("ValidateAppend: %v, want %q wrapping ErrInvalid", err, c.wantErrMsg)
			}
		})
	}
}

func TestValidateReadAndList(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"read ok", store.ValidateRead("o", "r", 0, 1), true},
		{"read negative after", store.ValidateRead("o", "r", -1, 1), false},
		{"read zero limit", store.ValidateRead("o", "r", 0, 0), false},
		{"read empty run", store.ValidateRead("o", "", 0, 1), false},
		{"list ok", store.ValidateList("o", store.ListRunsQuery{Limit: 1}), true},
		{"list zero limit", store.ValidateList("o", store.ListRunsQuery{}), false},
		{"list empty org", store.ValidateList("", store.ListRunsQuery{Limit: 1}), false},
	} {
		if (c.err == nil) != c.ok || (c.err != nil && !errors.Is(c.err, store.ErrInvalid)) {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
}

func pending(ch <-chan struct{}) bool {
	select {
	case _, ok := <-ch:
		return ok
	default:
		return false
	}
}

func TestHub(t *testing.T) {
	var h store.Hub
	a1, cancelA1 := h.Subscribe("o", "a")
	a2, cancelA2 := h.Subscribe("o", "a")
	b, cancelB := h.Subscribe("o", "b")
	pa, cancelPA := h.Subscribe("p", "a")
	defer cancelB()
	defer cancelPA()
	if n := h.Subscribers(); n != 4 {
		t.Fatalf("Subscribers = %d, want 4", n)
	}
	// Three notifications coalesce into one pending wake-up; other topics stay quiet.
	h.Notify("o", "a")
	h.Notify("o", "a")
	h.Notify("o", "a")
	for name, c := range map[string]struct {
		ch   <-chan struct{}
		want bool
	}{"a1": {a1, true}, "a2": {a2, true}, "b": {b, false}, "other org": {pa, false}} {
		if got := pending(c.ch); got != c.want {
			t.Errorf("%s pending = %v, want %v", name, got, c.want)
		}
	}
	if pending(a1) {
		t.Error("a1: second wake-up; notifications should coalesce")
	}
	// A cancelled subscriber is not notified; cancel is idempotent.
	cancelA1()
	cancelA1()
	h.Notify("o", "a")
	if pending(a1) {
		t.Error("cancelled subscriber notified")
	}
	if !pending(a2) {
		t.Error("a2 not notified")
	}
	if n := h.Subscribers(); n != 3 {
		t.Fatalf("Subscribers after cancel = %d, want 3", n)
	}
	cancelA2()
	h.Close()
	h.Close()
	for name, ch := range map[string]<-chan struct{}{"b": b, "other org": pa} {
		if _, ok := <-ch; ok {
			t.Errorf("%s: channel not closed by Close", name)
		}
	}
	late, cancelLate := h.Subscribe("o", "a")
	defer cancelLate()
	if _, ok := <-late; ok {
		t.Error("Subscribe after Close: channel not closed")
	}
	h.Notify("o", "a") // no panic on a closed hub
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("Subscribers after Close = %d", n)
	}
}
