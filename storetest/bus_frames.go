package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

// The publish tests of [RunBus] ([store.BusFrameStore]).

// Publish returns the publish the suite stores for (stream, sender instance, client_msg_id): a
// team publish of the stream's org stamped now, expiring after 30 days, whose Data names its
// stream, sender and client_msg_id.
func Publish(stream store.StreamKey, instance, clientMsgID string) store.PublishWrite {
	now := time.Now()
	return store.PublishWrite{
		Stream:         stream,
		SenderOrg:      stream.Org,
		SenderInstance: instance,
		ClientMsgID:    clientMsgID,
		ServerTime:     now,
		ExpiresAt:      now.Add(retention),
		Data: fmt.Appendf(nil, `{"t":"deliver","org":%q,"name":%q,"instance":%q,"client_msg_id":%q}`,
			stream.Org, stream.Name, instance, clientMsgID),
	}
}

func busPublish(t *testing.T, s store.Store, p store.PublishWrite) store.StoredPublish {
	t.Helper()
	got, replayed, err := s.AppendPublish(context.Background(), p)
	if err != nil {
		t.Fatalf("AppendPublish(%s %s %s): %v", p.Stream.Name, p.SenderInstance, p.ClientMsgID, err)
	}
	if replayed {
		t.Fatalf("AppendPublish(%s): replayed, want a new publish", p.ClientMsgID)
	}
	return got
}

func samePublish(t *testing.T, what string, got, want store.StoredPublish) {
	t.Helper()
	if got.Stream != want.Stream || got.Seq != want.Seq || got.SenderOrg != want.SenderOrg || got.SenderInstance != want.SenderInstance ||
		got.ClientMsgID != want.ClientMsgID || got.To != want.To || got.Private != want.Private || !bytes.Equal(got.Data, want.Data) ||
		!got.ServerTime.Equal(want.ServerTime) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("%s:\n got %+v data=%s\nwant %+v data=%s", what, got, got.Data, want, want.Data)
	}
}

// checkEntries compares stream entries of any kind.
func checkEntries(t *testing.T, what string, got, want []store.StreamEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries %v, want %d %v", what, len(got), entrySeqs(got), len(want), entrySeqs(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		set := 0
		for _, b := range []bool{g.Message != nil, g.Task != nil, g.Publish != nil} {
			if b {
				set++
			}
		}
		if set != 1 || g.Seq != w.Seq || (g.Message == nil) != (w.Message == nil) || (g.Task == nil) != (w.Task == nil) {
			t.Fatalf("%s: entry %d = %+v, want %+v", what, i, g, w)
		}
		switch {
		case g.Message != nil:
			sameMessage(t, fmt.Sprintf("%s: entry %d", what, i), *g.Message, *w.Message)
		case g.Task != nil:
			sameProposal(t, fmt.Sprintf("%s: entry %d", what, i), *g.Task, *w.Task)
		default:
			samePublish(t, fmt.Sprintf("%s: entry %d", what, i), *g.Publish, *w.Publish)
		}
	}
}

