package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// modelAppend is AppendRun's event rule (store.RunStore.AppendRun, check 3) written as plainly
// as possible: the oracle for FuzzAppendBatch.
func modelAppend(stored []store.Event, batch []store.Event) (index int, reason error) {
	seqs, ids := map[int64]bool{}, map[string]bool{}
	var prev int64
	for _, e := range stored {
		seqs[e.LogicalSequence], ids[e.EventID] = true, true
		prev = e.LogicalSequence
	}
	for i, e := range batch {
		if e.LogicalSequence <= prev {
			if seqs[e.LogicalSequence] {
				return i, store.ErrDuplicateSequence
			}
			return i, store.ErrOutOfOrder
		}
		if ids[e.EventID] {
			return i, store.ErrDuplicateEventID
		}
		seqs[e.LogicalSequence], ids[e.EventID] = true, true
		prev = e.LogicalSequence
	}
	return -1, nil
}

// decodeFuzzBatch turns fuzz bytes into a stored prefix and a batch: byte 0 picks how many
// stored events (sequences 2, 4, 6, … with IDs base-0, base-1, …); then each byte pair is one
// batch event: a signed step from the previous sequence and an ID selector (values ≥ 12 reuse
// a stored ID, others pick one of twelve fresh IDs).
func decodeFuzzBatch(run string, data []byte) (stored, batch []store.Event) {
	if len(data) == 0 {
		return nil, nil
	}
	n := int(data[0] % 5)
	for i := range n {
		stored = append(stored, storetest.Event(run, int64(2*(i+1)), fmt.Sprintf("base-%d", i)))
	}
	prev := int64(2 * n)
	for i := 1; i+1 < len(data) && len(batch) < 64; i += 2 {
		seq := max(prev+int64(int8(data[i])), 1)
		sel := data[i+1] % 16
		id := fmt.Sprintf("id-%d", sel)
		if sel >= 12 {
			id = fmt.Sprintf("base-%d", int(sel-12)%max(n, 1))
		}
		batch = append(batch, storetest.Event(run, seq, id))
		prev = seq
	}
	return stored, batch
}

// FuzzAppendBatch: for any batch, the SQLite backend refuses exactly where the contract's rule
// says, with the same reason, and stores the whole batch or nothing.
func FuzzAppendBatch(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 1, 0, 1, 1, 1, 2},
		{3, 1, 0, 1, 0},          // same ID twice
		{3, 0xff, 0},             // 6-1 = 5, a gap below the last stored: out of order
		{3, 0xfe, 0},             // 6-2 = 4, a stored sequence: duplicate
		{2, 0xfd, 0},             // 4-3 = 1, never stored: out of order
		{4, 1, 12, 1, 0},         // stored ID
		{1, 5, 0, 0, 1},          // same sequence twice in the batch
		{0, 3, 0, 0xfe, 1},       // decreasing into nothing: out of order
		{2, 2, 0, 2, 1, 0xfe, 2}, // back onto an earlier batch sequence
	} {
		f.Add(seed)
	}
	s, err := sqlite.Open(filepath.Join(f.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var counter atomic.Int64
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		run := fmt.Sprintf("run-%d", counter.Add(1))
		stored, batch := decodeFuzzBatch(run, data)
		if len(batch) == 0 {
			return
		}
		var last int64
		if len(stored) > 0 {
			last = stored[len(stored)-1].LogicalSequence
			if _, err := s.AppendRun(ctx, "o", run, store.AppendRequest{Events: stored, Snapshot: []byte("base"), Status: "running"}); err != nil {
				t.Fatalf("base: %v", err)
			}
		}
		wantIndex, wantReason := modelAppend(stored, batch)
		_, err := s.AppendRun(ctx, "o", run, store.AppendRequest{ExpectedLastLogicalSequence: last, Events: batch, Snapshot: []byte("new"), Status: "running"})
		want := stored
		if wantReason == nil {
			if err != nil {
				t.Fatalf("AppendRun: %v, want success", err)
			}
			want = append(append([]store.Event{}, stored...), batch...)
		} else {
			var ee *store.EventError
			if !errors.As(err, &ee) || ee.Index != wantIndex || !errors.Is(err, wantReason) {
				t.Fatalf("AppendRun: %v, want index %d %v", err, wantIndex, wantReason)
			}
		}
		got, err := s.ReadEvents(ctx, "o", run, 0, 1000)
		if len(want) == 0 {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("refused first batch: ReadEvents = %d events, %v; want ErrNotFound", len(got), err)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("stored %d events (%v), want %d", len(got), err, len(want))
		}
		for i := range got {
			if got[i].LogicalSequence != want[i].LogicalSequence || got[i].EventID != want[i].EventID {
				t.Fatalf("event %d = %d/%s, want %d/%s", i, got[i].LogicalSequence, got[i].EventID, want[i].LogicalSequence, want[i].EventID)
			}
		}
	})
}

