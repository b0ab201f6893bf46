package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// RunBus runs the bus-lane suite ([store.BusStore]) as subtests of t: per-stream gap-free seq
// under concurrent senders, minted and supplied gids, client_msg_id idempotency, networks that
// never mix, scoped lookups whose every miss is the same ErrNotFound, history pages with thread
// and visibility filters, receipts that only move forward, task proposals at most once per
// question with per-vault numbers and a seq on the channel, retention and the sweeper, reopen,
// change notification and Close; and the publishes of [store.BusFrameStore]: one gap-free
// counter shared with messages and task events, idempotent resends, private visibility,
// retention; and handoffs: one per org and handoff_id, exactly one settlement and never after
// the deadline, pending offers per recipient, retention;
// hello announcements (latest time per pair, the instances that announced an agent in a vault
// since a time, expiry) and ack positions that never go down, both surviving a reopen.
func RunBus(t *testing.T, open Opener) {
	h := &harness{open: open}
	for _, c := range []struct {
		name string
		f    func(*testing.T, *harness)
	}{
		{"AppendAndGet", testBusAppendAndGet},
		{"InvalidArguments", testBusInvalidArguments},
		{"StreamsNeverMix", testBusStreamsNeverMix},
		{"Idempotency", testBusIdempotency},
		{"DuplicateGID", testBusDuplicateGID},
		{"ConcurrentSenders", testBusConcurrentSenders},
		{"QueuedInOrder", testBusQueuedInOrder},
		{"ReadMessages", testBusReadMessages},
		{"ReadStream", testBusReadStream},
		{"ReadBytes", testBusReadBytes},
		{"Receipts", testBusReceipts},
		{"TaskProposals", testBusTaskProposals},
		{"Retention", testBusRetention},
		{"OpaqueBytes", testBusOpaqueBytes},
		{"Reopen", testBusReopen},
		{"Announcements", testBusAnnouncements},
		{"Acks", testBusAcks},
		{"StateReopen", testBusStateReopen},
		{"Subscribe", testBusSubscribe},
		{"PublishInvalid", testBusPublishInvalid},
		{"PublishStream", testBusPublishStream},
		{"PublishIdempotency", testBusPublishIdempotency},
		{"PublishConcurrent", testBusPublishConcurrent},
		{"PublishRetention", testBusPublishRetention},
		{"PublishSubscribe", testBusPublishSubscribe},
		{"HandoffInvalid", testBusHandoffInvalid},
		{"HandoffLifecycle", testBusHandoffLifecycle},
		{"HandoffRetention", testBusHandoffRetention},
		{"CanceledContext", testBusCanceledContext},
		{"Closed", testBusClosed},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, h) })
	}
}

// RunAll runs [Run], [RunBus] and [RunNotifications] as the subtests runs, bus and
// notifications of t: the whole contract of [store.Store].
func RunAll(t *testing.T, open Opener) {
	t.Run("runs", func(t *testing.T) { Run(t, open) })
	t.Run("bus", func(t *testing.T) { RunBus(t, open) })
	t.Run("notifications", func(t *testing.T) { RunNotifications(t, open) })
}

// Channels the suite uses (hive.md §1.6 form; the store treats them as opaque text).
const (
	ChannelGeneral = "org:acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"
	ChannelOps     = "org:acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/ops"
	Vault          = "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42"
)

// retention is the suite's ordinary message lifetime: far enough that no test run reaches it.
const retention = 30 * 24 * time.Hour

// Message returns the write the suite stores for (stream, sender org, sender instance,
// client_msg_id): a broadcast `finding` stamped now, expiring after 30 days, whose Data names
// its stream, sender and client_msg_id so a misplaced message is visible in a failure.
func Message(stream store.StreamKey, org, instance, clientMsgID string) store.MessageWrite {
	now := time.Now()
	return store.MessageWrite{
		Stream:         stream,
		SenderOrg:      org,
		SenderInstance: instance,
		ClientMsgID:    clientMsgID,
		Type:           "finding",
		ServerTime:     now,
		ExpiresAt:      now.Add(retention),
		Data: fmt.Appendf(nil, `{"network":%q,"org":%q,"name":%q,"from":%q,"instance":%q,"client_msg_id":%q}`,
			stream.Network, stream.Org, stream.Name, org, instance, clientMsgID),
	}
}

// testBusQueuedInOrder: a store.MessageQueuer stores messages queued one after the other on a
// stream in that order (seq = queue order) while other senders append to the same stream,
// answers a resend queued behind its original with the original, and answers a refused call
// through its wait. (Skipped for a backend that does not queue.)
func testBusQueuedInOrder(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	q, ok := s.(store.MessageQueuer)
	if !ok {
		t.Skip("the backend does not queue messages")
	}
	ctx := context.Background()
	k := store.OrgStream("o", ChannelGeneral)
	var others sync.WaitGroup
	for g := range 3 {
		others.Add(1)
		go func() {
			defer others.Done()
			for i := range 30 {
				if _, _, err := s.AppendMessage(ctx, Message(k, "o", fmt.Sprint("other-", g), fmt.Sprint(i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	const n = 200
	waits := make([]func() (store.StoredMessage, bool, error), 0, n+1)
	for i := range n {
		waits = append(waits, q.QueueMessage(ctx, Message(k, "o", "piper", fmt.Sprint("m", i))))
	}
	waits = append(waits, q.QueueMessage(ctx, Message(k, "o", "piper", "m7"))) // a resend
	var last int64
	var gid7 string
	for i, wait := range waits {
		m, replayed, err := wait()
		if err != nil {
			t.Fatalf("queued message %d: %v", i, err)
		}
		switch {
		case i == n:
			if !replayed || m.GID != gid7 {
				t.Fatalf("resend: replayed %v gid %s, want the original %s", replayed, m.GID, gid7)
			}
		case replayed || m.Seq <= last:
			t.Fatalf("queued message %d: seq %d after %d (replayed %v)", i, m.Seq, last, replayed)
		default:
			last = m.Seq
			if i == 7 {
				gid7 = m.GID
			}
		}
	}
	others.Wait()
	bad := Message(k, "o", "piper", "")
	if _, _, err := q.QueueMessage(ctx, bad)(); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("refused queued message: %v, want ErrInvalid", err)
	}
}

func send(t *testing.T, s store.Store, m store.MessageWrite) store.StoredMessage {
	t.Helper()
	got, replayed, err := s.AppendMessage(context.Background(), m)
	if err != nil {
		t.Fatalf("AppendMessage(%s %s/%s %s): %v", m.Stream.Name, m.SenderOrg, m.SenderInstance, m.ClientMsgID, err)
	}
	if replayed {
		t.Fatalf("AppendMessage(%s): replayed, want a new message", m.ClientMsgID)
	}
	return got
}

// sameMessage compares every field of two stored messages.
func sameMessage(t *testing.T, what string, got, want store.StoredMessage) {
	t.Helper()
	if msgKey(got) != msgKey(want) || !bytes.Equal(got.Data, want.Data) || !got.Deadline.Equal(want.Deadline) ||
		!got.ServerTime.Equal(want.ServerTime) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("%s:\n got %s\nwant %s", what, describeMessage(got), describeMessage(want))
	}
}

type messageKey struct {
	gid, network, org, name, senderOrg, senderInstance, clientMsgID, typ, thread, replyTo, toOrg, toInstance string
	seq                                                                                                      int64
}

func msgKey(m store.StoredMessage) messageKey {
	return messageKey{m.GID, m.Stream.Network, m.Stream.Org, m.Stream.Name, m.SenderOrg, m.SenderInstance, m.ClientMsgID,
		m.Type, m.ThreadID, m.ReplyTo, m.ToOrg, m.ToInstance, m.Seq}
}

func describeMessage(m store.StoredMessage) string {
	return fmt.Sprintf("%+v deadline=%v server_time=%v expires_at=%v data=%s", msgKey(m), m.Deadline, m.ServerTime, m.ExpiresAt, m.Data)
}

func sameMessages(t *testing.T, what string, got, want []store.StoredMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d messages %v, want %d %v", what, len(got), seqsOf(got), len(want), seqsOf(want))
	}
	for i := range got {
		sameMessage(t, fmt.Sprintf("%s: message %d", what, i), got[i], want[i])
	}
}

func seqsOf(ms []store.StoredMessage) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Seq
	}
	return out
}

func readMessages(t *testing.T, s store.Store, k store.StreamKey, q store.ReadQuery) []store.StoredMessage {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1 << 30
	}
	ms, err := s.ReadMessages(context.Background(), k, q)
	if err != nil {
		t.Fatalf("ReadMessages(%+v, %+v): %v", k, q, err)
	}
	return ms
}

