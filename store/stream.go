package store

import "context"

// StreamAppender is the optional streaming form of [RunStore.AppendRun], for a caller that
// produces a long batch gradually (the relay parses and reduces a request of up to 10,000
// events): the store starts writing the first parts while the caller still produces the
// rest, so the two overlap instead of running one after the other. The outcome is exactly
// AppendRun's: all of the batch is stored, durably and atomically with its run metadata and
// checkpoint, or none of it.
//
// A backend that implements it must pass storetest's streamed suite (storetest.Run runs the
// whole runs suite through AppendRunStream when the store has it). A caller that finds a
// store without it calls AppendRun with the whole batch.
type StreamAppender interface {
	// AppendRunStream stores the batch that arrives on s.Parts: zero or more parts with
	// events, then exactly one final part (End or Abort set). The store may receive the
	// parts while it holds its write transaction, so the caller must deliver them without
	// waiting on anything but its own computation, and must always finish the stream with
	// End or Abort (or cancel ctx) even when it gives up early.
	//
	// The checks are AppendRun's, made as the parts arrive: org, runID and
	// s.ExpectedLastLogicalSequence first (ErrInvalid), then the conflict check (a
	// [*ConflictError] is returned at once, possibly before the caller has sent every part),
	// then each event as it comes (arguments: ErrInvalid; order and uniqueness: [*EventError]
	// whose Index counts from the first event of the whole stream), and the End part's Status
	// and Snapshot with the rules of [AppendRequest] (a stream with no event is ErrInvalid).
	// After any failure nothing is stored.
	//
	// An Abort part ends the stream with nothing stored, and AppendRunStream returns the
	// part's error. If ctx ends before the End part has been received, nothing is stored and
	// ctx.Err() is returned; once End is received, ctx ending is treated as in AppendRun. The
	// store keeps reading the events' slices until AppendRunStream returns.
	//
	// When AppendRunStream returns, it has stopped reading s.Parts; parts sent after that are
	// never received, so a caller sends with a select that also watches for the return.
	AppendRunStream(ctx context.Context, org, runID string, s AppendStream) (RunInfo, error)
}

// AppendStream is the input of [StreamAppender.AppendRunStream].
type AppendStream struct {
	// ExpectedLastLogicalSequence is [AppendRequest.ExpectedLastLogicalSequence].
	ExpectedLastLogicalSequence int64

	// Weight is the most events the stream may carry (for a group-committing backend, how
	// much of a group's budget it takes); it is a hint and may be 0.
	Weight int

	// Parts delivers the batch in order.
	Parts <-chan AppendPart
}

// AppendPart is one message of an [AppendStream]: either more events (End and Abort unset),
// or the end of the stream.
type AppendPart struct {
	// Events are the next accepted events in batch order, with [AppendRequest.Events]' rules.
	// A final part may carry events too.
	Events []Event

	// End completes the batch: Status and Snapshot are [AppendRequest.Status] and
	// [AppendRequest.Snapshot], with the same rules.
	End      bool
	Status   string
	Snapshot []byte

	// Abort, when not nil, ends the stream with nothing stored; AppendRunStream returns it.
	Abort error
}
