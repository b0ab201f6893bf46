// Package crashtest holds the relay's crash test (relay.md §4 Durability): it builds the
// agentwire binary, runs `agentwire serve` as a child process on a real SQLite file (and, in
// TestCrashRecovery/jetstream, on a JetStream server embedded in the child), ingests
// runs concurrently from several HTTP clients, and kills the child with SIGKILL at random
// moments. After every restart it checks that every acknowledged event is present exactly once,
// that no batch is half-applied (each in-doubt batch is either wholly stored or wholly absent),
// and that each run's served snapshot (its stored checkpoint re-reduced with the events after
// it) equals re-reducing its stored events; after the last stop it opens the database and
// checks each stored checkpoint against the events it covers.
//
// TestCrashRecoveryLanes does the same for the bus and notification lanes: hive messages posted
// concurrently (POST /v1/messages) and `publish` frames sent over WebSocket sockets (after a
// hello) on the same two channels, and envelopes with minted dedupe keys, resent with the same
// client_msg_id or envelope when a kill cut the answer; each publisher also resends its last
// acknowledged publish on its first socket after a restart. After every restart, reading each
// channel by catch-up (GET /v1/bus/channels/{channel}/events), each acknowledged message and
// publish is stored exactly once at the seq (and gid) it was acknowledged with, the channel's
// seq over messages and publishes together runs 1…N with no gap or repeat, what an earlier
// restart found stored is unchanged, and the message history agrees; each acknowledged envelope
// is stored exactly once with its acknowledged store sequence; and every resend of a stored
// item, a send cut by a kill included, is answered with the original (hive.md S9).
//
// The test is part of `go test ./...` and takes well under two minutes; `go test -short`
// skips it. It needs the `go` command (to build the binary) and POSIX signals.
package crashtest