func lastSeq(t *testing.T, s store.Store, k store.StreamKey) int64 {
	t.Helper()
	n, err := s.StreamLastSeq(context.Background(), k)
	if err != nil {
		t.Fatalf("StreamLastSeq(%+v): %v", k, err)
	}
	return n
}

// notFound checks that err is exactly the store's not-found answer: the same error text for
// every reason, so nothing tells an unknown gid from a foreign or expired one.
func notFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) || err.Error() != store.ErrNotFound.Error() {
		t.Fatalf("%s: %v, want exactly %v", what, err, store.ErrNotFound)
	}
}

func testBusAppendAndGet(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	scope := store.MessageScope{Org: "org-a"}

	// A minted gid, its own thread, seq 1.
	w1 := Message(k, "org-a", "inst-1", "c1")
	m1 := send(t, s, w1)
	if m1.GID == "" || m1.Seq != 1 || m1.ThreadID != m1.GID {
		t.Fatalf("first message: gid %q seq %d thread %q; want a minted gid, seq 1, thread = gid", m1.GID, m1.Seq, m1.ThreadID)
	}
	want1 := store.StoredMessage{MessageWrite: w1, Seq: 1}
	want1.GID, want1.ThreadID = m1.GID, m1.GID
	sameMessage(t, "AppendMessage answer", m1, want1)

	// A caller-supplied gid, an answer in m1's thread, bound to one instance, seq 2.
	w2 := Message(k, "org-a", "inst-2", "c2")
	w2.GID, w2.Type, w2.ThreadID, w2.ReplyTo = "g-2", store.MessageTypeAnswer, m1.GID, m1.GID
	w2.ToOrg, w2.ToInstance = "org-a", "inst-1"
	m2 := send(t, s, w2)
	sameMessage(t, "supplied gid", m2, store.StoredMessage{MessageWrite: w2, Seq: 2})

	// A question with a deadline.
	w3 := Message(k, "org-a", "inst-1", "c3")
	w3.Type, w3.Deadline = "question", time.Now().Add(24*time.Hour)
	m3 := send(t, s, w3)
	if m3.Seq != 3 || !m3.Deadline.Equal(w3.Deadline) {
		t.Fatalf("question: seq %d deadline %v", m3.Seq, m3.Deadline)
	}
	for _, m := range []store.StoredMessage{m1, m2, m3} {
		got, err := s.GetMessage(ctx, scope, m.GID)
		if err != nil {
			t.Fatalf("GetMessage(%s): %v", m.GID, err)
		}
		sameMessage(t, "GetMessage "+m.GID, got, m)
	}
	sameMessages(t, "ReadMessages", readMessages(t, s, k, store.ReadQuery{}), []store.StoredMessage{m1, m2, m3})
	if n := lastSeq(t, s, k); n != 3 {
		t.Fatalf("StreamLastSeq = %d, want 3", n)
	}
	if n := lastSeq(t, s, store.OrgStream("org-a", ChannelOps)); n != 0 {
		t.Fatalf("StreamLastSeq of an unused stream = %d, want 0", n)
	}
	// Minted gids never repeat.
	seen := map[string]bool{m1.GID: true, m2.GID: true, m3.GID: true}
	for i := range 50 {
		m := send(t, s, Message(k, "org-a", "inst-1", fmt.Sprintf("many-%d", i)))
		if seen[m.GID] {
			t.Fatalf("gid %s minted twice", m.GID)
		}
		seen[m.GID] = true
		if m.Seq != int64(4+i) {
			t.Fatalf("message %d: seq %d, want %d", i, m.Seq, 4+i)
		}
	}
}

func testBusInvalidArguments(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("o", ChannelGeneral)
	good := Message(k, "o", "i", "c")
	with := func(f func(*store.MessageWrite)) store.MessageWrite {
		m := good
		f(&m)
		return m
	}
	for _, c := range []struct {
		name string
		m    store.MessageWrite
	}{
		{"no network", with(func(m *store.MessageWrite) { m.Stream.Network = "" })},
		{"unknown network", with(func(m *store.MessageWrite) { m.Stream.Network = "mesh" })},
		{"org stream without org", with(func(m *store.MessageWrite) { m.Stream.Org = "" })},
		{"swarm stream with org", with(func(m *store.MessageWrite) {
			m.Stream = store.StreamKey{Network: store.NetworkSwarm, Org: "o", Name: "sw"}
		})},
		{"no stream name", with(func(m *store.MessageWrite) { m.Stream.Name = "" })},
		{"stream name over the id limit", with(func(m *store.MessageWrite) { m.Stream.Name = strings.Repeat("c", store.MaxIDBytes+1) })},
		{"org over the id limit", with(func(m *store.MessageWrite) {
			m.Stream.Org, m.SenderOrg = strings.Repeat("o", store.MaxIDBytes+1), strings.Repeat("o", store.MaxIDBytes+1)
		})},
		{"no sender org", with(func(m *store.MessageWrite) { m.SenderOrg = "" })},
		{"no sender instance", with(func(m *store.MessageWrite) { m.SenderInstance = "" })},
		{"no client_msg_id", with(func(m *store.MessageWrite) { m.ClientMsgID = "" })},
		{"no type", with(func(m *store.MessageWrite) { m.Type = "" })},
		{"another org's stream", with(func(m *store.MessageWrite) { m.SenderOrg = "p" })},
		{"recipient instance without org", with(func(m *store.MessageWrite) { m.ToInstance = "i2" })},
		{"recipient org without instance", with(func(m *store.MessageWrite) { m.ToOrg = "o" })},
		{"recipient in another org", with(func(m *store.MessageWrite) { m.ToOrg, m.ToInstance = "p", "i2" })},
		{"deadline on a swarm", with(func(m *store.MessageWrite) { m.Stream, m.Deadline = store.SwarmStream("sw"), time.Now() })},
		{"no server time", with(func(m *store.MessageWrite) { m.ServerTime = time.Time{} })},
		{"no data", with(func(m *store.MessageWrite) { m.Data = nil })},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := s.AppendMessage(ctx, c.m); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("AppendMessage: %v, want ErrInvalid", err)
			}
		})
	}
	if n := lastSeq(t, s, k); n != 0 {
		t.Fatalf("invalid sends took seq %d", n)
	}
	now := time.Now()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"GetMessage empty gid", func() error { _, err := s.GetMessage(ctx, store.MessageScope{Org: "o"}, ""); return err }},
		{"LookupClientMsg empty org", func() error { _, err := s.LookupClientMsg(ctx, "", "i", "c"); return err }},
		{"LookupClientMsg empty instance", func() error { _, err := s.LookupClientMsg(ctx, "o", "", "c"); return err }},
		{"LookupClientMsg empty client_msg_id", func() error { _, err := s.LookupClientMsg(ctx, "o", "i", ""); return err }},
		{"ReadMessages bad stream", func() error {
			_, err := s.ReadMessages(ctx, store.StreamKey{Network: "org", Name: "c"}, store.ReadQuery{Limit: 1})
			return err
		}},
		{"ReadMessages negative after", func() error { _, err := s.ReadMessages(ctx, k, store.ReadQuery{After: -1, Limit: 1}); return err }},
		{"ReadMessages zero limit", func() error { _, err := s.ReadMessages(ctx, k, store.ReadQuery{}); return err }},
		{"ReadMessages half viewer", func() error {
			_, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 1, Viewer: &store.Viewer{Org: "o"}})
			return err
		}},
		{"ReadStream zero limit", func() error { _, err := s.ReadStream(ctx, k, store.ReadQuery{}); return err }},
		{"StreamLastSeq bad stream", func() error { _, err := s.StreamLastSeq(ctx, store.StreamKey{Network: "swarm"}); return err }},
		{"receipt empty gid", func() error { _, err := s.AppendReceipt(ctx, k, "", "a", store.ReceiptRead, now); return err }},
		{"receipt empty by", func() error { _, err := s.AppendReceipt(ctx, k, "g", "", store.ReceiptRead, now); return err }},
		{"receipt unknown state", func() error { _, err := s.AppendReceipt(ctx, k, "g", "a", "seen", now); return err }},
		{"receipt zero time", func() error { _, err := s.AppendReceipt(ctx, k, "g", "a", store.ReceiptRead, time.Time{}); return err }},
		{"receipt bad stream", func() error {
			_, err := s.AppendReceipt(ctx, store.StreamKey{}, "g", "a", store.ReceiptRead, now)
			return err
		}},
		{"proposal on a swarm", func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: store.SwarmStream("sw"), Vault: Vault, QuestionGID: "q", CreatedAt: now, Data: []byte("x")})
			return err
		}},
		{"proposal without vault", func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, QuestionGID: "q", CreatedAt: now, Data: []byte("x")})
			return err
		}},
		{"proposal without question", func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: Vault, CreatedAt: now, Data: []byte("x")})
			return err
		}},
		{"proposal without time", func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: Vault, QuestionGID: "q", Data: []byte("x")})
			return err
		}},
		{"proposal without data", func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: Vault, QuestionGID: "q", CreatedAt: now})
			return err
		}},
		{"ListTaskProposals empty org", func() error { _, err := s.ListTaskProposals(ctx, "", store.ProposalQuery{Limit: 1}); return err }},
		{"ListTaskProposals zero limit", func() error { _, err := s.ListTaskProposals(ctx, "o", store.ProposalQuery{}); return err }},
		{"ListTaskProposals negative after", func() error {
			_, err := s.ListTaskProposals(ctx, "o", store.ProposalQuery{After: -1, Limit: 1})
			return err
		}},
		{"ExpireMessages zero time", func() error { _, err := s.ExpireMessages(ctx, time.Time{}, 1); return err }},
		{"RecordAnnouncements zero time", func() error { return s.RecordAnnouncements(ctx, nil, time.Time{}) }},
		{"RecordAnnouncements empty vault", func() error {
			return s.RecordAnnouncements(ctx, []store.Announcement{{Org: "o", Instance: "i", Agent: "a", Channel: ChannelGeneral}}, now)
		}},
		{"RecordAnnouncements empty agent", func() error {
			return s.RecordAnnouncements(ctx, []store.Announcement{{Org: "o", Instance: "i", Channel: ChannelGeneral, Vault: Vault}}, now)
		}},
		{"AnnouncedInstances empty vault", func() error { _, err := s.AnnouncedInstances(ctx, "o", "", "a", now); return err }},
		{"Announcements empty instance", func() error { _, err := s.Announcements(ctx, "o", "", now); return err }},
		{"ExpireAnnouncements zero limit", func() error { _, err := s.ExpireAnnouncements(ctx, now, 0); return err }},
		{"SetAck zero seq", func() error { _, err := s.SetAck(ctx, "o", "i", k, 0); return err }},
		{"SetAck bad stream", func() error {
			_, err := s.SetAck(ctx, "o", "i", store.StreamKey{Network: "org", Name: "c"}, 1)
			return err
		}},
		{"SetAck empty org", func() error { _, err := s.SetAck(ctx, "", "i", k, 1); return err }},
		{"Acks empty org", func() error { _, err := s.Acks(ctx, "", "i"); return err }},
		{"ExpireMessages zero limit", func() error { _, err := s.ExpireMessages(ctx, now, 0); return err }},
		{"DueQuestions zero limit", func() error { _, err := s.DueQuestions(ctx, now, 0); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("%v, want ErrInvalid", err)
			}
		})
	}
}