// FuzzReceipts: any sequence of receipts for two messages and three recipients applies exactly
// what the rule of store.BusStore.AppendReceipt says (a state never moves back, read implies
// delivered, a repeat applies nothing), and an unknown gid is ErrNotFound.
func FuzzReceipts(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 4, 0, 4},        // delivered, read, delivered, read for one recipient
		{4, 0},              // read first
		{1, 5, 2, 6, 8, 12}, // other recipients and the second message
		{16, 20},            // unknown gid
	} {
		f.Add(seed)
	}
	s, err := sqlite.Open(filepath.Join(f.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var counter atomic.Int64
	ctx := context.Background()
	k := store.OrgStream("o", storetest.ChannelGeneral)
	f.Fuzz(func(t *testing.T, ops []byte) {
		n := counter.Add(1)
		var gids []string
		for i := range 2 {
			m, _, err := s.AppendMessage(ctx, storetest.Message(k, "o", "i", fmt.Sprintf("f%d-%d", n, i)))
			if err != nil {
				t.Fatal(err)
			}
			gids = append(gids, m.GID)
		}
		rank := map[[2]int]int{}
		states := []string{store.ReceiptDelivered, store.ReceiptRead}
		for i, b := range ops {
			if i == 64 {
				break
			}
			by, state, msg := int(b%4), int(b>>2)%2, int(b>>3)%3
			if by == 3 {
				by = 0
			}
			if msg == 2 {
				_, err := s.AppendReceipt(ctx, k, "unknown", "r", states[state], time.Now())
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("op %d: unknown gid: %v", i, err)
				}
				continue
			}
			applied, err := s.AppendReceipt(ctx, k, gids[msg], fmt.Sprintf("r%d", by), states[state], time.Now())
			if err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			key := [2]int{msg, by}
			var want []string
			for r := rank[key] + 1; r <= state+1; r++ {
				want = append(want, states[r-1])
			}
			rank[key] = max(rank[key], state+1)
			if fmt.Sprint(applied) != fmt.Sprint(want) {
				t.Fatalf("op %d (msg %d by %d %s): applied %v, want %v", i, msg, by, states[state], applied, want)
			}
		}
	})
}

