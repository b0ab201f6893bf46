// Package store is the persistence boundary of the relay (relay.md §4, design.md "store").
//
// The relay enforces the contracts; a store only persists what the relay has already decided.
// For the runs lane that means: the relay parses and validates an NDJSON batch, folds it into
// the run's reducer state (events.md §8), and then hands the store the accepted events together
// with the new status and, every so often, a checkpoint of the reducer state (the snapshot
// grows with the run, so it is not rewritten with every batch). [RunStore.AppendRun] persists
// them in one atomic, durable step, or nothing at all. The store never imports the reducer and never interprets event JSON; what it
// guarantees is storage-level:
//
//   - Atomicity: a batch is stored whole (events, status, counters and checkpoint, if any, together) or
//     not at all. A failing batch leaves the run exactly as it was.
//   - Durability: when AppendRun returns nil the batch is on disk (relay.md §4: "a 2xx answer
//     means the write is on disk"). Backends may share one disk flush between concurrent
//     callers (group commit) but never answer before that flush.
//   - Optimistic concurrency: the caller states the run's last logical sequence it reduced
//     against (AppendRequest.ExpectedLastLogicalSequence). If another writer advanced the run
//     in between, AppendRun fails with a [*ConflictError] and stores nothing; the relay reloads
//     the checkpoint and the events after it, re-reduces and retries. This is what keeps a
//     stored checkpoint re-reduced with the events after it equal to re-reducing all the stored
//     events when several relay processes share one store (relay.md §5).
//   - Order and identity: within a run logical sequences strictly increase and are unique, and
//     event IDs are unique. A batch that would break either is refused with an [*EventError]
//     naming the 0-based index of the first offending event. Exact duplicates are a reducer
//     concern (they are no-ops in the relay and never reach the store); the store's refusal is
//     the backstop that keeps cursors sound.
//   - Cursors: [RunStore.ReadEvents] after N returns the stored events with logical sequence
//     greater than N in order, so a reader resuming from any cursor sees no gap and no repeat.
//   - Isolation: every call is scoped by org. A run of another org does not exist: it answers
//     [ErrNotFound], and its ID never collides with a run of the same ID in another org.
//   - Change notification: [RunStore.Subscribe] lets a live reader wait for commits to one run
//     instead of polling.
//
// The bus lane ([BusStore], hive messages) and the notification lane ([NotificationStore],
// envelopes) follow the same division of labour: the relay validates and decides (hive.md §8,
// envelope.md §2–§4), the store assigns what must be assigned inside the write transaction
// (a stream's `seq`, the store sequence of an envelope, a minted `gid`, a task number), enforces
// uniqueness (a `gid`, a `client_msg_id` per sending instance, one task proposal per question,
// an envelope message id per org within its window), persists durably, expires and notifies.
// It stores opaque bytes plus the few indexed columns those guarantees need, and every read is
// scoped: by org, by stream key (a swarm is its own key, never an org's), or by a
// [MessageScope]. The bus state that must survive a restart is stored as well: hello
// announcements with the time each (instance, agent, channel) was last seen, which S7 binds
// recipients with, and each instance's `ack` positions, which never go down.
//
// How a JetStream backend is expected to map the three lanes (relay.md §5): a run is the
// subject agentwire.runs.<runId-token>; AppendRun publishes the batch and its snapshot as one
// atomic batch guarded by the expected last subject sequence, which yields the ConflictError
// when another relay advanced the run; a bus stream is agentwire.bus.<network>.<channel-token>
// with the same guarded publish giving the gap-free seq (retried on a conflict, since the relay
// does not choose a message's seq); envelopes go to ENVOY_NOTIFICATIONS with Nats-Msg-Id
// (envelope.md §4.3, prefixed by the org) so the stream's duplicate window does the 72 h dedupe
// and its stream sequence is the store sequence; the Subscribe methods map to core NATS
// subscriptions on those subjects, which is how fan-out crosses relays.
//
// Every backend must pass the shared conformance suite in package storetest (Run, RunBus and
// RunNotifications).
package store
