// Package runview is the web viewer's reducer session: the Go events reducer wrapped for the
// page (viewer.md §4), compiled to WebAssembly by package web/wasm and tested natively here.
//
// A [Session] holds a run's current reducer state and the raw lines of the events it applied
// (exact duplicates are not kept), with a cached state every K events, so that the state at
// any logical sequence N ([Session.At], time travel) costs re-reducing at most K−1 events from
// the nearest cached state: reducer states are persistent values (events.md §8.5), so a cached
// state shares its structure with the current one.
//
// The page does not re-render a whole snapshot for each event. [Session.Apply] returns a
// [Patch]: the timeline entries of the events it applied and, read back from the new state
// through the keyed accessors, the messages and tool records those events touched and the
// run's head members (status, interrupt, usage, limit, terminal fields, sequences). A message
// that only grew by deltas is sent as the parts it gained (from the part count it had before
// the Apply), so a long streamed message costs each Apply its new parts, not its whole
// content, in the reducer, across to JavaScript and in the page. A full
// [View] (the snapshot without `eventIds` and `eventFingerprints`, which a person does not
// read and which dominate a long run's snapshot) serves the first render and time travel.
//
// [ValidateLines] splits a transcript exactly as `agentwire events validate` does (LF line
// ends, 1-based line numbers counting every line, lines of only spaces and tabs skipped) and
// returns its `line N: <message>` findings with the exact messages of events.ParseEvent.
package runview