// testBusStreamsNeverMix: an org channel is keyed by its org, a swarm by its id alone; each
// stream has its own seq from 1, reads never cross, and a gid outside the caller's scope or
// stream is the same ErrNotFound as an unknown one (hive.md S2, S3; relay.md §1).
func testBusStreamsNeverMix(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	streams := []struct {
		k   store.StreamKey
		org string // the sending org
	}{
		{store.OrgStream("org-a", ChannelGeneral), "org-a"},
		{store.OrgStream("org-a", ChannelOps), "org-a"},
		{store.OrgStream("org-b", ChannelGeneral), "org-b"}, // same channel text, other org
		{store.SwarmStream("sw-1"), "org-a"},
		{store.SwarmStream(ChannelGeneral), "org-b"}, // a swarm named like a channel
		{store.SwarmStream("sw-2"), "org-b"},
	}
	sent := make([][]store.StoredMessage, len(streams))
	for round := range 4 {
		for i, st := range streams {
			if round > i%3+1 {
				continue // streams of different lengths
			}
			org := st.org
			if st.k.Network == store.NetworkSwarm && round%2 == 1 {
				org = "org-c" // a swarm takes senders of every org
			}
			m := send(t, s, Message(st.k, org, "inst-1", fmt.Sprintf("s%d-r%d", i, round)))
			if m.Seq != int64(len(sent[i])+1) {
				t.Fatalf("stream %d round %d: seq %d, want %d", i, round, m.Seq, len(sent[i])+1)
			}
			sent[i] = append(sent[i], m)
		}
	}
	for i, st := range streams {
		sameMessages(t, fmt.Sprintf("stream %d", i), readMessages(t, s, st.k, store.ReadQuery{}), sent[i])
		if n := lastSeq(t, s, st.k); n != int64(len(sent[i])) {
			t.Fatalf("stream %d: StreamLastSeq %d, want %d", i, n, len(sent[i]))
		}
	}
	orgA, swarm := sent[0][0], sent[3][0]
	for _, c := range []struct {
		name  string
		scope store.MessageScope
		gid   string
		ok    bool
	}{
		{"own org", store.MessageScope{Org: "org-a"}, orgA.GID, true},
		{"other org", store.MessageScope{Org: "org-b", Swarms: []string{"sw-1", ChannelGeneral}}, orgA.GID, false},
		{"no org", store.MessageScope{Swarms: []string{"sw-1"}}, orgA.GID, false},
		{"member of the swarm, other org", store.MessageScope{Org: "org-b", Swarms: []string{"sw-1"}}, swarm.GID, true},
		{"member of the swarm, no org", store.MessageScope{Swarms: []string{"sw-2", "sw-1"}}, swarm.GID, true},
		{"sender's org, not a member", store.MessageScope{Org: "org-a"}, swarm.GID, false},
		{"member of another swarm", store.MessageScope{Org: "org-a", Swarms: []string{"sw-2"}}, swarm.GID, false},
		{"swarm named like the channel is not the channel", store.MessageScope{Org: "org-b"}, sent[4][0].GID, false},
		{"unknown gid", store.MessageScope{Org: "org-a", Swarms: []string{"sw-1"}}, "no-such-gid", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.GetMessage(ctx, c.scope, c.gid)
			if !c.ok {
				notFound(t, "GetMessage", err)
				return
			}
			if err != nil || got.GID != c.gid {
				t.Fatalf("GetMessage = %s, %v", got.GID, err)
			}
		})
	}
	// A receipt or a proposal names its stream: the same gid under another stream does not
	// exist.
	now := time.Now()
	_, err := s.AppendReceipt(ctx, streams[2].k, orgA.GID, "agent", store.ReceiptRead, now)
	notFound(t, "receipt under the other org's same channel", err)
	_, err = s.AppendReceipt(ctx, streams[1].k, orgA.GID, "agent", store.ReceiptRead, now)
	notFound(t, "receipt under another channel of the org", err)
	_, err = s.AppendReceipt(ctx, store.SwarmStream("sw-2"), swarm.GID, "agent", store.ReceiptRead, now)
	notFound(t, "receipt under another swarm", err)
	_, err = s.AppendReceipt(ctx, store.OrgStream("org-z", "never-written"), orgA.GID, "agent", store.ReceiptRead, now)
	notFound(t, "receipt under a stream that was never written", err)
	if n := lastSeq(t, s, store.OrgStream("org-a", "sw-1")); n != 0 {
		t.Fatalf("an org channel named like a swarm has seq %d", n)
	}
}

