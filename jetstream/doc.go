// Package jetstream is the scale-out backend of the relay's [store.Store] (relay.md §5: `agentwire
// serve --store jetstream`): several relay processes share one NATS JetStream, embedded in
// process for one machine ([OpenEmbedded]) or a cluster ([Open]), and give the guarantees of
// one process. Ordering, uniqueness and dedupe are decided by the server (expected last subject
// sequences, message ids), never by one relay's memory; what a relay keeps in memory is a cache
// of committed messages that a refused guard corrects.
//
// # Runs (stream AGENTWIRE_RUNS)
//
// A run has three subjects (tokens are the unpadded base64url of the ids, relay.md §5.1.1):
// agentwire.runs.<org>.<run> carries its events as chunk messages of consecutive events
// (headers Aw-First, Aw-Last, Aw-Count; an event larger than a chunk spans several, Aw-Part
// i/n), agentwire.runsnap.<org>.<run> its checkpoint in chunks, and agentwire.runhead.<org>.<run>
// its head record (status, counters, times, where the checkpoint is). One AppendRun is one
// atomic batch (chunks, the checkpoint chunks when the batch carries one, the head last), its
// first message guarded by the head subject's last sequence: two relays racing on a run cannot
// interleave, and the loser re-reads the head and answers a ConflictError, or retries when the
// head still matches (a checkpoint written meanwhile, or a cluster proposal in flight). The head
// and the first checkpoint chunk roll their subject up, so old heads and checkpoints go in the
// same commit. A streamed append is buffered and published whole at its end. Reads go to the
// stream leader (no direct get): the head by last-by-subject, the chunks by next-by-subject
// from a per-run index of chunk positions. ListRuns reads every head of the org through a
// short-lived last-per-subject consumer, so it costs one message per run of the org.
//
// # Bus (stream AGENTWIRE_BUS, bucket AGENTWIRE_BUSSTATE)
//
// A bus stream's entries (messages, task events, publishes) are on
// agentwire.bus.<org or ->.<network>.<name>. Each write is one atomic batch: the stream's
// counter subject (agentwire.busctr..., never deleted, so seq has no gap and is never reused),
// the gid and client_msg_id index subjects (uniqueness across relays for the message's whole
// retention), for a task proposal its per-question, per-vault and store-wide counters, each
// guarded by its subject's last sequence, then the entry. Receipts, acks, handoffs and
// announcements are KV entries updated by revision. Reads come from a view of the bus stream
// fed by one ordered consumer per relay and synced, before each read, to the leader's last
// message; the view holds the stream's unexpired entries in memory. The sweeper deletes an
// expired entry with its index messages; every relay's sweeper is idempotent.
//
// # Notifications (stream ENVOY_NOTIFICATIONS, bucket AGENTWIRE_SESSIONS)
//
// Envelopes are stored on their topic in ENVOY_NOTIFICATIONS exactly as envelope.md §5.1
// defines it, with the org's token in header Aw-Org, the stored time in Aw-Stored-At and
// Nats-Msg-Id = <org-token>:<envelope.md §4.3 id> (exactly the §4.3 id for Options.EnvoyOrg), so
// the stream's 72 h duplicate window, on the server's clock, answers duplicates. The stored
// time never goes back per relay. The store creates or updates the stream only when it owns it
// (embedded, or Options.OwnEnvoyStream), and otherwise refuses to open when it is missing or
// differs. Session deliveries are KV entries updated by revision.
//
// # Wake-ups
//
// Subscribe, SubscribeStream and SubscribeEnvelopes are fed by one ordered consumer per stream
// per store instance, which sees committed messages only (relay.md §5.1.5): a commit by any
// relay wakes the subscribers of every relay.
//
// # What a successful return means
//
// A nil error means the stream acknowledged the write: on the embedded single node, which runs
// with sync_interval always, the batch is fsynced before the acknowledgement (relay.md §4, as
// on SQLite); on a cluster, a quorum of the stream's replicas has it, each written with the
// server's sync interval (2 minutes by default), so a power loss of the whole quorum within
// that interval can lose acknowledged writes unless the servers run with sync_interval always.
// Replicas apply when a stream is created (Options.Replicas); "quorum" holds only for 3 or more.
package jetstream
