package runview

import (
	"strconv"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Host is the table of sessions behind the WebAssembly API (package web/wasm maps each JS
// function to one method). Every result is what crosses to JavaScript: a JSON text, a message,
// or a number. The same calls made natively and through the WebAssembly build must give the
// same bytes; the package web tests hold the two to that.
type Host struct {
	sessions map[int]*Session
	next     int
}

// NewHost returns an empty host.
func NewHost() *Host { return &Host{sessions: map[int]*Session{}, next: 1} }

// ErrorJSON is the result of a call that names an unknown session or a refused time travel:
// {"error":"<message>"}.
func ErrorJSON(msg string) string {
	return string(jsonvalue.AppendQuote([]byte(`{"error":`), msg)) + "}"
}

const unknownSession = "unknown session"

// Validate is ParseEvent's exact message for one event text, ok false when it is valid.
func (h *Host) Validate(b []byte) (msg string, invalid bool) {
	if _, err := events.ParseEvent(b); err != nil {
		return err.Error(), true
	}
	return "", false
}

// ValidateFile is ValidateLines as JSON.
func (h *Host) ValidateFile(b []byte) string { return string(AppendLineErrors(nil, ValidateLines(b))) }

// NewSession creates a session caching a state every k events; it returns its id.
func (h *Host) NewSession(k int) int {
	id := h.next
	h.next++
	h.sessions[id] = New(k)
	return id
}

// Free drops a session.
func (h *Host) Free(id int) { delete(h.sessions, id) }

// Load starts a session from a snapshot; it returns the refusal message, if any.
func (h *Host) Load(id int, b []byte) (msg string, refused bool) {
	s := h.sessions[id]
	if s == nil {
		return unknownSession, true
	}
	if err := s.Load(b); err != nil {
		return err.Error(), true
	}
	return "", false
}

// Apply is Session.Apply's patch JSON.
func (h *Host) Apply(id int, text []byte) string {
	if s := h.sessions[id]; s != nil {
		return string(s.Apply(text).AppendJSON(nil))
	}
	return ErrorJSON(unknownSession)
}

// ApplyFile is Session.ApplyFile's patch JSON.
func (h *Host) ApplyFile(id int, data []byte) string {
	if s := h.sessions[id]; s != nil {
		return string(s.ApplyFile(data).AppendJSON(nil))
	}
	return ErrorJSON(unknownSession)
}

// View is the current state's view JSON.
func (h *Host) View(id int) string {
	if s := h.sessions[id]; s != nil {
		return string(View(nil, s.State()))
	}
	return ErrorJSON(unknownSession)
}

// ViewAt is the view JSON of the state at logical sequence n.
func (h *Host) ViewAt(id int, n float64) string {
	return h.at(id, n, func(st events.ReducerState) []byte { return View(nil, st) })
}

// Snapshot is the current state's §8.1 JSON.
func (h *Host) Snapshot(id int) string {
	if s := h.sessions[id]; s != nil {
		return string(s.State().AppendJSON(nil))
	}
	return ErrorJSON(unknownSession)
}

// SnapshotAt is the §8.1 JSON of the state at logical sequence n.
func (h *Host) SnapshotAt(id int, n float64) string {
	return h.at(id, n, func(st events.ReducerState) []byte { return st.AppendJSON(nil) })
}

func (h *Host) at(id int, n float64, enc func(events.ReducerState) []byte) string {
	s := h.sessions[id]
	if s == nil {
		return ErrorJSON(unknownSession)
	}
	st, err := s.At(n)
	if err != nil {
		return ErrorJSON(err.Error())
	}
	return string(enc(st))
}

// Info is {"len":applied events,"base":base sequence,"last":last logical sequence}.
func (h *Host) Info(id int) string {
	s := h.sessions[id]
	if s == nil {
		return ErrorJSON(unknownSession)
	}
	b := []byte(`{"len":`)
	b = strconv.AppendInt(b, int64(s.Len()), 10)
	b = append(b, `,"base":`...)
	b = jsonvalue.AppendNumber(b, s.BaseSequence())
	b = append(b, `,"last":`...)
	b = jsonvalue.AppendNumber(b, s.State().LastLogicalSequence())
	return string(append(b, '}'))
}