// FuzzEnvelopeDedupe: any sequence of publishes (message ids, orgs, times going forward and
// back) is deduplicated, sequenced and time-clamped exactly as store.NotificationStore says.
func FuzzEnvelopeDedupe(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 1, 0, 71, 0, 1},        // repeats inside the window
		{0, 0, 0, 72, 0, 0},        // one window later
		{1, 0, 5, 0, 1, 0},         // the other org, the same id
		{3, 0, 3, 0},               // no message id
		{0, 100, 0, 0x80, 0, 0x80}, // the clock going back is clamped
	} {
		f.Add(seed)
	}
	ctx := context.Background()
	const window = 72 * time.Hour
	// A store serves storeInputs inputs (opening one per input cost most of the time): each
	// input has orgs of its own, and starts its clock 20,000 hours after the previous input's,
	// past anything an input can reach (at most 64 ops of ±128 hours), so the store-wide clock
	// the store clamps to is below the input's first time; the store-wide sequence continues.
	// Times stay below 2262 (nanoseconds since 1970 in an int64) with a fresh store every
	// storeInputs inputs.
	const storeInputs = 50
	dir := f.TempDir()
	var s *sqlite.Store
	f.Cleanup(func() {
		if s != nil {
			s.Close()
		}
	})
	var inputs, lastSeq int64
	f.Fuzz(func(t *testing.T, ops []byte) {
		n := inputs % storeInputs // this input's place in its store
		if n == 0 {
			if s != nil {
				s.Close()
			}
			var err error
			if s, err = sqlite.Open(filepath.Join(dir, fmt.Sprintf("s%d.db", inputs)), sqlite.Options{}); err != nil {
				t.Fatal(err)
			}
			lastSeq = 0
		}
		inputs++
		orgs := []string{fmt.Sprintf("a%d", inputs), fmt.Sprintf("b%d", inputs)}
		at := storetest.T0.Add(time.Duration(n+1) * 20000 * time.Hour)
		var clock time.Time
		type orig struct {
			seq int64
			at  time.Time
		}
		latest := map[[2]string]orig{}
		stored := lastSeq
		defer func() { lastSeq = stored }()
		for i := 0; i+1 < len(ops) && i < 128; i += 2 {
			sel, dt := ops[i], int8(ops[i+1])
			org := orgs[(sel>>2)%2]
			id := fmt.Sprintf("k%d", sel%4)
			if sel%4 == 3 {
				id = ""
			}
			at = at.Add(time.Duration(dt) * time.Hour)
			// The time the store uses: raised to its clock, the last stored time (a duplicate
			// stores nothing, so it does not move the clock).
			use := clock
			if at.After(clock) {
				use = at
			}
			got, dup, err := s.AppendEnvelope(ctx, org, storetest.Envelope("notifications.agent.s", id, at, fmt.Sprint(i)), window)
			if err != nil {
				t.Fatal(err)
			}
			o, seen := latest[[2]string{org, id}]
			wantDup := id != "" && seen && use.Sub(o.at) < window
			if dup != wantDup {
				t.Fatalf("op %d (%s %q at +%v): duplicate %v, want %v", i/2, org, id, use.Sub(clock), dup, wantDup)
			}
			if dup {
				if got.Seq != o.seq || !got.StoredAt.Equal(o.at) {
					t.Fatalf("op %d: duplicate answered %d at %v, want %d at %v", i/2, got.Seq, got.StoredAt, o.seq, o.at)
				}
				continue
			}
			stored++
			clock = use
			if got.Seq != stored || !got.StoredAt.Equal(clock) {
				t.Fatalf("op %d: stored as %d at %v, want %d at %v", i/2, got.Seq, got.StoredAt, stored, clock)
			}
			latest[[2]string{org, id}] = orig{got.Seq, clock}
		}
	})
}

// FuzzSessionKeys: any dedupe keys (quotes, backslashes, JSON and SQL syntax, non-ASCII,
// invalid UTF-8) recorded for a session are found again exactly, with their seqs, by one lookup
// that also asks for keys never recorded; keys a caller may not store are refused whole with
// ErrInvalid and store nothing.
func FuzzSessionKeys(f *testing.F) {
	for _, seed := range []struct{ a, b, c string }{
		{"slack.Ev1", "github.d-7", "never"},
		{`quote"d`, `back\slash`, `"]`},
		{"ünï\u2028cødé", "[1,2]", "null"},
		{"a\xffb", "ok", ""},
		{"same", "same", "same"},
		{"' OR 1=1 --", "%", "_"},
	} {
		f.Add(seed.a, seed.b, seed.c)
	}
	s, err := sqlite.Open(filepath.Join(f.TempDir(), sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var counter atomic.Int64
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, a, b, c string) {
		session := fmt.Sprintf("ses-%d", counter.Add(1))
		ds := []store.SessionDelivery{{DedupeKey: a, Seq: 1}, {DedupeKey: b, Seq: 2}}
		err := s.RecordSessionDeliveries(ctx, "o", session, ds, storetest.T0, storetest.Window)
		valid := a != "" && b != "" && utf8.ValidString(a) && utf8.ValidString(b)
		if !valid {
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("invalid keys %q %q: %v, want ErrInvalid", a, b, err)
			}
			if ok := c != "" && utf8.ValidString(c); ok {
				if got, err := s.SessionDeliveries(ctx, "o", session, []string{c}, time.Time{}); err != nil || len(got) != 0 {
					t.Fatalf("after a refused record: %v, %v", got, err)
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("record %q %q: %v", a, b, err)
		}
		keys := []string{a, b}
		if c != "" && utf8.ValidString(c) {
			keys = append(keys, c)
		}
		got, err := s.SessionDeliveries(ctx, "o", session, keys, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{a: 1}
		if b != a {
			want[b] = 2
		}
		if len(got) != len(want) {
			t.Fatalf("lookup of %q: %v, want %v", keys, got, want)
		}
		for k, seq := range want {
			if d, ok := got[k]; !ok || d.DedupeKey != k || d.Seq != seq || !d.DeliveredAt.Equal(storetest.T0) {
				t.Fatalf("lookup of %q: %q → %+v, want seq %d", keys, k, d, seq)
			}
		}
	})
}