import (
	"errors"
	"sort"
	"strconv"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// DefaultCheckpointEvery is the K of [New] when given k ≤ 0: a scrub re-reduces fewer than
// 256 events.
const DefaultCheckpointEvery = 256

// ErrBeforeBase is returned by [Session.At] for a sequence before the state the session was
// loaded from: its events are not in the session.
var ErrBeforeBase = errors.New("the session starts from a snapshot after that sequence")

// Session is one run in the page. It is not safe for concurrent use (the page's one thread
// owns it).
type Session struct {
	k       int
	base    events.ReducerState // state before lines[0]
	baseSeq float64             // base's lastLogicalSequence
	state   events.ReducerState
	lines   [][]byte  // raw text of each applied event, in order
	seqs    []float64 // logicalSequence of lines[i]
	checks  []events.ReducerState
}

// New returns a session at the initial state that caches a state every k applied events
// (k ≤ 0: DefaultCheckpointEvery).
func New(k int) *Session {
	if k <= 0 {
		k = DefaultCheckpointEvery
	}
	return &Session{k: k}
}

// State is the current state.
func (s *Session) State() events.ReducerState { return s.state }

// Len is the number of events applied since the session's base state.
func (s *Session) Len() int { return len(s.lines) }

// BaseSequence is the lastLogicalSequence of the state the session starts from (0 unless
// loaded from a snapshot).
func (s *Session) BaseSequence() float64 { return s.baseSeq }

// Load replaces the session with one starting from a snapshot: a §8.1 state, or the answer of
// GET /v1/runs/{runId} (whose extra `meta` member is dropped). A refused snapshot (the exact
// DecodeReducerState message) leaves the session unchanged.
func (s *Session) Load(snapshot []byte) error {
	st, err := events.DecodeReducerState(snapshot)
	if err != nil {
		// A relay answer carries `meta` besides the 21 members: drop it and decode again.
		v, perr := jsonvalue.ParseDeep(snapshot, "Agent reducer state", jsonvalue.MaxDepth+4)
		o, ok := v.(*jsonvalue.Object)
		if perr != nil || !ok || !o.Has("meta") {
			return err
		}
		o.Delete("meta")
		if st, err = events.DecodeReducerState(jsonvalue.AppendEncoded(nil, o)); err != nil {
			return err
		}
	}
	*s = Session{k: s.k, base: st, baseSeq: st.LastLogicalSequence(), state: st}
	return nil
}

// Refusal is the first event of an Apply that was not applied.
type Refusal struct {
	// Index is the 0-based position of the event among the non-blank lines given.
	Index int
	// Line is its 1-based line number in the text given (ApplyFile: in the file).
	Line int
	// Message is the exact message of ParseEvent or Reduce.
	Message string
	// Kind is JSONValidationError, ValidationError or ReduceError (events.md §3.8).
	Kind string
}

// Patch is what one Apply changed. Its JSON (MarshalJSON) is what the page renders from.
type Patch struct {
	Applied, Duplicates int
	Refusal             *Refusal
	// Events are the applied events' raw lines (the timeline entries are read from them).
	Events []events.Event
	// Messages are the messages the applied events touched, in first-touch order.
	Messages []TouchedMessage
	// Tools are the toolCallIds the applied events touched, in first-touch order.
	Tools []string
	state events.ReducerState
	// where: position in Messages (key "m"+ID) or Tools ("t"+ID), so that touching costs
	// O(1) however many records one Apply touches.
	where map[string]int
}

// TouchedMessage is a message a Patch carries.
type TouchedMessage struct {
	ID string
	// From is the number of its content parts the page already has: the part count before the
	// Apply when the Apply's events only appended parts (message.part.delta), 0 when one of
	// them started or completed it (its content was replaced).
	From int
}

// Apply parses and reduces each non-blank line of text (NDJSON) in order and stops at the
// first one that is refused. Exact duplicates change nothing and are counted.
func (s *Session) Apply(text []byte) *Patch {
	p := &Patch{}
	i := 0
	Lines(text, func(n int, line []byte) bool {
		ok := s.apply(p, i, n, line)
		i++
		return ok
	})
	p.state = s.state
	return p
}

// ApplyFile applies a transcript as the /open page does: lines that fail validation (listed by
// ValidateLines) are skipped, the others are reduced in order until the first reducer refusal,
// whose Line is its line number in the file.
func (s *Session) ApplyFile(data []byte) *Patch {
	p := &Patch{}
	i := 0
	Lines(data, func(n int, line []byte) bool {
		if _, err := events.ParseEvent(line); err != nil {
			return true
		}
		ok := s.apply(p, i, n, line)
		i++
		return ok
	})
	p.state = s.state
	return p
}

func (s *Session) apply(p *Patch, index, lineNo int, line []byte) bool {
	e, err := events.ParseEvent(line)
	var next events.ReducerState
	if err == nil {
		next, err = events.Reduce(s.state, e)
	}
	if err != nil {
		p.Refusal = &Refusal{Index: index, Line: lineNo, Message: err.Error(), Kind: errorKind(err)}
		return false
	}
	if next.EventCount() == s.state.EventCount() {
		p.Duplicates++ // an exact duplicate (events.md §8.3 step 3)
		return true
	}
	prev := s.state
	s.state = next
	s.lines = append(s.lines, append([]byte(nil), line...))
	s.seqs = append(s.seqs, float64(e.LogicalSequence()))
	if len(s.lines)%s.k == 0 {
		s.checks = append(s.checks, next)
	}
	p.Applied++
	p.Events = append(p.Events, e)
	touch(p, e, prev)
	return true
}

// touch records the message and tool keys an event's type rule changes (events.md §8.4);
// prev is the state before the event.
func touch(p *Patch, e events.Event, prev events.ReducerState) {
	if p.where == nil {
		p.where = map[string]int{}
	}
	tool := func(id string) {
		if _, ok := p.where["t"+id]; !ok {
			p.where["t"+id] = len(p.Tools)
			p.Tools = append(p.Tools, id)
		}
	}
	// replaced: the event resets the message's content; otherwise it appends one part.
	message := func(id string, replaced bool) {
		if i, ok := p.where["m"+id]; ok {
			if replaced {
				p.Messages[i].From = 0
			}
			return
		}
		from := 0
		if !replaced {
			from = max(prev.MessagePartCount(id), 0)
		}
		p.where["m"+id] = len(p.Messages)
		p.Messages = append(p.Messages, TouchedMessage{ID: id, From: from})
	}
	switch pl := e.Payload().(type) {
	case events.MessageStarted:
		message(pl.MessageID, true)
	case events.MessagePartDelta:
		message(pl.MessageID, false)
	case events.MessageCompleted:
		message(pl.MessageID, true)
	case events.ToolCalled:
		tool(pl.ToolCall.ToolCallID)
	case events.ToolProgress:
		tool(pl.ToolCallID)
	case events.ToolCompleted:
		tool(pl.Result.ToolCallID)
	case events.ToolFailed:
		tool(pl.Error.ToolCallID)
	}
}

func errorKind(err error) string {
	var j *events.JSONValidationError
	var v *events.ValidationError
	var r *events.ReduceError
	switch {
	case errors.As(err, &j):
		return "JSONValidationError"
	case errors.As(err, &v):
		return "ValidationError"
	case errors.As(err, &r):
		return "ReduceError"
	}
	return ""
}

// At returns the state after every applied event whose logicalSequence is ≤ n: the nearest
// cached state at or before it, with at most K−1 events re-reduced. n below the base state's
// lastLogicalSequence is ErrBeforeBase.
func (s *Session) At(n float64) (events.ReducerState, error) {
	if n < s.baseSeq {
		return events.ReducerState{}, ErrBeforeBase
	}
	c := sort.Search(len(s.seqs), func(i int) bool { return s.seqs[i] > n })
	return s.stateAfter(c)
}

// AtCount returns the state after the first c applied events (0 ≤ c ≤ Len).
func (s *Session) AtCount(c int) (events.ReducerState, error) {
	if c < 0 || c > len(s.lines) {
		return events.ReducerState{}, errors.New("event count out of range")
	}
	return s.stateAfter(c)
}

func (s *Session) stateAfter(c int) (events.ReducerState, error) {
	if c == len(s.lines) {
		return s.state, nil
	}
	st, from := s.base, 0
	if k := c / s.k; k > 0 {
		st, from = s.checks[k-1], k*s.k
	}
	for _, line := range s.lines[from:c] {
		e, err := events.ParseEvent(line)
		if err == nil {
			st, err = events.Reduce(st, e)
		}
		if err != nil { // unreachable: each line was applied to this very state before
			return events.ReducerState{}, err
		}
	}
	return st, nil
}

// Lines calls fn for each non-blank line of data with its 1-based line number, splitting as
// `agentwire events validate` does: on LF (a CR stays part of the line), counting every line,
// skipping lines of only spaces and tabs; a last line without LF counts when it is not empty.
// It stops when fn returns false.
func Lines(data []byte, fn func(n int, line []byte) bool) {
	n := 0
	for len(data) > 0 {
		n++
		line := data
		if i := indexLF(data); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !blank(line) && !fn(n, line) {
			return
		}
	}
}

func indexLF(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// LineError is one finding of ValidateLines.
type LineError struct {
	Line    int
	Message string
}

// ValidateLines validates each non-blank line of data alone (events.ParseEvent) and returns
// one LineError per invalid line, in order: what `agentwire events validate` prints as
// `line N: <message>`.
func ValidateLines(data []byte) []LineError {
	var out []LineError
	Lines(data, func(n int, line []byte) bool {
		if _, err := events.ParseEvent(line); err != nil {
			out = append(out, LineError{Line: n, Message: err.Error()})
		}
		return true
	})
	return out
}

// AppendLineErrors appends errs as a JSON array of {"line":N,"message":"…"}.
func AppendLineErrors(b []byte, errs []LineError) []byte {
	b = append(b, '[')
	for i, e := range errs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"line":`...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, `,"message":`...)
		b = jsonvalue.AppendQuote(b, e.Message)
		b = append(b, '}')
	}
	return append(b, ']')
}