func testBusIdempotency(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	k := store.OrgStream("org-a", ChannelGeneral)
	_, err := s.LookupClientMsg(context.Background(), "org-a", "inst-1", "c1")
	notFound(t, "lookup before the send", err)
	orig := send(t, s, Message(k, "org-a", "inst-1", "c1"))
	lookup := func(org, instance, cmid string) (store.StoredMessage, error) {
		return s.LookupClientMsg(context.Background(), org, instance, cmid)
	}
	if got, err := lookup("org-a", "inst-1", "c1"); err != nil {
		t.Fatalf("LookupClientMsg: %v", err)
	} else {
		sameMessage(t, "LookupClientMsg", got, orig)
	}
	for _, key := range [][3]string{{"org-a", "inst-2", "c1"}, {"org-b", "inst-1", "c1"}, {"org-a", "inst-1", "c2"}, {"org-a", "inst-1", "C1"}} {
		_, err := lookup(key[0], key[1], key[2])
		notFound(t, fmt.Sprintf("LookupClientMsg%v", key), err)
	}

	// A resend answers the original whatever else it says, and takes no seq.
	resend := Message(store.OrgStream("org-a", ChannelOps), "org-a", "inst-1", "c1")
	resend.GID, resend.ThreadID, resend.Type, resend.Data = "other-gid", "other-thread", "question", []byte(`{"changed":true}`)
	for range 3 {
		got, replayed, err := s.AppendMessage(context.Background(), resend)
		if err != nil || !replayed {
			t.Fatalf("resend: replayed %v, %v", replayed, err)
		}
		sameMessage(t, "resend answer", got, orig)
	}
	if n := lastSeq(t, s, k); n != 1 {
		t.Fatalf("resends took seqs: last %d", n)
	}
	if n := lastSeq(t, s, resend.Stream); n != 0 {
		t.Fatalf("a resend naming another channel created it: last %d", n)
	}
	// The key is (org, instance, client_msg_id): another instance or another org is new.
	if m := send(t, s, Message(k, "org-a", "inst-2", "c1")); m.Seq != 2 {
		t.Fatalf("same client_msg_id from another instance: seq %d, want 2", m.Seq)
	}
	if m := send(t, s, Message(store.OrgStream("org-b", ChannelGeneral), "org-b", "inst-1", "c1")); m.Seq != 1 {
		t.Fatalf("same client_msg_id from another org: seq %d, want 1", m.Seq)
	}
	if m := send(t, s, Message(store.SwarmStream("sw"), "org-b", "inst-2", "c1")); m.Seq != 1 {
		t.Fatalf("same client_msg_id on a swarm from another org's instance: seq %d, want 1", m.Seq)
	}
	// On a swarm the sending org is part of the key too.
	swarmOrig := send(t, s, Message(store.SwarmStream("sw"), "org-a", "inst-1", "c-sw"))
	if got, replayed, err := s.AppendMessage(context.Background(), Message(store.SwarmStream("sw"), "org-a", "inst-1", "c-sw")); err != nil || !replayed || got.GID != swarmOrig.GID {
		t.Fatalf("swarm resend: %s replayed %v, %v", got.GID, replayed, err)
	}
	if got, err := lookup("org-a", "inst-1", "c-sw"); err != nil {
		t.Fatalf("LookupClientMsg on a swarm: %v", err)
	} else {
		sameMessage(t, "LookupClientMsg on a swarm", got, swarmOrig)
	}
	// After a refusal the same client_msg_id is processed anew.
	refused := Message(k, "org-a", "inst-1", "c-refused")
	refused.GID = orig.GID
	if _, _, err := s.AppendMessage(context.Background(), refused); !errors.Is(err, store.ErrDuplicateGID) {
		t.Fatalf("refused send: %v, want ErrDuplicateGID", err)
	}
	_, err = lookup("org-a", "inst-1", "c-refused")
	notFound(t, "LookupClientMsg after a refusal", err)
	refused.GID = ""
	if m := send(t, s, refused); m.Seq != 3 {
		t.Fatalf("resend after a refusal: seq %d, want 3", m.Seq)
	}
	// An expired original no longer answers: the resend is a new message with a new seq.
	expired := Message(k, "org-a", "inst-1", "c-expired")
	expired.ServerTime, expired.ExpiresAt = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	old := send(t, s, expired)
	_, err = lookup("org-a", "inst-1", "c-expired")
	notFound(t, "LookupClientMsg of an expired message", err)
	again := Message(k, "org-a", "inst-1", "c-expired")
	fresh := send(t, s, again)
	if fresh.GID == old.GID || fresh.Seq != old.Seq+1 {
		t.Fatalf("resend of an expired message: gid %s seq %d (old %s seq %d)", fresh.GID, fresh.Seq, old.GID, old.Seq)
	}
	_, err = s.GetMessage(context.Background(), store.MessageScope{Org: "org-a"}, old.GID)
	notFound(t, "expired original", err)
	if got, err := lookup("org-a", "inst-1", "c-expired"); err != nil {
		t.Fatalf("LookupClientMsg of the new message: %v", err)
	} else {
		sameMessage(t, "LookupClientMsg of the new message", got, fresh)
	}
	if got, replayed, err := s.AppendMessage(context.Background(), again); err != nil || !replayed || got.GID != fresh.GID {
		t.Fatalf("resend of the new message: %s replayed %v, %v", got.GID, replayed, err)
	}
}

func testBusDuplicateGID(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	k := store.OrgStream("org-a", ChannelGeneral)
	w := Message(k, "org-a", "inst-1", "c1")
	w.GID = "gid-1"
	send(t, s, w)
	// gids are unique across networks and orgs.
	for _, st := range []store.StreamKey{k, store.OrgStream("org-b", ChannelGeneral), store.SwarmStream("sw")} {
		org := st.Org
		if org == "" {
			org = "org-c"
		}
		d := Message(st, org, "inst-9", "c-dup-"+st.Network+st.Org)
		d.GID = "gid-1"
		_, _, err := s.AppendMessage(context.Background(), d)
		if !errors.Is(err, store.ErrDuplicateGID) || !errors.Is(err, store.ErrDuplicate) {
			t.Fatalf("gid reused on %+v: %v, want ErrDuplicateGID", st, err)
		}
		if n := lastSeq(t, s, st); n != map[bool]int64{true: 1, false: 0}[st == k] {
			t.Fatalf("refused send moved %+v to seq %d", st, n)
		}
	}
	if m := send(t, s, Message(k, "org-a", "inst-1", "c2")); m.Seq != 2 {
		t.Fatalf("after refusals seq %d, want 2", m.Seq)
	}
}

