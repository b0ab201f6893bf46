package store

import (
	"context"
	"time"
)

// Store is one backend instance shared by every lane of a relay process (relay.md §1, "one
// store"): the runs lane ([RunStore]), the bus lane ([BusStore]) and the notification lane
// ([NotificationStore]). A backend that group-commits shares its commits between the lanes.
//
// All methods are safe for concurrent use.
type Store interface {
	RunStore
	BusStore
	NotificationStore

	// Ping reports whether the store answers a trivial read (relay.md §2 Operations:
	// GET /healthz is 200 "when the store answers"). It returns [ErrClosed] after Close.
	Ping(ctx context.Context) error

	// Close stops accepting writes, finishes every write already queued (each caller gets its
	// real answer), closes every subscription channel, and releases the files. Calls made after
	// Close fail with [ErrClosed]. Close is idempotent.
	Close() error
}

// BoundedReader is implemented by a store whose event reads can also stop at a byte budget
// (relay.md §3: what a reader makes the relay hold is bounded by bytes, not only by a count;
// a page of 1,000 events of 1 MiB each would be a gigabyte).
type BoundedReader interface {
	// ReadEventsBounded is ReadEvents that also stops before the event that would bring the
	// page's Data past maxBytes; the first event after `after`, if any, is returned whatever
	// its size. cut reports that the page stopped at the budget (more events may follow
	// within limit).
	ReadEventsBounded(ctx context.Context, org, runID string, after int64, limit, maxBytes int) (events []Event, cut bool, err error)
}

// Clocked is implemented by a store that reads a clock itself (a run's createdAt/updatedAt,
// whether a bus message has expired). relay.New gives it the relay's clock (relay.Config.Now),
// so a relay's clock is set in one place and the store never disagrees with it.
type Clocked interface {
	// SetClock replaces the store's clock; a nil now changes nothing.
	SetClock(now func() time.Time)
}

// RunStore persists the runs lane (relay.md §2 Runs, events.md §8): per run, its events in
// logical-sequence order, its status and counters, and the latest checkpoint: a reducer
// snapshot together with the logical sequence it covers. The snapshot grows with the run
// (it holds every eventId and fingerprint, events.md §8.1), so the relay does not rewrite it
// with every batch: the current state is the checkpoint re-reduced with the stored events
// after its sequence.
//
// org is the token's organization (relay.md §1 Auth; "local" in local mode) and runID the
// event `runId` (events.md §4.2). Both must be non-empty; any other text is accepted as is.
type RunStore interface {
	// AppendRun atomically and durably stores req.Events after the run's last event, together
	// with req.Status and the run's counters, and, when req.Snapshot is not nil, replaces the
	// run's checkpoint with req.Snapshot covering the batch's last logical sequence (a nil
	// req.Snapshot keeps the previous checkpoint). It creates the run when it does not exist
	// yet. On success
	// it returns the run's new metadata; by then the events are readable by ReadEvents and the
	// run's subscribers have been signalled (see Subscribe).
	//
	// Checks, in this order; the first failure is returned and nothing is stored:
	//  1. arguments (see [AppendRequest]) → an error wrapping [ErrInvalid];
	//  2. req.ExpectedLastLogicalSequence equals the run's stored last logical sequence (0 for
	//     a run that does not exist) → else [*ConflictError] (wraps [ErrConflict]);
	//  3. each event in batch order, against the stored events and the events before it in the
	//     batch: a logical sequence not greater than its predecessor's (the run's last for the
	//     first event) is [ErrDuplicateSequence] when that sequence is already taken, else
	//     [ErrOutOfOrder]; an event ID already taken is [ErrDuplicateEventID]. The error is an
	//     [*EventError] with the event's 0-based Index.
	//
	// If ctx is already done, AppendRun returns ctx.Err() and stores nothing. If ctx ends
	// before the outcome is known, AppendRun returns ctx.Err() and the batch may or may not be
	// stored (a backend does not start writing a batch whose context has ended, but cannot
	// take back one already being committed); a retry of the same events then meets either
	// success or a conflict, after which the relay's reducer sees them as duplicates. The
	// caller must not modify req's slices after such a return.
	AppendRun(ctx context.Context, org, runID string, req AppendRequest) (RunInfo, error)

	// PutCheckpoint durably replaces the run's checkpoint with snapshot, the reducer state of
	// the run's events up to logical sequence seq, in a transaction of its own: the relay
	// writes checkpoints after the batch that made them due has committed, off the request
	// path, since a snapshot grows with its run (events.md §8.1). The checkpoint is stored
	// only when seq is greater than the sequence the stored checkpoint covers; an older or
	// equal one is obsolete and stores nothing (stored false, no error), so checkpoints
	// written out of order never move back. seq must not be beyond the run's last logical
	// sequence. Errors: seq < 1, an empty snapshot or a seq beyond the run's last event wrap
	// [ErrInvalid]; a run that does not exist in org answers [ErrNotFound].
	PutCheckpoint(ctx context.Context, org, runID string, seq int64, snapshot []byte) (stored bool, err error)

	// ReadEvents returns up to limit stored events of the run whose logical sequence is
	// greater than after, in increasing order (relay.md: GET /v1/runs/{runId}/events?after=N
	// &limit=L, and SSE replay from Last-Event-ID). An empty result means the reader is at the
	// end; it is not an error. limit must be positive; after must be non-negative. A run that
	// does not exist in org answers [ErrNotFound].
	ReadEvents(ctx context.Context, org, runID string, after int64, limit int) ([]Event, error)

	// GetRun returns the run's checkpoint snapshot (the bytes of the last successful AppendRun
	// that carried one) and its metadata, read together from one committed state; the
	// checkpoint covers the events up to info.SnapshotSequence, and the run's current state is
	// the checkpoint re-reduced with the events after it (relay.md: GET /v1/runs/{runId}
	// answers the current snapshot plus createdAt, updatedAt, eventCount under "meta"). A run
	// that does not exist in org answers [ErrNotFound].
	GetRun(ctx context.Context, org, runID string) (snapshot []byte, info RunInfo, err error)

	// ListRuns returns one page of the org's runs, newest first by UpdatedAt (relay.md:
	// GET /v1/runs?status=&limit=&cursor=). Runs updated in the same instant are ordered by
	// commit order, later first, so the order is total and stable. RunPage.Next, when not
	// empty, is the opaque cursor of the next page. A cursor a backend did not issue answers
	// an error wrapping [ErrInvalidCursor].
	//
	// Pagination is keyset-based, not a snapshot: a run updated while a client pages moves to
	// the front of the order, so a later page never repeats a run but may not show one that
	// was updated after the pagination started (a fresh listing shows it first).
	ListRuns(ctx context.Context, org string, q ListRunsQuery) (RunPage, error)

	// Subscribe returns a channel that receives a value after each commit that appended
	// events to the run, and a cancel function that releases it. The channel has a buffer of
	// one and notifications coalesce: one receive may stand for several commits, and a
	// receive may be spurious, so a subscriber re-reads with ReadEvents from its own cursor
	// after every wake-up. The order that never misses an event is: Subscribe, then
	// ReadEvents, then wait. The run need not exist yet. The channel is closed when the store
	// closes; cancel is idempotent and does not close it.
	//
	// The sqlite backend notifies in process only: writes made by another process on the same
	// file are not signalled (the sqlite backend takes an exclusive lock on its database, so
	// there is no such process). A distributed backend signals across processes.
	Subscribe(org, runID string) (notify <-chan struct{}, cancel func())
}

