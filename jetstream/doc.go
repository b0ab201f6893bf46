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
// from the first chunk after the cursor, which a cached index of the run's chunk positions
// gives, or else a binary search over stream positions (each step one next-by-subject read;
// a chunk's headers carry its logical sequences). ListRuns reads every head of the org through
// a short-lived last-per-subject consumer, so it costs one message per run of the org, and
// keeps only the page. The event-ID check of an append uses a cached fingerprint set of the
// run's IDs (a hit is confirmed by scanning the run's chunks); without one it scans the run.
//
// # Group commit
//
// The atomic batches of one store instance (appends, checkpoints, bus writes) go through a
// committer per stream that merges the batches waiting into one atomic batch (at most 1,000
// messages, 8 MiB), each keeping its own guards and its messages contiguous; a merged batch
// refused by one guard is published again batch by batch, so each gets its own answer. On a
// single node the server commits one atomic batch at a time, at a fixed cost (it stages each
// in a file store of its own), so concurrent writers share it.
//
// # Bus (stream AGENTWIRE_BUS, bucket AGENTWIRE_BUSSTATE)
//
// A bus stream's entries (messages, task events, publishes) are on
// agentwire.bus.<org or ->.<network>.<name>, with their seq in header Aw-Seq. Each write is one
// atomic batch: the stream's counter subject (agentwire.busctr..., rolled up to its last
// message and never deleted, so seq has no gap and is never reused), the gid and client_msg_id
// index subjects (uniqueness across relays for the message's whole retention), for a task
// proposal its per-question subject (holding the proposal) and its per-vault and store-wide
// counters, each guarded by its subject's last sequence; then a question's due index, an
// answer's index under the question it replies to, the entry's expiry index (agentwire.busexp.
// <m|p>.<hour of its expiry>, naming the index messages that go with it), and the entry last.
// An entry is found from any of its index messages as the first entry after it (a batch is
// stored contiguously) and checked against the key. Receipts, acks, handoffs and announcements
// are KV entries updated by revision. Reads go to the leader: the stream's last entry first,
// then what the bus cache does not cover, from the first entry after the cursor (cache or
// binary search). The sweeper walks the expiry index hour by hour and deletes each expired
// entry, then its index messages, then its expiry index, so an interrupted sweep is finished by
// the next; every relay's sweeper is idempotent. DueQuestions walks the due index, which a
// proposal, a settling answer or expiry empties.
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
// # Presence
//
// Bus presence is live only (relay.md §5.1.3): the store relays it over core NATS, on subjects
// no stream captures ([store.PresenceRelay]): updates on agentwire.presence.<org>.<vault>, and
// snapshot requests on agentwire.presnap.<org>.<vault>, which every other relay answers with
// its sockets' last updates within 250 ms. Each message names the store instance that sent it,
// which skips its own.
//
// # Wake-ups
//
// Subscribe, SubscribeStream and SubscribeEnvelopes are fed by one ordered consumer per stream
// per store instance, which sees committed messages only (relay.md §5.1.5): a commit by any
// relay wakes the subscribers of every relay. A commit of this instance wakes its subscribers
// as it is acknowledged, and the consumer skips its echo; a relay on this store re-reads a run
// after a wake-up no frame of its own follows within [RelayStoreRecheck]. A consumer that loses
// its server (1 s heartbeats) is recreated from the last message it delivered, and when it
// reports the loss, or the connection comes back, every subscriber of the lane is woken to
// re-read, so a node loss delays wake-ups but never loses one.
//
// # Memory
//
// Every in-memory structure has a budget that no client can push past; what does not fit is
// read from the stream leader instead, so a budget costs reads, never correctness
// ([Store.CacheStats] reports the accounting):
//   - Run cache, Options.RunCacheBytes (64 MiB): per run its head, an index of a contiguous
//     range of its chunk positions (32 bytes a chunk) and a set of 64-bit fingerprints of its
//     event IDs (8 bytes a slot, at most three quarters full). Memory is reserved before a
//     structure grows, evicting the least recently used runs first; one run's index and set
//     take at most a quarter of the budget (an index keeps its newer half, a set that does not
//     fit is dropped and that run's ID checks scan its chunks).
//   - Bus cache, Options.BusCacheBytes (32 MiB): per stream its counter and guard, and a
//     contiguous range of recent entries with their gid and client_msg_id keys, accounted by
//     their strings and data plus a fixed overhead; least recently used streams go first, one
//     stream takes at most a quarter.
//   - Envelope orgs, Options.EnvelopeOrgs (4,096 orgs, at most about 2.5 MiB with 512-byte
//     ids): each org's last envelope sequence; an org dropped from it is found by one scan
//     of the stream's headers.
//   - Queues: a committer holds at most 256 waiting batches per stream (writers beyond wait),
//     each bounded by the request limits; wake-up channels hold one value per subscriber.
//   - Per call: scans stream (ListRuns, DueQuestions and the handoff, announcement and sweep
//     scans keep at most their limit), a streamed append buffers its batch (bounded by the
//     relay's request limits), reads hold their page.
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
