package store

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Backends return them wrapped (test with errors.Is) or as the typed errors
// below, which unwrap to them. The relay maps them to the error body of relay.md §2.
var (
	// ErrNotFound: the run, message or question does not exist for the caller: unknown, of
	// another org, outside the caller's scope or network, or expired. Every case answers exactly
	// this (relay.md §1: 404, never 403; hive.md S3: a cross-network gid is an unknown gid).
	ErrNotFound = errors.New("store: not found")

	// ErrConflict: another writer advanced the run after the caller read it (optimistic
	// concurrency). Returned as [*ConflictError]. The relay reloads and retries.
	ErrConflict = errors.New("store: conflict")

	// ErrDuplicate is wrapped by [ErrDuplicateSequence], [ErrDuplicateEventID] and
	// [ErrDuplicateGID].
	ErrDuplicate = errors.New("store: duplicate")

	// ErrDuplicateSequence: an event's logical sequence is already stored in the run or
	// repeats an earlier event of the batch. Returned inside an [*EventError].
	ErrDuplicateSequence = fmt.Errorf("%w logical sequence", ErrDuplicate)

	// ErrDuplicateEventID: an event's ID is already stored in the run or repeats an earlier
	// event of the batch. Returned inside an [*EventError].
	ErrDuplicateEventID = fmt.Errorf("%w event ID", ErrDuplicate)

	// ErrDuplicateGID: a caller-supplied `gid` ([MessageWrite].GID) is already a stored
	// message's (hive.md §1.7: a gid is unique across all networks). Nothing is stored.
	ErrDuplicateGID = fmt.Errorf("%w gid", ErrDuplicate)

	// ErrOutOfOrder: an event's logical sequence is not greater than its predecessor's and is
	// not a duplicate. Returned inside an [*EventError].
	ErrOutOfOrder = errors.New("store: logical sequence out of order")

	// ErrInvalid: the call's arguments break the method's documented preconditions (a bug in
	// the caller, not a client error the relay should echo).
	ErrInvalid = errors.New("store: invalid argument")

	// ErrInvalidCursor: a list cursor was not issued by this backend. It wraps ErrInvalid; the
	// relay answers it as 400 invalid_request with field `cursor`.
	ErrInvalidCursor = fmt.Errorf("%w: malformed cursor", ErrInvalid)

	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store: closed")
)

// ConflictError is the optimistic-concurrency refusal of [RunStore.AppendRun]: the run's stored
// last logical sequence is not the one the batch was reduced against. errors.Is(err,
// ErrConflict) holds.
type ConflictError struct {
	// RunID is the run that moved.
	RunID string
	// Expected is AppendRequest.ExpectedLastLogicalSequence.
	Expected int64
	// Actual is the run's stored last logical sequence (0 when the run does not exist).
	Actual int64
}

// Error names the run and both sequences.
func (e *ConflictError) Error() string {
	return "store: conflict on run " + strconv.Quote(e.RunID) + ": expected last logical sequence " +
		strconv.FormatInt(e.Expected, 10) + ", stored " + strconv.FormatInt(e.Actual, 10)
}

// Unwrap returns [ErrConflict].
func (e *ConflictError) Unwrap() error { return ErrConflict }

// EventError refuses a batch because of one event. errors.Is(err, Reason) holds, and so does
// errors.Is(err, ErrDuplicate) for both duplicate reasons.
type EventError struct {
	// Index is the 0-based position of the first offending event in the batch (the relay's
	// error body `index`).
	Index int
	// LogicalSequence and EventID identify the offending event.
	LogicalSequence int64
	EventID         string
	// Reason is [ErrDuplicateSequence], [ErrDuplicateEventID] or [ErrOutOfOrder].
	Reason error
}

// Error names the reason, the index and the event.
func (e *EventError) Error() string {
	return e.Reason.Error() + " at index " + strconv.Itoa(e.Index) + " (logicalSequence " +
		strconv.FormatInt(e.LogicalSequence, 10) + ", eventId " + strconv.Quote(e.EventID) + ")"
}

// Unwrap returns Reason.
func (e *EventError) Unwrap() error { return e.Reason }
