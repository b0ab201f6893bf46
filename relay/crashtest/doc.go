// Package crashtest holds the relay's crash test (relay.md §4 Durability): it builds the
// agentwire binary, runs `agentwire serve` as a child process on a real SQLite file, ingests
// runs concurrently from several HTTP clients, and kills the child with SIGKILL at random
// moments. After every restart it checks that every acknowledged event is present exactly once,
// that no batch is half-applied (each in-doubt batch is either wholly stored or wholly absent),
// and that each run's served snapshot (its stored checkpoint re-reduced with the events after
// it) equals re-reducing its stored events; after the last stop it opens the database and
// checks each stored checkpoint against the events it covers.
//
// TestCrashRecoveryLanes does the same for the bus and notification lanes: hive messages posted
// concurrently on one channel and envelopes with minted dedupe keys, resent with the same
// client_msg_id or envelope when a kill cut the answer. After every restart each acknowledged
// message is stored exactly once with the gid and seq it was acknowledged with, the channel's
// seq runs 1…N with no gap, and each acknowledged envelope is stored exactly once with its
// acknowledged store sequence.
//
// The test is part of `go test ./...` and takes well under two minutes; `go test -short`
// skips it. It needs the `go` command (to build the binary) and POSIX signals.
package crashtest
