package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/agentwire/agentwire/store"
)

// RunLister checks [store.Lister] on a fresh store: the orgs with runs (each once, ascending),
// the bus streams that gave a seq (ordered by network, org, name; swarms without an org), and
// every org's envelopes in store order, paged.
func RunLister(t *testing.T, open Opener) {
	h := &harness{open: open}
	s, _ := h.fresh(t)
	l, ok := s.(store.Lister)
	if !ok {
		t.Fatalf("%T is not a store.Lister", s)
	}
	ctx := context.Background()
	if orgs, err := l.RunOrgs(ctx); err != nil || len(orgs) != 0 {
		t.Fatalf("RunOrgs of an empty store: %v %v", orgs, err)
	}
	for _, k := range []struct{ org, run string }{{"org-b", "r1"}, {"org-a", "r1"}, {"org-b", "r2"}} {
		if _, err := s.AppendRun(ctx, k.org, k.run, store.AppendRequest{Events: Batch(k.run, 1), Snapshot: Snapshot(1, 1), Status: "running"}); err != nil {
			t.Fatal(err)
		}
	}
	if orgs, err := l.RunOrgs(ctx); err != nil || !slices.Equal(orgs, []string{"org-a", "org-b"}) {
		t.Fatalf("RunOrgs = %v, %v; want [org-a org-b]", orgs, err)
	}
	streams := []store.StreamKey{store.OrgStream("org-b", ChannelGeneral), store.SwarmStream("swarm-1"), store.OrgStream("org-a", ChannelOps), store.OrgStream("org-a", ChannelGeneral)}
	for i, k := range streams {
		org := k.Org
		if org == "" {
			org = "org-a"
		}
		send(t, s, Message(k, org, "inst", string(rune('a'+i))))
	}
	want := []store.StreamKey{streams[3], streams[2], streams[0], streams[1]}
	if got, err := l.BusStreams(ctx); err != nil || !slices.Equal(got, want) {
		t.Fatalf("BusStreams = %v, %v; want %v", got, err, want)
	}
	var stored []store.OrgEnvelope
	for i := range 5 {
		org := []string{"org-a", "org-b"}[i%2]
		e, _, err := s.AppendEnvelope(ctx, org, Envelope("notifications.agent.s1", string(rune('a'+i)), T0, org), Window)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, store.OrgEnvelope{Org: org, StoredEnvelope: e})
	}
	var got []store.OrgEnvelope
	for after := int64(0); ; {
		page, err := l.AllEnvelopes(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].Seq
	}
	if len(got) != len(stored) {
		t.Fatalf("AllEnvelopes: %d envelopes, want %d", len(got), len(stored))
	}
	for i := range got {
		g, w := got[i], stored[i]
		if g.Org != w.Org || g.Seq != w.Seq || g.Subject != w.Subject || g.MessageID != w.MessageID || !g.StoredAt.Equal(w.StoredAt) || string(g.Data) != string(w.Data) {
			t.Fatalf("AllEnvelopes[%d] = %+v, want %+v", i, g, w)
		}
	}
	if _, err := l.AllEnvelopes(ctx, -1, 1); err == nil {
		t.Fatal("AllEnvelopes with a negative cursor: no error")
	}
}
