package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
	"github.com/agentwire/agentwire/storetest"
)

// fillSource writes an installation into a SQLite data dir: runs ingested through a relay (real
// checkpoints; one run longer than a copy batch, one finished), bus streams of two orgs and a
// swarm with messages, a question turned into a task proposal and publishes, and envelopes of
// two orgs.
func fillSource(t *testing.T, dir string) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := relay.New(relay.Config{Store: st, CheckpointEvery: 150})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	c := &relay.Client{BaseURL: ts.URL}
	ctx := context.Background()
	for r, n := range []int{2, 40, 2500, 333} {
		id := fmt.Sprintf("run-%d", r)
		data, err := synth.Bytes(n, int64(r+1), id)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(data, []byte{'\n'})
		for i := 0; i < len(lines); i += 120 {
			if _, err := c.Append(ctx, id, relay.MediaNDJSON, bytes.Join(lines[i:min(i+120, len(lines))], nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = srv.Shutdown(ctx)
	ts.Close()
	now := time.Now()
	for _, k := range []store.StreamKey{store.OrgStream("org-a", storetest.ChannelGeneral), store.OrgStream("org-b", storetest.ChannelOps), store.SwarmStream("swarm-1")} {
		org := k.Org
		if org == "" {
			org = "org-a"
		}
		for i := range 5 {
			w := storetest.Message(k, org, "inst", fmt.Sprintf("%s-%d", k.Name, i))
			if i == 2 && k.Network == store.NetworkOrg {
				w.Type, w.Deadline = "question", now.Add(-time.Minute)
			}
			m, _, err := st.AppendMessage(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 && k.Network == store.NetworkOrg {
				if _, _, err := st.ProposeTask(ctx, store.TaskProposalWrite{Stream: k, Vault: storetest.Vault, QuestionGID: m.GID, CreatedAt: now, Data: []byte(`{"task":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if k.Network == store.NetworkOrg && i%2 == 1 {
				if _, _, err := st.AppendPublish(ctx, store.PublishWrite{Stream: k, SenderOrg: org, SenderInstance: "inst", ClientMsgID: fmt.Sprintf("p%d", i),
					ServerTime: now, ExpiresAt: now.Add(time.Hour), Data: []byte(`{"publish":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for i := range 7 {
		org := []string{"org-a", "org-b"}[i%2]
		if _, _, err := st.AppendEnvelope(ctx, org, storetest.Envelope("notifications.agent.s1", fmt.Sprintf("id-%d", i), now.Add(time.Duration(i)*time.Second), org), storetest.Window); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreCopy copies a SQLite installation into an embedded JetStream store and reads every
// run, stream and envelope back through both stores: events byte-identical, checkpoints,
// status, counters and times equal; bus entries with the same gid and seq (proposals with the
// same id and number); envelopes in the same order with the same ids and times.
func TestStoreCopy(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	fillSource(t, src)
	var out, errb bytes.Buffer
	if code := run([]string{"store", "copy", "--from", "sqlite:" + src, "--to", "jetstream:" + dst}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	if want := "copied 4 runs (2875 events), 3 bus streams (15 messages, 2 task events, 4 publishes), 7 envelopes\n"; !strings.HasPrefix(out.String(), want) {
		t.Fatalf("stdout %q, want it to start with %q", out.String(), want)
	}
	a, err := sqlite.Open(filepath.Join(src, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := jetstream.OpenEmbedded(dst, jetstream.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	pa, err := a.ListRuns(ctx, "local", store.ListRunsQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.ListRuns(ctx, "local", store.ListRunsQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Runs) != 4 || len(pb.Runs) != 4 {
		t.Fatalf("runs: %d in the source, %d in the copy", len(pa.Runs), len(pb.Runs))
	}
	for i, ra := range pa.Runs {
		if rb := pb.Runs[i]; !sameInfo(ra, rb) {
			t.Fatalf("listing %d: copy %+v, source %+v", i, rb, ra)
		}
		sa, ia, err := a.GetRun(ctx, "local", ra.RunID)
		if err != nil {
			t.Fatal(err)
		}
		sb, ib, err := b.GetRun(ctx, "local", ra.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sa, sb) || !sameInfo(ia, ib) {
			t.Fatalf("%s: copy %+v, source %+v (snapshots equal: %v)", ra.RunID, ib, ia, bytes.Equal(sa, sb))
		}
		ea, err := a.ReadEvents(ctx, "local", ra.RunID, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := b.ReadEvents(ctx, "local", ra.RunID, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(ea) != len(eb) {
			t.Fatalf("%s: %d events copied of %d", ra.RunID, len(eb), len(ea))
		}
		for j := range ea {
			if ea[j].LogicalSequence != eb[j].LogicalSequence || ea[j].EventID != eb[j].EventID || ea[j].Type != eb[j].Type || !bytes.Equal(ea[j].Data, eb[j].Data) {
				t.Fatalf("%s: event %d differs", ra.RunID, j)
			}
		}
	}
	streams, err := a.BusStreams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range streams {
		xa, err := a.ReadStream(ctx, k, store.ReadQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		xb, err := b.ReadStream(ctx, k, store.ReadQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", entries(xa)) != fmt.Sprintf("%+v", entries(xb)) {
			t.Fatalf("stream %s:\ncopy   %+v\nsource %+v", k.Name, entries(xb), entries(xa))
		}
	}
	ea, err := a.AllEnvelopes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.AllEnvelopes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(eb) {
		t.Fatalf("%d envelopes copied of %d", len(eb), len(ea))
	}
	for i := range ea {
		x, y := ea[i], eb[i]
		if x.Org != y.Org || x.Subject != y.Subject || x.MessageID != y.MessageID || !x.StoredAt.Equal(y.StoredAt) || !bytes.Equal(x.Data, y.Data) {
			t.Fatalf("envelope %d: copy %+v, source %+v", i, y, x)
		}
	}

	a.Close()
	b.Close()
	// A second copy into the same target is refused; so are bad arguments.
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"store", "copy", "--from", "sqlite:" + src, "--to", "jetstream:" + dst}, 1, "agentwire: the target store is not empty (it holds runs, bus streams or envelopes)\n"},
		{[]string{"store", "copy", "--from", "sqlite:" + src}, 2, "agentwire: store copy needs --from and --to\n"},
		{[]string{"store", "copy", "--from", "mysql:x", "--to", "jetstream:" + dst}, 2, "agentwire: invalid --from: \"mysql:x\" is not sqlite:DIR, jetstream:URL or jetstream:DIR\n"},
		{[]string{"store", "copy", "--from", "sqlite:" + src, "--to", "sqlite:" + src}, 2, "agentwire: --from and --to are the same store\n"},
		{[]string{"store", "copy", "--from", "sqlite:nats://x", "--to", "jetstream:" + dst}, 2, "agentwire: invalid --from: \"sqlite:nats://x\": sqlite takes a directory\n"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(c.args, nil, &out, &errb); code != c.code || errb.String() != c.msg {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, errb.String(), c.code, c.msg)
		}
	}
}

// sameInfo compares run metadata, times by instant.
func sameInfo(a, b store.RunInfo) bool {
	return a.RunID == b.RunID && a.Status == b.Status && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.EventCount == b.EventCount && a.LastLogicalSequence == b.LastLogicalSequence && a.SnapshotSequence == b.SnapshotSequence
}

// entries summarizes stream entries by kind, gid, seq and proposal id and number.
func entries(es []store.StreamEntry) []string {
	var out []string
	for _, e := range es {
		switch {
		case e.Message != nil:
			out = append(out, fmt.Sprintf("msg %s %d %s %s", e.Message.GID, e.Seq, e.Message.ThreadID, e.Message.Data))
		case e.Task != nil:
			out = append(out, fmt.Sprintf("task %d %d %d %s", e.Seq, e.Task.ID, e.Task.Number, e.Task.QuestionGID))
		case e.Publish != nil:
			out = append(out, fmt.Sprintf("pub %d %s %s", e.Seq, e.Publish.ClientMsgID, e.Publish.Data))
		}
	}
	return out
}

// TestStoreCopyGaps: a stream whose expired messages were swept keeps gaps in its seqs, which
// the target cannot give again: the copy reports each moved entry and exits 1.
func TestStoreCopyGaps(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	st, err := sqlite.Open(filepath.Join(src, sqlite.DefaultFileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := store.OrgStream("org-a", storetest.ChannelGeneral)
	for i := range 3 {
		w := storetest.Message(k, "org-a", "inst", fmt.Sprint(i))
		if i == 0 {
			w.ExpiresAt = time.Now().Add(-time.Hour)
		}
		if _, _, err := st.AppendMessage(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.ExpireMessages(ctx, time.Now(), 10); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	st.Close()
	var out, errb bytes.Buffer
	code := run([]string{"store", "copy", "--from", "sqlite:" + src, "--to", "sqlite:" + dst}, nil, &out, &errb)
	want := fmt.Sprintf("agentwire: store copy: org stream %q of org \"org-a\", seq 2: message ", storetest.ChannelGeneral)
	if code != 1 || !strings.HasPrefix(errb.String(), want) || !strings.Contains(errb.String(), "copied at seq 1 (the source's seqs have a gap: expired messages)\n") ||
		!strings.HasSuffix(errb.String(), "agentwire: store copy: 2 items could not be copied exactly (listed above)\n") {
		t.Fatalf("exit %d\nstderr %s", code, errb.String())
	}
}

// FuzzStoreSpec: parsing a --from or --to never panics, and what it accepts has a kind and a
// place.
func FuzzStoreSpec(f *testing.F) {
	for _, s := range []string{"sqlite:dir", "jetstream:nats://a:4222,nats://b:4222", "jetstream:/x", "mysql:x", "sqlite:", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := parseStoreSpec(v)
		if err == nil && (s.kind != "sqlite" && s.kind != "jetstream" || s.where == "" || s.kind == "sqlite" && s.isURL()) {
			t.Fatalf("parseStoreSpec(%q) = %+v", v, s)
		}
	})
}