// testBusConcurrentSenders: 8 senders share two streams, resending some of their own messages;
// every acknowledged message is stored once at the seq it was acknowledged with, and each
// stream's seqs are 1..n with no gap.
func testBusConcurrentSenders(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	streams := []store.StreamKey{store.OrgStream("org-a", ChannelGeneral), store.OrgStream("org-a", ChannelOps)}
	const perSender = 25
	type ack struct {
		gid string
		seq int64
		k   store.StreamKey
	}
	var mu sync.Mutex
	acked := map[string]ack{} // client_msg_id → answer
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			inst := fmt.Sprintf("inst-%d", w)
			for i := range perSender {
				k := streams[(w+i)%3/2] // two thirds on the first stream
				id := fmt.Sprintf("%s-c%d", inst, i)
				tries := 1
				if i%5 == 4 {
					tries = 2 // resent at once
				}
				for try := range tries {
					m, replayed, err := s.AppendMessage(context.Background(), Message(k, "org-a", inst, id))
					if err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
						return
					}
					if replayed != (try > 0) {
						errs <- fmt.Errorf("%s try %d: replayed %v", id, try, replayed)
						return
					}
					mu.Lock()
					if prev, ok := acked[id]; ok && (prev.gid != m.GID || prev.seq != m.Seq) {
						mu.Unlock()
						errs <- fmt.Errorf("%s: answered %s/%d then %s/%d", id, prev.gid, prev.seq, m.GID, m.Seq)
						return
					}
					acked[id] = ack{m.GID, m.Seq, m.Stream}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for _, k := range streams {
		got := readMessages(t, s, k, store.ReadQuery{})
		total += len(got)
		for i, m := range got {
			if m.Seq != int64(i+1) {
				t.Fatalf("stream %s: message %d has seq %d: gap or repeat", k.Name, i, m.Seq)
			}
			a, ok := acked[m.ClientMsgID]
			if !ok || a.gid != m.GID || a.seq != m.Seq || a.k != k {
				t.Fatalf("stored %s %s/%d was acknowledged as %+v (%v)", m.ClientMsgID, m.GID, m.Seq, a, ok)
			}
		}
		if n := lastSeq(t, s, k); n != int64(len(got)) {
			t.Fatalf("stream %s: last seq %d, %d messages", k.Name, n, len(got))
		}
	}
	if total != writers*perSender || len(acked) != total {
		t.Fatalf("stored %d, acknowledged %d, want %d", total, len(acked), writers*perSender)
	}
}

func testBusReadMessages(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	k := store.OrgStream("org-a", ChannelGeneral)
	var all []store.StoredMessage
	add := func(instance string, f func(*store.MessageWrite)) store.StoredMessage {
		w := Message(k, "org-a", instance, fmt.Sprintf("c%d", len(all)+1))
		if f != nil {
			f(&w)
		}
		m := send(t, s, w)
		all = append(all, m)
		return m
	}
	first := add("inst-1", nil)
	inThread := func(w *store.MessageWrite) { w.ThreadID, w.ReplyTo = first.GID, first.GID }
	add("inst-2", inThread)
	add("inst-1", func(w *store.MessageWrite) { w.ToOrg, w.ToInstance = "org-a", "inst-2" }) // direct 1 → 2
	add("inst-3", inThread)
	add("inst-3", func(w *store.MessageWrite) { w.ToOrg, w.ToInstance = "org-a", "inst-1" }) // direct 3 → 1
	for range 6 {
		add("inst-2", nil)
	}
	add("inst-2", func(w *store.MessageWrite) { inThread(w); w.ToOrg, w.ToInstance = "org-a", "inst-3" }) // direct, in thread
	// Every cursor, every page size.
	for after := int64(0); after <= int64(len(all))+1; after++ {
		sameMessages(t, fmt.Sprintf("after %d", after), readMessages(t, s, k, store.ReadQuery{After: after}), all[min(after, int64(len(all))):])
	}
	page := func(q store.ReadQuery) []store.StoredMessage {
		var got []store.StoredMessage
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("paging with %+v does not end", q)
			}
			p, err := s.ReadMessages(context.Background(), k, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(p) > q.Limit {
				t.Fatalf("limit %d, got %d", q.Limit, len(p))
			}
			if len(p) == 0 {
				return got
			}
			got = append(got, p...)
			q.After = p[len(p)-1].Seq
		}
	}
	filter := func(keep func(store.StoredMessage) bool) []store.StoredMessage {
		var out []store.StoredMessage
		for _, m := range all {
			if keep(m) {
				out = append(out, m)
			}
		}
		return out
	}
	thread := filter(func(m store.StoredMessage) bool { return m.ThreadID == first.GID })
	for limit := 1; limit <= len(all)+1; limit++ {
		sameMessages(t, fmt.Sprintf("paged by %d", limit), page(store.ReadQuery{Limit: limit}), all)
		sameMessages(t, fmt.Sprintf("thread paged by %d", limit), page(store.ReadQuery{Limit: limit, ThreadID: first.GID}), thread)
	}
	if len(thread) != 4 {
		t.Fatalf("thread has %d messages, want 4", len(thread))
	}
	if got := readMessages(t, s, k, store.ReadQuery{ThreadID: "no-such-thread"}); len(got) != 0 {
		t.Fatalf("unknown thread: %d messages", len(got))
	}
	// Visibility (S20): broadcasts, plus direct messages sent by or bound to the viewer.
	for _, v := range []store.Viewer{{Org: "org-a", Instance: "inst-1"}, {Org: "org-a", Instance: "inst-2"}, {Org: "org-a", Instance: "inst-3"}, {Org: "org-a", Instance: "inst-9"}, {Org: "org-b", Instance: "inst-1"}} {
		want := filter(func(m store.StoredMessage) bool {
			return m.ToInstance == "" || (m.SenderOrg == v.Org && m.SenderInstance == v.Instance) ||
				(m.ToOrg == v.Org && m.ToInstance == v.Instance)
		})
		if len(want) == len(all) || (v.Org == "org-a" && v.Instance == "inst-1" && len(want) != len(all)-1) {
			t.Fatalf("fixture: viewer %+v would see %d of %d", v, len(want), len(all))
		}
		for _, limit := range []int{1, 3, 100} {
			sameMessages(t, fmt.Sprintf("viewer %+v limit %d", v, limit), page(store.ReadQuery{Limit: limit, Viewer: &v}), want)
		}
		wantThread := filter(func(m store.StoredMessage) bool {
			return m.ThreadID == first.GID && (m.ToInstance == "" || (m.SenderOrg == v.Org && m.SenderInstance == v.Instance) ||
				(m.ToOrg == v.Org && m.ToInstance == v.Instance))
		})
		sameMessages(t, fmt.Sprintf("viewer %+v thread", v), page(store.ReadQuery{Limit: 2, Viewer: &v, ThreadID: first.GID}), wantThread)
	}
	// On a swarm the recipient is (org, instance): the same instance id in another org is
	// someone else.
	sw := store.SwarmStream("sw-1")
	dm := Message(sw, "org-a", "inst-1", "dm")
	dm.ToOrg, dm.ToInstance = "org-b", "inst-9"
	direct := send(t, s, dm)
	bcast := send(t, s, Message(sw, "org-c", "inst-5", "b"))
	for _, c := range []struct {
		v    store.Viewer
		want []store.StoredMessage
	}{
		{store.Viewer{Org: "org-b", Instance: "inst-9"}, []store.StoredMessage{direct, bcast}},
		{store.Viewer{Org: "org-a", Instance: "inst-1"}, []store.StoredMessage{direct, bcast}},
		{store.Viewer{Org: "org-a", Instance: "inst-9"}, []store.StoredMessage{bcast}},
		{store.Viewer{Org: "org-c", Instance: "inst-1"}, []store.StoredMessage{bcast}},
	} {
		sameMessages(t, fmt.Sprintf("swarm viewer %+v", c.v), readMessages(t, s, sw, store.ReadQuery{Viewer: &c.v}), c.want)
	}
	if got := readMessages(t, s, store.OrgStream("org-a", "never-written"), store.ReadQuery{}); len(got) != 0 {
		t.Fatalf("unwritten stream: %d messages", len(got))
	}
}

func testBusReadStream(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	now := time.Now()
	question := func(id string) store.StoredMessage {
		w := Message(k, "org-a", "inst-1", id)
		w.Type, w.Deadline = "question", now.Add(-time.Minute)
		return send(t, s, w)
	}
	q1 := question("q1")                                  // 1
	m2 := send(t, s, Message(k, "org-a", "inst-2", "m2")) // 2
	p3 := propose(t, s, k, q1.GID, true)                  // 3
	q4 := question("q4")                                  // 4
	p5 := propose(t, s, k, q4.GID, true)                  // 5
	dm := Message(k, "org-a", "inst-2", "m6")             // 6, direct to inst-3
	dm.ToOrg, dm.ToInstance = "org-a", "inst-3"
	m6 := send(t, s, dm)
	m7 := send(t, s, Message(k, "org-a", "inst-1", "m7")) // 7
	msg := func(m store.StoredMessage) store.StreamEntry { return store.StreamEntry{Seq: m.Seq, Message: &m} }
	task := func(p store.TaskProposal) store.StreamEntry { return store.StreamEntry{Seq: p.Seq, Task: &p} }
	all := []store.StreamEntry{msg(q1), msg(m2), task(p3), msg(q4), task(p5), msg(m6), msg(m7)}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: messages and task events share one gap-free counter", i, e.Seq)
		}
	}
	check := func(what string, got, want []store.StreamEntry) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			switch {
			case g.Seq != w.Seq || (g.Message == nil) == (g.Task == nil) || (g.Message == nil) != (w.Message == nil):
				t.Fatalf("%s: entry %d = %+v, want %+v", what, i, g, w)
			case g.Message != nil:
				sameMessage(t, fmt.Sprintf("%s: entry %d", what, i), *g.Message, *w.Message)
			default:
				sameProposal(t, fmt.Sprintf("%s: entry %d", what, i), *g.Task, *w.Task)
			}
		}
	}
	for after := range int64(len(all) + 2) {
		for limit := 1; limit <= len(all)+1; limit++ {
			got, err := s.ReadStream(ctx, k, store.ReadQuery{After: after, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			want := all[min(int(after), len(all)):]
			check(fmt.Sprintf("after %d limit %d", after, limit), got, want[:min(limit, len(want))])
		}
	}
	// Task events are visible to every viewer and belong to no thread.
	v := store.Viewer{Org: "org-a", Instance: "inst-1"}
	got, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 100, Viewer: &v})
	if err != nil {
		t.Fatal(err)
	}
	check("viewer inst-1", got, []store.StreamEntry{msg(q1), msg(m2), task(p3), msg(q4), task(p5), msg(m7)})
	got, err = s.ReadStream(ctx, k, store.ReadQuery{Limit: 100, ThreadID: q1.GID})
	if err != nil {
		t.Fatal(err)
	}
	check("thread of q1", got, []store.StreamEntry{msg(q1)})
	got, err = s.ReadStream(ctx, store.OrgStream("org-b", ChannelGeneral), store.ReadQuery{Limit: 100})
	if err != nil || len(got) != 0 {
		t.Fatalf("other org's same channel: %d entries, %v", len(got), err)
	}
}

// propose proposes the task of question gid on k and checks whether it was created.
func propose(t *testing.T, s store.Store, k store.StreamKey, gid string, wantCreated bool) store.TaskProposal {
	t.Helper()
	return proposeIn(t, s, k, Vault, gid, wantCreated)
}

func proposeIn(t *testing.T, s store.Store, k store.StreamKey, vault, gid string, wantCreated bool) store.TaskProposal {
	t.Helper()
	p, created, err := s.ProposeTask(context.Background(), store.TaskProposalWrite{
		Stream: k, Vault: vault, QuestionGID: gid, CreatedAt: time.Now(), Data: fmt.Appendf(nil, `{"question":%q}`, gid),
	})
	if err != nil {
		t.Fatalf("ProposeTask(%s): %v", gid, err)
	}
	if created != wantCreated {
		t.Fatalf("ProposeTask(%s): created %v, want %v", gid, created, wantCreated)
	}
	return p
}