// AppendRequest is one validated, reduced batch for [RunStore.AppendRun].
type AppendRequest struct {
	// ExpectedLastLogicalSequence is the `lastLogicalSequence` of the snapshot the batch was
	// reduced against (events.md §8.1; 0 for a new run). It must be non-negative.
	ExpectedLastLogicalSequence int64

	// Events are the accepted events in batch order (duplicates already dropped by the
	// reducer). At least one is required.
	Events []Event

	// Snapshot, when not nil, is a checkpoint: the reducer state after the batch's last event
	// (events.md §8.6 MarshalJSON), stored as opaque bytes; it must then not be empty. Nil
	// keeps the run's previous checkpoint. The first batch of a run (ExpectedLastLogical-
	// Sequence 0) must carry one, so every stored run has a checkpoint.
	Snapshot []byte

	// Status is the `status` member (events.md §8.1) of the reducer state after the batch's
	// last event, written with every batch, checkpoint or not, so that ListRuns can filter
	// without reducing. It must not be empty.
	Status string
}

// Event is one stored run event.
type Event struct {
	// LogicalSequence is the event's `logicalSequence` (events.md §4.2): the run cursor, the
	// SSE `id:` and the `after` of ReadEvents. It must be positive.
	LogicalSequence int64

	// EventID is the event's `eventId` (events.md §4.2), unique within a run. The empty string
	// is a valid ID.
	EventID string

	// Type is the event's `type` (events.md §4.3), the SSE `event:` field. It must not be
	// empty.
	Type string

	// Data is the event's JSON text as the relay wants to serve it (one NDJSON line or one SSE
	// `data:` field). It is stored as opaque bytes and must not be empty.
	Data []byte
}

// RunInfo is a run's metadata (relay.md: `meta` of GET /v1/runs/{runId}, and the entries of
// GET /v1/runs).
type RunInfo struct {
	// RunID is the run's `runId`.
	RunID string

	// Status is the `status` of the reducer state after the run's last stored event (the
	// [AppendRequest.Status] of its last batch).
	Status string

	// CreatedAt is the commit time of the run's first batch (`meta.createdAt`).
	CreatedAt time.Time

	// UpdatedAt is the commit time of the run's last batch (`meta.updatedAt`, `updatedAt`).
	// The store never lets it go backwards across commits, even when the wall clock does.
	UpdatedAt time.Time

	// EventCount is the number of stored events (`meta.eventCount`, `eventCount`).
	EventCount int64

	// LastLogicalSequence is the logical sequence of the last stored event, equal to the
	// current state's `lastLogicalSequence`; the relay answers it as `lastLogicalSequence`.
	LastLogicalSequence int64

	// SnapshotSequence is the logical sequence covered by the run's checkpoint (the
	// `lastLogicalSequence` of the snapshot GetRun returns): the stored events after it are
	// the ones to re-reduce. AppendRun and GetRun fill it; ListRuns leaves it 0.
	SnapshotSequence int64
}

// ListRunsQuery selects one page of [RunStore.ListRuns].
type ListRunsQuery struct {
	// Status keeps only runs whose status equals it (relay.md `status=`); empty keeps all.
	Status string

	// Limit is the page size; it must be positive.
	Limit int

	// Cursor is RunPage.Next of the previous page (relay.md `cursor=`); empty starts at the
	// newest run.
	Cursor string
}

// RunPage is one page of [RunStore.ListRuns].
type RunPage struct {
	// Runs are newest first.
	Runs []RunInfo

	// Next is the cursor of the following page (relay.md `next`), empty on the last page.
	Next string
}