func entrySeqs(es []store.StreamEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func testBusPublishInvalid(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	for _, c := range []struct {
		name string
		mut  func(*store.PublishWrite)
	}{
		{"swarm stream", func(p *store.PublishWrite) { p.Stream, p.SenderOrg = store.SwarmStream("sw-1"), "org-a" }},
		{"no stream name", func(p *store.PublishWrite) { p.Stream.Name = "" }},
		{"no sender org", func(p *store.PublishWrite) { p.SenderOrg = "" }},
		{"sender of another org", func(p *store.PublishWrite) { p.SenderOrg = "org-b" }},
		{"no sender instance", func(p *store.PublishWrite) { p.SenderInstance = "" }},
		{"no client_msg_id", func(p *store.PublishWrite) { p.ClientMsgID = "" }},
		{"private without to", func(p *store.PublishWrite) { p.Private = true }},
		{"zero server time", func(p *store.PublishWrite) { p.ServerTime = time.Time{} }},
		{"no data", func(p *store.PublishWrite) { p.Data = nil }},
	} {
		p := Publish(k, "inst-1", "c-"+c.name)
		c.mut(&p)
		if _, _, err := s.AppendPublish(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	for _, limit := range []int{0, -1} {
		if _, err := s.ExpirePublishes(ctx, time.Now(), limit); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ExpirePublishes limit %d: %v", limit, err)
		}
	}
	if _, err := s.ExpirePublishes(ctx, time.Time{}, 1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ExpirePublishes zero time: %v", err)
	}
	// Nothing was stored and no seq was taken.
	if n := lastSeq(t, s, k); n != 0 {
		t.Fatalf("refused publishes took seq %d", n)
	}
}

// testBusPublishStream: publishes, messages and task events share one gap-free counter per
// stream; ReadStream interleaves them in seq order, filters private publishes by the viewer's
// agents and leaves publishes out of threads; another org's same channel never mixes.
func testBusPublishStream(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	qw := Message(k, "org-a", "inst-1", "q1")
	qw.Type, qw.Deadline = "question", time.Now().Add(-time.Minute)
	q1 := send(t, s, qw)                               // 1
	p2 := busPublish(t, s, Publish(k, "inst-1", "p2")) // 2
	t3 := propose(t, s, k, q1.GID, true)               // 3
	priv := Publish(k, "inst-2", "p4")                 // 4, private to codex
	priv.To, priv.Private = "codex", true
	p4 := busPublish(t, s, priv)
	teamTo := Publish(k, "inst-2", "p5") // 5, team with a to: everyone sees it
	teamTo.To = "claude"
	p5 := busPublish(t, s, teamTo)
	m6 := send(t, s, Message(k, "org-a", "inst-2", "m6")) // 6
	other := busPublish(t, s, Publish(store.OrgStream("org-b", ChannelGeneral), "inst-9", "p2"))
	if other.Seq != 1 {
		t.Fatalf("org-b's first publish has seq %d", other.Seq)
	}
	msg := func(m store.StoredMessage) store.StreamEntry { return store.StreamEntry{Seq: m.Seq, Message: &m} }
	task := func(p store.TaskProposal) store.StreamEntry { return store.StreamEntry{Seq: p.Seq, Task: &p} }
	pub := func(p store.StoredPublish) store.StreamEntry { return store.StreamEntry{Seq: p.Seq, Publish: &p} }
	all := []store.StreamEntry{msg(q1), pub(p2), task(t3), pub(p4), pub(p5), msg(m6)}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: publishes, messages and task events share one gap-free counter", i, e.Seq)
		}
	}
	for after := range int64(len(all) + 1) {
		for limit := 1; limit <= len(all)+1; limit++ {
			got, err := s.ReadStream(ctx, k, store.ReadQuery{After: after, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			want := all[min(int(after), len(all)):]
			checkEntries(t, fmt.Sprintf("after %d limit %d", after, limit), got, want[:min(limit, len(want))])
		}
	}
	read := func(q store.ReadQuery) []store.StreamEntry {
		t.Helper()
		got, err := s.ReadStream(ctx, k, q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	withoutPrivate := []store.StreamEntry{msg(q1), pub(p2), task(t3), pub(p5), msg(m6)}
	for _, c := range []struct {
		name   string
		viewer store.Viewer
		want   []store.StreamEntry
	}{
		{"no agents", store.Viewer{Org: "org-a", Instance: "inst-3"}, withoutPrivate},
		{"other agents", store.Viewer{Org: "org-a", Instance: "inst-3", Agents: []string{"claude", "x"}}, withoutPrivate},
		{"the sender without to", store.Viewer{Org: "org-a", Instance: "inst-2", Agents: []string{"gemini"}}, withoutPrivate},
		{"to", store.Viewer{Org: "org-a", Instance: "inst-3", Agents: []string{"x", "codex"}}, all},
	} {
		checkEntries(t, c.name, read(store.ReadQuery{Limit: 100, Viewer: &c.viewer}), c.want)
		checkEntries(t, c.name+" limit 4", read(store.ReadQuery{Limit: 4, Viewer: &c.viewer}), c.want[:4])
	}
	checkEntries(t, "thread", read(store.ReadQuery{Limit: 100, ThreadID: q1.GID}), []store.StreamEntry{msg(q1)})
	if n := lastSeq(t, s, k); n != 6 {
		t.Fatalf("StreamLastSeq %d, want 6", n)
	}
	// ReadMessages never returns publishes.
	sameMessages(t, "messages only", readMessages(t, s, k, store.ReadQuery{}), []store.StoredMessage{q1, m6})
}

// testBusPublishIdempotency: a resent (sender org, instance, client_msg_id) answers the original
// and assigns nothing; messages are another idempotency space; other instances are other keys.
func testBusPublishIdempotency(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	first := busPublish(t, s, Publish(k, "inst-1", "c1"))
	resend := Publish(k, "inst-1", "c1")
	resend.To, resend.Data, resend.Stream = "x", []byte(`{"other":true}`), store.OrgStream("org-a", ChannelOps)
	got, replayed, err := s.AppendPublish(ctx, resend)
	if err != nil || !replayed {
		t.Fatalf("resend: replayed %v, %v", replayed, err)
	}
	samePublish(t, "resend answers the original", got, first)
	if n := lastSeq(t, s, store.OrgStream("org-a", ChannelOps)); n != 0 {
		t.Fatalf("a replay took a seq on the other stream: %d", n)
	}
	if p := busPublish(t, s, Publish(k, "inst-2", "c1")); p.Seq != 2 {
		t.Fatalf("another instance's c1: seq %d", p.Seq)
	}
	if m := send(t, s, Message(k, "org-a", "inst-1", "c1")); m.Seq != 3 {
		t.Fatalf("a message with a publish's client_msg_id: seq %d", m.Seq)
	}
	// Concurrent resends of one new id store it once.
	var wg sync.WaitGroup
	results := make([]store.StoredPublish, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = s.AppendPublish(ctx, Publish(k, "inst-3", "same"))
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i].Seq != 4 {
			t.Fatalf("concurrent resend %d: seq %d, %v", i, results[i].Seq, errs[i])
		}
	}
	if n := lastSeq(t, s, k); n != 4 {
		t.Fatalf("StreamLastSeq %d, want 4", n)
	}
}

// testBusPublishConcurrent: concurrent senders interleaving messages and publishes on one stream
// get every seq 1…N exactly once.
func testBusPublishConcurrent(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	k := store.OrgStream("org-a", ChannelGeneral)
	const senders, each = 6, 20
	var mu sync.Mutex
	var seqs []int64
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst := fmt.Sprintf("inst-%d", i)
			for j := range each {
				var seq int64
				var err error
				id := fmt.Sprintf("c%d", j)
				if (i+j)%2 == 0 {
					var p store.StoredPublish
					p, _, err = s.AppendPublish(context.Background(), Publish(k, inst, id))
					seq = p.Seq
				} else {
					var m store.StoredMessage
					m, _, err = s.AppendMessage(context.Background(), Message(k, "org-a", inst, id))
					seq = m.Seq
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seqs = append(seqs, seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(seqs)
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("seq %d at %d: not gap-free", seq, i)
		}
	}
	got, err := s.ReadStream(context.Background(), k, store.ReadQuery{Limit: senders * each})
	if err != nil || len(got) != senders*each {
		t.Fatalf("ReadStream: %d entries, %v", len(got), err)
	}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
}

// testBusPublishRetention: an expired publish is invisible at once, the sweeper deletes it, its
// seq is never given again and its client_msg_id is free again; publishes survive a reopen.
func testBusPublishRetention(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	k := store.OrgStream("org-a", ChannelGeneral)
	now := time.Now()
	with := func(id string, expires time.Time) store.StoredPublish {
		p := Publish(k, "inst-1", id)
		p.ExpiresAt = expires
		return busPublish(t, s, p)
	}
	with("gone", now.Add(-time.Hour))        // 1
	kept := with("kept", now.Add(time.Hour)) // 2
	never := with("never", time.Time{})      // 3
	pub := func(p store.StoredPublish) store.StreamEntry { return store.StreamEntry{Seq: p.Seq, Publish: &p} }
	got, err := s.ReadStream(ctx, k, store.ReadQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, "visible", got, []store.StreamEntry{pub(kept), pub(never)})
	sweep := func(at time.Time, want int) {
		t.Helper()
		if n, err := s.ExpirePublishes(ctx, at, 10); err != nil || n != want {
			t.Fatalf("ExpirePublishes(%v) = %d, %v; want %d", at.Sub(now), n, err, want)
		}
	}
	sweep(now, 1)
	sweep(now, 0)
	// The expired id is free again and takes a new seq.
	if p := busPublish(t, s, Publish(k, "inst-1", "gone")); p.Seq != 4 {
		t.Fatalf("resend of an expired publish: seq %d", p.Seq)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	r, replayed, err := s2.AppendPublish(ctx, Publish(k, "inst-1", "kept"))
	if err != nil || !replayed {
		t.Fatalf("resend after reopen: replayed %v, %v", replayed, err)
	}
	samePublish(t, "after reopen", r, kept)
	sweep2 := func(at time.Time, want int) {
		t.Helper()
		if n, err := s2.ExpirePublishes(ctx, at, 10); err != nil || n != want {
			t.Fatalf("ExpirePublishes(%v) = %d, %v; want %d", at.Sub(now), n, err, want)
		}
	}
	sweep2(now.Add(2*time.Hour), 1) // kept
	got, err = s2.ReadStream(ctx, k, store.ReadQuery{Limit: 10})
	if err != nil || len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 4 {
		t.Fatalf("after the second sweep: %v, %v", entrySeqs(got), err)
	}
	if m := send(t, s2, Message(k, "org-a", "inst-1", "m")); m.Seq != 5 {
		t.Fatalf("message after publishes expired: seq %d", m.Seq)
	}
}

// testBusPublishSubscribe: a publish wakes the stream's subscribers; a replay does not have to.
func testBusPublishSubscribe(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	k := store.OrgStream("org-a", ChannelGeneral)
	notify, cancel := s.SubscribeStream(k)
	defer cancel()
	busPublish(t, s, Publish(k, "inst-1", "c1"))
	select {
	case <-notify:
	case <-time.After(wait):
		t.Fatal("no notification after a publish")
	}
}

// The handoff tests of [RunBus].

// Handoff returns the handoff the suite stores for (org, handoff_id): offered by inst-1's
// claude to inst-2's codex on ChannelGeneral, with its deadline an hour ahead and its record
// kept 30 days; Data names the org and id.
func Handoff(org, handoffID string) store.HandoffWrite {
	now := time.Now()
	return store.HandoffWrite{
		Org: org, HandoffID: handoffID, Channel: ChannelGeneral,
		FromInstance: "inst-1", From: "claude", ToInstance: "inst-2", To: "codex",
		Deadline: now.Add(time.Hour), CreatedAt: now, ExpiresAt: now.Add(retention),
		Data: fmt.Appendf(nil, `{"t":"handoff.offer","org":%q,"handoff_id":%q}`, org, handoffID),
	}
}

func offer(t *testing.T, s store.Store, h store.HandoffWrite) store.Handoff {
	t.Helper()
	got, created, err := s.OfferHandoff(context.Background(), h)
	if err != nil || !created {
		t.Fatalf("OfferHandoff(%s/%s): created %v, %v", h.Org, h.HandoffID, created, err)
	}
	if got.State != store.HandoffOffered || !got.SettledAt.IsZero() {
		t.Fatalf("new handoff %+v", got)
	}
	return got
}

func sameHandoff(t *testing.T, what string, got, want store.Handoff) {
	t.Helper()
	g, w := got.HandoffWrite, want.HandoffWrite
	if g.Org != w.Org || g.HandoffID != w.HandoffID || g.Channel != w.Channel || g.FromInstance != w.FromInstance || g.From != w.From ||
		g.ToInstance != w.ToInstance || g.To != w.To || !g.Deadline.Equal(w.Deadline) || !g.CreatedAt.Equal(w.CreatedAt) ||
		!g.ExpiresAt.Equal(w.ExpiresAt) || !bytes.Equal(g.Data, w.Data) || got.State != want.State || !got.SettledAt.Equal(want.SettledAt) {
		t.Fatalf("%s:\n got %+v data=%s\nwant %+v data=%s", what, got, g.Data, want, w.Data)
	}
}

func testBusHandoffInvalid(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		mut  func(*store.HandoffWrite)
	}{
		{"no org", func(h *store.HandoffWrite) { h.Org = "" }},
		{"no handoff_id", func(h *store.HandoffWrite) { h.HandoffID = "" }},
		{"no channel", func(h *store.HandoffWrite) { h.Channel = "" }},
		{"no offering instance", func(h *store.HandoffWrite) { h.FromInstance = "" }},
		{"no offering agent", func(h *store.HandoffWrite) { h.From = "" }},
		{"no recipient instance", func(h *store.HandoffWrite) { h.ToInstance = "" }},
		{"no recipient agent", func(h *store.HandoffWrite) { h.To = "" }},
		{"zero deadline", func(h *store.HandoffWrite) { h.Deadline = time.Time{} }},
		{"zero creation", func(h *store.HandoffWrite) { h.CreatedAt = time.Time{} }},
		{"expires before the deadline", func(h *store.HandoffWrite) { h.ExpiresAt = h.Deadline.Add(-time.Second) }},
		{"no data", func(h *store.HandoffWrite) { h.Data = nil }},
	} {
		w := Handoff("org-a", "h-"+c.name)
		c.mut(&w)
		if _, _, err := s.OfferHandoff(ctx, w); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	now := time.Now()
	for _, c := range []struct {
		name, org, id, state string
		at                   time.Time
	}{
		{"no org", "", "h", store.HandoffAcked, now},
		{"no id", "org-a", "", store.HandoffAcked, now},
		{"offered", "org-a", "h", store.HandoffOffered, now},
		{"unknown state", "org-a", "h", "lapsed", now},
		{"zero time", "org-a", "h", store.HandoffRejected, time.Time{}},
	} {
		if _, _, err := s.SettleHandoff(ctx, c.org, c.id, c.state, c.at); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("settle %s: %v, want ErrInvalid", c.name, err)
		}
	}
	if _, err := s.GetHandoff(ctx, "", "h"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("GetHandoff without org: %v", err)
	}
	for _, c := range []struct {
		org, inst, to string
		at            time.Time
		limit         int
	}{{"", "i", "a", now, 1}, {"o", "", "a", now, 1}, {"o", "i", "", now, 1}, {"o", "i", "a", time.Time{}, 1}, {"o", "i", "a", now, 0}} {
		if _, err := s.PendingHandoffs(ctx, c.org, c.inst, c.to, c.at, c.limit); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PendingHandoffs%+v: %v", c, err)
		}
	}
	if _, err := s.ExpireHandoffs(ctx, now, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ExpireHandoffs limit 0: %v", err)
	}
	if _, err := s.GetHandoff(ctx, "org-a", "h-no org"); err == nil {
		t.Fatal("a refused offer was stored")
	}
}

// testBusHandoffLifecycle: one handoff per (org, handoff_id); a repeated offer answers the
// stored one; exactly one settlement applies, never after the deadline; pending offers are
// the recipient's unsettled ones before their deadline; orgs never mix.
func testBusHandoffLifecycle(t *testing.T, h *harness) {
	s, _ := h.fresh(t)
	ctx := context.Background()
	now := time.Now()
	h1 := offer(t, s, Handoff("org-a", "h-1"))
	got, err := s.GetHandoff(ctx, "org-a", "h-1")
	if err != nil {
		t.Fatal(err)
	}
	sameHandoff(t, "GetHandoff", got, h1)
	again := Handoff("org-a", "h-1")
	again.FromInstance, again.Data = "inst-9", []byte(`{"other":1}`)
	if r, created, err := s.OfferHandoff(ctx, again); err != nil || created {
		t.Fatalf("repeated offer: created %v, %v", created, err)
	} else {
		sameHandoff(t, "repeated offer answers the stored one", r, h1)
	}
	// Another org's h-1 is another handoff.
	b1 := offer(t, s, Handoff("org-b", "h-1"))
	for _, c := range []struct{ org, id string }{{"org-c", "h-1"}, {"org-a", "h-404"}} {
		_, err := s.GetHandoff(ctx, c.org, c.id)
		notFound(t, "GetHandoff "+c.org+"/"+c.id, err)
		_, _, err = s.SettleHandoff(ctx, c.org, c.id, store.HandoffAcked, now)
		notFound(t, "SettleHandoff "+c.org+"/"+c.id, err)
	}
	// Pending: the recipient's, oldest first, unsettled and before the deadline.
	h2w := Handoff("org-a", "h-2")
	h2 := offer(t, s, h2w)
	late := Handoff("org-a", "h-late")
	late.Deadline = now.Add(time.Minute)
	hl := offer(t, s, late)
	otherTo := Handoff("org-a", "h-other")
	otherTo.To = "gemini"
	offer(t, s, otherTo)
	pending := func(at time.Time, want ...store.Handoff) {
		t.Helper()
		got, err := s.PendingHandoffs(ctx, "org-a", "inst-2", "codex", at, 10)
		if err != nil || len(got) != len(want) {
			t.Fatalf("PendingHandoffs at %v: %d, %v; want %d", at.Sub(now), len(got), err, len(want))
		}
		for i := range got {
			sameHandoff(t, fmt.Sprintf("pending %d", i), got[i], want[i])
		}
	}
	pending(now, h1, h2, hl)
	pending(now.Add(2*time.Minute), h1, h2)
	if got, err := s.PendingHandoffs(ctx, "org-a", "inst-2", "codex", now, 1); err != nil || len(got) != 1 || got[0].HandoffID != "h-1" {
		t.Fatalf("pending limit 1: %+v, %v", got, err)
	}
	// Settle: the first applies, every later one does not.
	at := now.Add(time.Second)
	s1, applied, err := s.SettleHandoff(ctx, "org-a", "h-1", store.HandoffAcked, at)
	if err != nil || !applied || s1.State != store.HandoffAcked || !s1.SettledAt.Equal(at) {
		t.Fatalf("ack: %+v applied %v, %v", s1, applied, err)
	}
	for _, state := range []string{store.HandoffAcked, store.HandoffRejected} {
		r, applied, err := s.SettleHandoff(ctx, "org-a", "h-1", state, at.Add(time.Second))
		if err != nil || applied {
			t.Fatalf("second %s: applied %v, %v", state, applied, err)
		}
		sameHandoff(t, "after a second settlement", r, s1)
	}
	pending(now, h2, hl)
	// Lapsed: a settlement at or after the deadline does not apply.
	r, applied, err := s.SettleHandoff(ctx, "org-a", "h-late", store.HandoffRejected, late.Deadline)
	if err != nil || applied || r.State != store.HandoffOffered {
		t.Fatalf("settle at the deadline: %+v applied %v, %v", r, applied, err)
	}
	// Concurrent settlements of h-2: exactly one applies.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := store.HandoffAcked
			if i%2 == 1 {
				state = store.HandoffRejected
			}
			_, applied, err := s.SettleHandoff(ctx, "org-a", "h-2", state, now.Add(time.Second))
			if err != nil {
				t.Error(err)
			}
			if applied {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d concurrent settlements applied, want 1", wins)
	}
	// org-b's h-1 is untouched.
	if got, err := s.GetHandoff(ctx, "org-b", "h-1"); err != nil {
		t.Fatal(err)
	} else {
		sameHandoff(t, "other org", got, b1)
	}
}

// testBusHandoffRetention: an expired handoff is gone at once (every read answers
// ErrNotFound), the sweeper deletes it, its handoff_id is free again, and handoffs survive a
// reopen.
func testBusHandoffRetention(t *testing.T, h *harness) {
	s, dir := h.fresh(t)
	ctx := context.Background()
	now := time.Now()
	gone := Handoff("org-a", "gone")
	gone.Deadline, gone.ExpiresAt = now.Add(-2*time.Hour), now.Add(-time.Hour)
	offer(t, s, gone)
	_, err := s.GetHandoff(ctx, "org-a", "gone")
	notFound(t, "expired handoff", err)
	_, _, err = s.SettleHandoff(ctx, "org-a", "gone", store.HandoffAcked, now)
	notFound(t, "settle an expired handoff", err)
	kept := offer(t, s, Handoff("org-a", "kept"))
	if n, err := s.ExpireHandoffs(ctx, now, 10); err != nil || n != 1 {
		t.Fatalf("ExpireHandoffs = %d, %v; want 1", n, err)
	}
	// The expired id is free again.
	fresh := offer(t, s, Handoff("org-a", "gone"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := h.open(t, dir)
	t.Cleanup(func() { _ = s2.Close() })
	for _, want := range []store.Handoff{kept, fresh} {
		got, err := s2.GetHandoff(ctx, "org-a", want.HandoffID)
		if err != nil {
			t.Fatal(err)
		}
		sameHandoff(t, "after reopen", got, want)
	}
	if _, applied, err := s2.SettleHandoff(ctx, "org-a", "kept", store.HandoffRejected, now); err != nil || !applied {
		t.Fatalf("settle after reopen: %v, %v", applied, err)
	}
	if n, err := s2.ExpireHandoffs(ctx, now.Add(100*24*time.Hour), 10); err != nil || n != 2 {
		t.Fatalf("ExpireHandoffs after 100 days = %d, %v; want 2", n, err)
	}
}