func sameProposal(t *testing.T, what string, got, want store.TaskProposal) {
	t.Helper()
	if got.ID != want.ID || got.Number != want.Number || got.Seq != want.Seq || got.QuestionGID != want.QuestionGID ||
		got.Vault != want.Vault || got.Stream != want.Stream || !got.CreatedAt.Equal(want.CreatedAt) || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func testBusReceipts(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	m := send(t, s, Message(k, "org-a", "inst-1", "c1"))
	other := send(t, s, Message(k, "org-a", "inst-1", "c2"))
	at := time.Now()
	D, R := store.ReceiptDelivered, store.ReceiptRead
	for i, c := range []struct {
		gid, by, state string
		applied        []string
	}{
		{m.GID, "codex", D, []string{D}},
		{m.GID, "codex", D, nil}, // a repeat applies nothing
		{m.GID, "codex", R, []string{R}},
		{m.GID, "codex", R, nil},
		{m.GID, "codex", D, nil},             // never back
		{m.GID, "claude", R, []string{D, R}}, // read implies delivered
		{m.GID, "claude", D, nil},
		{m.GID, "claude", R, nil},
		{other.GID, "codex", R, []string{D, R}}, // per (gid, recipient)
		{other.GID, "claude", D, []string{D}},
		{other.GID, "claude", R, []string{R}},
	} {
		applied, err := s.AppendReceipt(ctx, k, c.gid, c.by, c.state, at.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatalf("receipt %d (%s %s): %v", i, c.by, c.state, err)
		}
		if !slices.Equal(applied, c.applied) {
			t.Fatalf("receipt %d (%s %s): applied %q, want %q", i, c.by, c.state, applied, c.applied)
		}
	}
	_, err := s.AppendReceipt(ctx, k, "no-such-gid", "codex", R, at)
	notFound(t, "receipt for an unknown gid", err)
	expired := Message(k, "org-a", "inst-1", "c-exp")
	expired.ExpiresAt = time.Now().Add(-time.Minute)
	e := send(t, s, expired)
	_, err = s.AppendReceipt(ctx, k, e.GID, "codex", D, at)
	notFound(t, "receipt for an expired message", err)
	// Concurrent receipts of one (gid, recipient) apply each state exactly once.
	fresh := send(t, s, Message(k, "org-a", "inst-1", "c3"))
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			state := []string{D, R}[w%2]
			applied, err := s.AppendReceipt(ctx, k, fresh.GID, "codex", state, at)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, a := range applied {
				counts[a]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[D] != 1 || counts[R] != 1 || len(counts) != 2 {
		t.Fatalf("concurrent receipts applied %v, want each state once", counts)
	}
}

func testBusTaskProposals(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	gen, ops := store.OrgStream("org-a", ChannelGeneral), store.OrgStream("org-a", ChannelOps)
	orgB := store.OrgStream("org-b", ChannelGeneral)
	now := time.Now()
	question := func(k store.StreamKey, id string, deadline time.Duration) store.StoredMessage {
		w := Message(k, k.Org, "inst-1", id)
		w.Type, w.Deadline = "question", now.Add(deadline)
		w.ServerTime = now.Add(-3 * time.Hour)
		return send(t, s, w)
	}
	answer := func(k store.StreamKey, q store.StoredMessage, at time.Time, typ string) {
		w := Message(k, k.Org, "inst-2", "answer-"+q.ClientMsgID+"-"+typ+"-"+k.Name)
		w.Type, w.ReplyTo, w.ThreadID, w.ServerTime = typ, q.GID, q.ThreadID, at
		send(t, s, w)
	}
	q1 := question(gen, "q1", -2*time.Hour)    // due, unanswered
	q2 := question(gen, "q2", 2*time.Hour)     // not due yet
	q3 := question(gen, "q3", -90*time.Minute) // answered before its deadline: settled
	answer(gen, q3, q3.Deadline.Add(-time.Minute), store.MessageTypeAnswer)
	q4 := question(gen, "q4", -80*time.Minute) // answered after its deadline: still due
	answer(gen, q4, q4.Deadline.Add(time.Minute), store.MessageTypeAnswer)
	q5 := question(orgB, "q5", -70*time.Minute) // another org
	q6w := Message(gen, "org-a", "inst-1", "q6")
	q6w.Type, q6w.Deadline, q6w.ExpiresAt = "question", now.Add(-time.Hour), now.Add(-time.Minute) // expired
	q6 := send(t, s, q6w)
	q7 := question(ops, "q7", -50*time.Minute) // an "answer" in another channel settles nothing
	answer(gen, q7, q7.Deadline.Add(-time.Minute), store.MessageTypeAnswer)
	q8 := question(gen, "q8", -40*time.Minute) // a reply that is not an answer settles nothing
	answer(gen, q8, q8.Deadline.Add(-time.Minute), "finding")

	due := func(limit int) []string {
		t.Helper()
		ms, err := s.DueQuestions(ctx, now, limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			if m.Stream.Network != store.NetworkOrg || m.Stream.Org == "" || m.Deadline.After(now) {
				t.Fatalf("due question %+v", m)
			}
			ids = append(ids, m.ClientMsgID)
		}
		return ids
	}
	if got := due(100); strings.Join(got, " ") != "q1 q4 q5 q7 q8" {
		t.Fatalf("DueQuestions = %v, want [q1 q4 q5 q7 q8] (oldest deadline first)", got)
	}
	if got := due(2); strings.Join(got, " ") != "q1 q4" {
		t.Fatalf("DueQuestions limit 2 = %v", got)
	}
	_ = q2

	last := lastSeq(t, s, gen)
	p1 := propose(t, s, gen, q1.GID, true)
	if p1.Number != 1 || p1.Seq != last+1 || p1.ID <= 0 || p1.QuestionGID != q1.GID || p1.Stream != gen || p1.Vault != Vault {
		t.Fatalf("first proposal %+v (stream last seq was %d)", p1, last)
	}
	// At most once: the original answers, nothing is assigned.
	again, created, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: gen, Vault: "other-vault", QuestionGID: q1.GID, CreatedAt: now, Data: []byte("changed")})
	if err != nil || created {
		t.Fatalf("second proposal: created %v, %v", created, err)
	}
	sameProposal(t, "second proposal", again, p1)
	if n := lastSeq(t, s, gen); n != p1.Seq {
		t.Fatalf("a repeated proposal took seq %d", n)
	}
	p4 := propose(t, s, gen, q4.GID, true)
	p7 := propose(t, s, ops, q7.GID, true)                    // same vault, other channel
	p8 := proposeIn(t, s, gen, "another-vault", q8.GID, true) // another vault
	p5 := propose(t, s, orgB, q5.GID, true)                   // another org
	for _, c := range []struct {
		p      store.TaskProposal
		number int64
	}{{p4, 2}, {p7, 3}, {p8, 1}, {p5, 1}} {
		if c.p.Number != c.number {
			t.Fatalf("proposal of %s: number %d, want %d (numbers are per org and vault)", c.p.QuestionGID, c.p.Number, c.number)
		}
	}
	if p7.Seq != 2 || p4.Seq != p1.Seq+1 || p5.Seq != 2 {
		t.Fatalf("task event seqs: p4 %d (p1 %d), p7 %d, p5 %d", p4.Seq, p1.Seq, p7.Seq, p5.Seq)
	}
	if got := due(100); len(got) != 0 {
		t.Fatalf("after proposing, due %v", got)
	}
	// The question must be a visible message of that stream.
	for _, c := range []struct {
		name string
		k    store.StreamKey
		gid  string
	}{
		{"unknown question", gen, "no-such-gid"},
		{"question of another channel", ops, q2.GID},
		{"question of another org", orgB, q2.GID},
		{"expired question", gen, q6.GID},
		{"stream never written", store.OrgStream("org-z", "c"), q2.GID},
	} {
		_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: c.k, Vault: Vault, QuestionGID: c.gid, CreatedAt: now, Data: []byte("x")})
		notFound(t, c.name, err)
	}
	// A later answer does not undo the proposal; the listing is per org, oldest first.
	answer(gen, q1, now, store.MessageTypeAnswer)
	var listed []store.TaskProposal
	for after := int64(0); ; {
		page, err := s.ListTaskProposals(ctx, "org-a", store.ProposalQuery{After: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 1 {
			t.Fatalf("limit 1, got %d", len(page))
		}
		listed = append(listed, page...)
		after = page[0].ID
	}
	want := []store.TaskProposal{p1, p4, p7, p8}
	if len(listed) != len(want) {
		t.Fatalf("org-a listing has %d proposals, want %d", len(listed), len(want))
	}
	for i := range want {
		sameProposal(t, fmt.Sprintf("listing %d", i), listed[i], want[i])
	}
	b, err := s.ListTaskProposals(ctx, "org-b", store.ProposalQuery{Limit: 100})
	if err != nil || len(b) != 1 {
		t.Fatalf("org-b listing: %d, %v", len(b), err)
	}
	sameProposal(t, "org-b listing", b[0], p5)
	if c, err := s.ListTaskProposals(ctx, "org-c", store.ProposalQuery{Limit: 100}); err != nil || len(c) != 0 {
		t.Fatalf("org-c listing: %d, %v", len(c), err)
	}
}

func testBusRetention(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	scope := store.MessageScope{Org: "org-a"}
	now := time.Now()
	with := func(id string, expires time.Time) store.StoredMessage {
		w := Message(k, "org-a", "inst-1", id)
		w.ExpiresAt = expires
		return send(t, s, w)
	}
	e1 := with("e1", now.Add(-time.Hour))      // already expired
	e2 := with("e2", now.Add(time.Hour))       // expires later
	e3 := with("e3", time.Time{})              // never (an open swarm's rule, allowed anywhere)
	e4 := with("e4", now.Add(-30*time.Minute)) // already expired
	if _, err := s.AppendReceipt(ctx, k, e2.GID, "codex", store.ReceiptDelivered, now); err != nil {
		t.Fatal(err)
	}
	// Expired messages are gone at once, before any sweep, with the very same error as an
	// unknown gid.
	for _, m := range []store.StoredMessage{e1, e4} {
		_, err := s.GetMessage(ctx, scope, m.GID)
		notFound(t, "expired "+m.ClientMsgID, err)
		_, err = s.AppendReceipt(ctx, k, m.GID, "codex", store.ReceiptRead, now)
		notFound(t, "receipt for expired "+m.ClientMsgID, err)
	}
	sameMessages(t, "visible", readMessages(t, s, k, store.ReadQuery{}), []store.StoredMessage{e2, e3})
	// The sweeper deletes the expired ones, oldest first, up to its limit.
	sweep := func(at time.Time, limit, want int) {
		t.Helper()
		n, err := s.ExpireMessages(ctx, at, limit)
		if err != nil || n != want {
			t.Fatalf("ExpireMessages(%v, %d) = %d, %v; want %d", at.Sub(now), limit, n, err, want)
		}
	}
	sweep(now, 1, 1)
	sweep(now, 10, 1)
	sweep(now, 10, 0)
	sameMessages(t, "after the sweep", readMessages(t, s, k, store.ReadQuery{}), []store.StoredMessage{e2, e3})
	sweep(now.Add(2*time.Hour), 10, 1) // e2 and its receipts
	sweep(now.Add(100*365*24*time.Hour), 10, 0)
	_, err := s.GetMessage(ctx, scope, e2.GID)
	notFound(t, "swept e2", err)
	_, err = s.AppendReceipt(ctx, k, e2.GID, "codex", store.ReceiptRead, now)
	notFound(t, "receipt for swept e2", err)
	sameMessages(t, "after the second sweep", readMessages(t, s, k, store.ReadQuery{}), []store.StoredMessage{e3})
	// Seq values are never reused.
	if m := send(t, s, Message(k, "org-a", "inst-1", "e5")); m.Seq != 5 {
		t.Fatalf("after expiry seq %d, want 5", m.Seq)
	}
	if n := lastSeq(t, s, k); n != 5 {
		t.Fatalf("StreamLastSeq = %d, want 5", n)
	}
	// A swept message's client_msg_id is free again.
	if m := send(t, s, Message(k, "org-a", "inst-1", "e2")); m.Seq != 6 || m.GID == e2.GID {
		t.Fatalf("resend of a swept message: %s/%d", m.GID, m.Seq)
	}
}

func testBusOpaqueBytes(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	names := []string{"o", "o%", "o_", "O", "o'; DROP TABLE bus_messages; --", "ö", "o\x00x", "org\x00x"}
	var sent []store.StoredMessage
	for i, org := range names {
		k := store.OrgStream(org, names[len(names)-1-i])
		w := Message(k, org, "inst %_*\x00", "c\u2028"+org)
		w.Data = []byte{0, 0xff, 0xfe, '\n', '"', byte(i)}
		w.ThreadID, w.ReplyTo, w.Type = "t\x00%", "r'", "weird ✓"
		sent = append(sent, send(t, s, w))
		sw := store.SwarmStream(org)
		send(t, s, Message(sw, "x", "i", org))
	}
	for i, m := range sent {
		got, err := s.GetMessage(ctx, store.MessageScope{Org: names[i]}, m.GID)
		if err != nil {
			t.Fatalf("GetMessage(%q): %v", names[i], err)
		}
		sameMessage(t, "opaque message", got, m)
		sameMessages(t, "opaque stream", readMessages(t, s, m.Stream, store.ReadQuery{}), []store.StoredMessage{m})
		if got := readMessages(t, s, store.SwarmStream(names[i]), store.ReadQuery{}); len(got) != 1 || got[0].ClientMsgID != names[i] {
			t.Fatalf("swarm %q: %d messages", names[i], len(got))
		}
	}
}

func testBusReopen(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	gen, sw := store.OrgStream("org-a", ChannelGeneral), store.SwarmStream("sw-1")
	var msgs []store.StoredMessage
	for i := range 4 {
		msgs = append(msgs, send(t, s, Message(gen, "org-a", "inst-1", fmt.Sprintf("c%d", i))))
	}
	qw := Message(gen, "org-a", "inst-1", "q")
	qw.Type, qw.Deadline = "question", time.Now().Add(-time.Minute)
	q := send(t, s, qw)
	p := propose(t, s, gen, q.GID, true)
	swm := send(t, s, Message(sw, "org-b", "inst-2", "s1"))
	if _, err := s.AppendReceipt(ctx, gen, msgs[0].GID, "codex", store.ReceiptDelivered, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	sameMessages(t, "after reopen", readMessages(t, s2, gen, store.ReadQuery{}), append(msgs, q))
	got, err := s2.GetMessage(ctx, store.MessageScope{Swarms: []string{"sw-1"}}, swm.GID)
	if err != nil {
		t.Fatal(err)
	}
	sameMessage(t, "swarm message after reopen", got, swm)
	if n := lastSeq(t, s2, gen); n != p.Seq {
		t.Fatalf("StreamLastSeq after reopen %d, want %d", n, p.Seq)
	}
	// Idempotency, receipts and proposals survive; counters continue.
	if got, err := s2.LookupClientMsg(ctx, "org-a", "inst-1", "c1"); err != nil {
		t.Fatalf("LookupClientMsg after reopen: %v", err)
	} else {
		sameMessage(t, "LookupClientMsg after reopen", got, msgs[1])
	}
	r, replayed, err := s2.AppendMessage(ctx, Message(gen, "org-a", "inst-1", "c0"))
	if err != nil || !replayed || r.GID != msgs[0].GID {
		t.Fatalf("resend after reopen: %s replayed %v, %v", r.GID, replayed, err)
	}
	if applied, err := s2.AppendReceipt(ctx, gen, msgs[0].GID, "codex", store.ReceiptRead, time.Now()); err != nil || !slices.Equal(applied, []string{store.ReceiptRead}) {
		t.Fatalf("receipt after reopen: %v, %v", applied, err)
	}
	sameProposal(t, "proposal after reopen", propose(t, s2, gen, q.GID, false), p)
	if m := send(t, s2, Message(gen, "org-a", "inst-1", "after")); m.Seq != p.Seq+1 {
		t.Fatalf("seq after reopen %d, want %d", m.Seq, p.Seq+1)
	}
	q2w := Message(gen, "org-a", "inst-1", "q2")
	q2w.Type, q2w.Deadline = "question", time.Now().Add(-time.Minute)
	q2 := send(t, s2, q2w)
	if p2 := propose(t, s2, gen, q2.GID, true); p2.Number != 2 || p2.ID <= p.ID {
		t.Fatalf("second proposal after reopen %+v (first %+v)", p2, p)
	}
}

func testBusSubscribe(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	gen, sw := store.OrgStream("org-a", ChannelGeneral), store.SwarmStream("sw-1")
	ch, cancel := s.SubscribeStream(gen) // before the stream exists
	defer cancel()
	swCh, swCancel := s.SubscribeStream(sw)
	defer swCancel()
	send(t, s, Message(gen, "org-a", "inst-1", "c1"))
	receive(t, ch, "first message")
	if got := readMessages(t, s, gen, store.ReadQuery{}); len(got) != 1 {
		t.Fatalf("after the notification %d messages", len(got))
	}
	send(t, s, Message(sw, "org-b", "inst-1", "s1"))
	receive(t, swCh, "swarm message")
	// The live-reader loop sees every message once.
	type result struct {
		seen []store.StoredMessage
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var seen []store.StoredMessage
		cursor := int64(1)
		for cursor < 20 {
			if _, ok := <-ch; !ok {
				done <- result{seen, errors.New("channel closed")}
				return
			}
			ms, err := s.ReadMessages(ctx, gen, store.ReadQuery{After: cursor, Limit: 100})
			if err != nil {
				done <- result{seen, err}
				return
			}
			seen = append(seen, ms...)
			if len(ms) > 0 {
				cursor = ms[len(ms)-1].Seq
			}
		}
		done <- result{seen, nil}
	}()
	var want []store.StoredMessage
	for i := 2; i <= 20; i++ {
		want = append(want, send(t, s, Message(gen, "org-a", "inst-1", fmt.Sprintf("c%d", i))))
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		sameMessages(t, "live reader", r.seen, want)
	case <-time.After(wait):
		t.Fatal("live reader did not reach the last message")
	}
	// A task proposal takes a seq on the stream and wakes it too.
	qw := Message(gen, "org-a", "inst-1", "q")
	qw.Type, qw.Deadline = "question", time.Now().Add(-time.Minute)
	q := send(t, s, qw)
	receive(t, ch, "question")
	propose(t, s, gen, q.GID, true)
	receive(t, ch, "task proposal")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(wait); ; {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("stream subscription not closed by Close")
		}
	}
}

func testBusCanceledContext(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k := store.OrgStream("o", ChannelGeneral)
	if _, _, err := s.AppendMessage(ctx, Message(k, "o", "i", "c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendMessage with a canceled context: %v", err)
	}
	if n := lastSeq(t, s, k); n != 0 {
		t.Fatalf("a canceled send took seq %d", n)
	}
	m := send(t, s, Message(k, "o", "i", "c"))
	if m.Seq != 1 {
		t.Fatalf("after a canceled send seq %d", m.Seq)
	}
	if _, err := s.AppendReceipt(ctx, k, m.GID, "a", store.ReceiptRead, time.Now()); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendReceipt with a canceled context: %v", err)
	}
	if applied, err := s.AppendReceipt(context.Background(), k, m.GID, "a", store.ReceiptRead, time.Now()); err != nil || len(applied) != 2 {
		t.Fatalf("a canceled receipt was applied: %v, %v", applied, err)
	}
}

