// Package bench holds the relay's load benchmarks (issue 6 "Benchmarks / load"); it has no
// library code. Run them with
//
//	go test -run '^$' -bench . -benchtime 2s ./bench
//
// BenchmarkIngest measures durable ingest in events/s through the relay's whole write path
// (strict parse + validation + reduce + SQLite append with status, counters and, when due, a
// snapshot checkpoint, group-committed fsync) at batch sizes 1, 100 and 1,000 and 1, 8 and 64 concurrent writers, next to the
// ceiling of the same machine in the same run: raw SQLite WAL inserts of the same event rows at
// the same batch sizes (synchronous=FULL, one transaction per batch, the approach of the sqlite
// package's raw benchmark). Three kinds are measured:
//
//   - http: a real loopback HTTP relay (httptest) with NDJSON POSTs, the client in the same
//     process (so it shares the CPUs with the server);
//   - direct: relay.Server.Append without HTTP (the relay's own cost);
//   - raw: the SQLite ceiling.
//
// Each writer appends to its own runs and starts a new run every 1,000 events. The reducer
// snapshot (events.md §8.1 includes every event ID and fingerprint) grows with the run; the
// relay stores it as a checkpoint with a run's first batch and with the terminal batch, and in
// between in the background at doubling intervals (relay.Config.CheckpointEvery,
// CheckpointMinInterval), not with every batch. A batch of 64 events or more is streamed into
// the store (store.StreamAppender): parsed and reduced part by part while the store inserts
// the previous part.
//
// BenchmarkSSELatency measures publish→SSE-deliver latency (p50, p99) while events are
// produced at a fixed total rate and posted over HTTP: one run with 100 subscribers at 1,000 and
// 10,000 events/s (the latter is 1,000,000 deliveries/s), one run with 10 subscribers at 10,000
// events/s (the rate without the fan-out), and 100 runs with one subscriber each at 10,000
// events/s in total. An op is one published event; `resumes` counts subscribers cut by the
// slow-consumer policy (relay.md §3) that resumed from their last id; p50/p99 count from the
// instant an event was produced, pub-p50/p99 from the instant the POST carrying it was sent
// (a run's POSTs go one at a time, so an event produced during a POST waits for its answer);
// post-p50/p99 are the producers' POST round trips. Subscribers run in the same process (they share the two cores
// with the relay and the producers).
//
// BenchmarkBusThroughput measures durable bus messages/s: AppendMessage on the SQLite store with
// 1 and 8 writers (the ceiling), then WebSocket senders (1 and 8, each with 1 or 64 `message`
// frames in flight) with 10 listeners, unpaced and at a fixed 2,000 and 4,000 messages/s (the
// delivery latencies below saturation).
package bench