func testBusClosed(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("o", ChannelGeneral)
	m := send(t, s, Message(k, "o", "i", "c"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for name, call := range map[string]func() error{
		"AppendMessage":   func() error { _, _, err := s.AppendMessage(ctx, Message(k, "o", "i", "c2")); return err },
		"GetMessage":      func() error { _, err := s.GetMessage(ctx, store.MessageScope{Org: "o"}, m.GID); return err },
		"LookupClientMsg": func() error { _, err := s.LookupClientMsg(ctx, "o", "i", "c"); return err },
		"ReadMessages":    func() error { _, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 1}); return err },
		"ReadStream":      func() error { _, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 1}); return err },
		"StreamLastSeq":   func() error { _, err := s.StreamLastSeq(ctx, k); return err },
		"AppendReceipt":   func() error { _, err := s.AppendReceipt(ctx, k, m.GID, "a", store.ReceiptRead, now); return err },
		"DueQuestions":    func() error { _, err := s.DueQuestions(ctx, now, 1); return err },
		"ProposeTask": func() error {
			_, _, err := s.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: Vault, QuestionGID: m.GID, CreatedAt: now, Data: []byte("x")})
			return err
		},
		"ListTaskProposals": func() error { _, err := s.ListTaskProposals(ctx, "o", store.ProposalQuery{Limit: 1}); return err },
		"ExpireMessages":    func() error { _, err := s.ExpireMessages(ctx, now, 1); return err },
		"RecordAnnouncements": func() error {
			return s.RecordAnnouncements(ctx, []store.Announcement{{Org: "o", Instance: "i", Agent: "a", Channel: ChannelGeneral, Vault: Vault}}, now)
		},
		"AnnouncedInstances":  func() error { _, err := s.AnnouncedInstances(ctx, "o", Vault, "a", now); return err },
		"Announcements":       func() error { _, err := s.Announcements(ctx, "o", "i", now); return err },
		"ExpireAnnouncements": func() error { _, err := s.ExpireAnnouncements(ctx, now, 1); return err },
		"SetAck":              func() error { _, err := s.SetAck(ctx, "o", "i", k, 1); return err },
		"Acks":                func() error { _, err := s.Acks(ctx, "o", "i"); return err },
	} {
		if err := call(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	ch, cancel := s.SubscribeStream(k)
	defer cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("SubscribeStream after Close delivered a value")
		}
	case <-time.After(wait):
		t.Fatal("SubscribeStream after Close: channel not closed")
	}
}

// testBusReadBytes: ReadQuery.MaxBytes stops a page before the entry that would bring its
// entries' Data past the budget, the first entry whatever its size; paging on after the last
// entry of each page reads the whole stream in order, and a page stopped short is one whose
// next entry did not fit (ReadStream across messages, task events and publishes, and
// ReadMessages).
func testBusReadBytes(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	sizes := []int{10, 300, 40, 700, 5, 5, 5, 250, 1200, 60, 80, 90, 400}
	for i, n := range sizes {
		pad := strings.Repeat("x", n)
		switch i % 4 {
		case 3: // a publish
			p := Publish(k, "inst-1", fmt.Sprintf("p%d", i))
			p.Data = fmt.Appendf(nil, `{"p":%q}`, pad)
			busPublish(t, s, p)
		default:
			w := Message(k, "org-a", "inst-1", fmt.Sprintf("m%d", i))
			w.Data = fmt.Appendf(nil, `{"m":%q}`, pad)
			if i%4 == 2 {
				w.Type, w.Deadline = "question", time.Now().Add(-time.Minute)
			}
			q := send(t, s, w)
			if i%4 == 2 {
				propose(t, s, k, q.GID, true) // a task event after the question
			}
		}
	}
	all, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	allMsgs, err := s.ReadMessages(ctx, k, store.ReadQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	seqs := func(es []store.StreamEntry) []int64 {
		out := make([]int64, len(es))
		for i, e := range es {
			out[i] = e.Seq
		}
		return out
	}
	for _, budget := range []int{1, 100, 320, 800, 5000} {
		for _, limit := range []int{1, 4, 500} {
			// ReadStream.
			var got []store.StreamEntry
			after := int64(0)
			for {
				page, err := s.ReadStream(ctx, k, store.ReadQuery{After: after, Limit: limit, MaxBytes: budget})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				size := 0
				for _, e := range page {
					size += store.EntryBytes(e)
				}
				if len(page) > 1 && size > budget {
					t.Fatalf("budget %d limit %d after %d: a page of %d entries holds %d bytes", budget, limit, after, len(page), size)
				}
				got = append(got, page...)
				if n := len(got); len(page) < limit && n < len(all) && size+store.EntryBytes(all[n]) <= budget {
					t.Fatalf("budget %d limit %d after %d: the page stopped at %d bytes before an entry of %d that fits",
						budget, limit, after, size, store.EntryBytes(all[n]))
				}
				after = page[len(page)-1].Seq
			}
			if fmt.Sprint(seqs(got)) != fmt.Sprint(seqs(all)) {
				t.Fatalf("budget %d limit %d: paged %v, the stream is %v", budget, limit, seqs(got), seqs(all))
			}
			// ReadMessages.
			var gotMsgs []store.StoredMessage
			after = 0
			for {
				page, err := s.ReadMessages(ctx, k, store.ReadQuery{After: after, Limit: limit, MaxBytes: budget})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				size := 0
				for _, m := range page {
					size += len(m.Data)
				}
				if len(page) > 1 && size > budget {
					t.Fatalf("ReadMessages budget %d limit %d: a page of %d messages holds %d bytes", budget, limit, len(page), size)
				}
				gotMsgs = append(gotMsgs, page...)
				after = page[len(page)-1].Seq
			}
			if len(gotMsgs) != len(allMsgs) {
				t.Fatalf("ReadMessages budget %d limit %d: paged %d messages, want %d", budget, limit, len(gotMsgs), len(allMsgs))
			}
		}
	}
	if _, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 1, MaxBytes: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a negative byte budget: %v, want ErrInvalid", err)
	}
}
