package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jetstream"
	"github.com/agentwire/agentwire/sqlite"
	"github.com/agentwire/agentwire/store"
)

func init() { register(newStoreCmd) }

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Work on a relay's store while no relay serves it",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStoreCopyCmd())
	return cmd
}

// storeCopyBatch is the most events a copied run appends at once (and the page of every read).
const storeCopyBatch = 1000

func newStoreCopyCmd() *cobra.Command {
	var from, to string
	var js jetstreamFlags
	cmd := &cobra.Command{
		Use:   "copy --from STORE --to STORE",
		Short: "Copy an installation's runs, bus streams and envelopes into an empty store (move from SQLite to NATS JetStream)",
		Long: `Copy everything a relay stored into another, empty store, for example to move an
installation from SQLite to a NATS JetStream cluster. Stop the relays of both first.

A store is one of:
  sqlite:DIR        the SQLite database of a data directory (DIR/agentwire.db)
  jetstream:URL     a NATS JetStream server or cluster (nats://host:4222, tls://…, or a
                    comma-separated list); --nats-creds, --nats-replicas, --own-envoy-stream
                    and --envoy-org apply as for serve
  jetstream:DIR     the single-node JetStream server that serve --store jetstream --data DIR
                    embeds, started here on DIR

What is copied, exactly:
  runs              every run of every org: its events (byte for byte), status, counters,
                    createdAt and updatedAt, and its checkpoint
  bus streams       every channel's and swarm's messages (gid, thread, seq, times), task
                    events (proposal id, task number, seq) and publishes, in seq order; an
                    entry whose seq the target cannot give again (the source's expired
                    entries left gaps, or a proposal's question expired) is reported
  envelopes         every org's stored envelopes, in store order, with their message ids
                    and stored times (the target numbers them anew; on JetStream the 72 h
                    dedupe window restarts at the copy)
What is not copied (no store interface lists them): receipts, ack positions, hello
announcements, handoffs, and the dedupe keys of notification stream sessions.

Exit status: 0 when everything listed above was copied exactly, 1 when something could not
be (each is reported) or the target is not empty, 2 on a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return usageError("store copy needs --from and --to")
			}
			src, err := parseStoreSpec(from)
			if err != nil {
				return usageError("invalid --from: %v", err)
			}
			dst, err := parseStoreSpec(to)
			if err != nil {
				return usageError("invalid --to: %v", err)
			}
			if src == dst {
				return usageError("--from and --to are the same store")
			}
			if err := js.check(dst.natsURL()); err != nil {
				return usageError("%v", err)
			}
			return storeCopy(cmd.Context(), src, dst, &js, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "store to copy from: sqlite:DIR, jetstream:URL or jetstream:DIR")
	cmd.Flags().StringVar(&to, "to", "", "empty store to copy into: sqlite:DIR, jetstream:URL or jetstream:DIR")
	js.register(cmd.Flags())
	return cmd
}

// storeSpec is a parsed --from or --to.
type storeSpec struct {
	kind  string // "sqlite" or "jetstream"
	where string // a directory, or a NATS URL for jetstream
}

func (s storeSpec) isURL() bool { return strings.Contains(s.where, "://") }

// natsURL is the NATS URL of a jetstream spec, "" for an embedded one or sqlite.
func (s storeSpec) natsURL() string {
	if s.kind == "jetstream" && s.isURL() {
		return s.where
	}
	return ""
}

func parseStoreSpec(v string) (storeSpec, error) {
	kind, where, ok := strings.Cut(v, ":")
	if !ok || where == "" || kind != "sqlite" && kind != "jetstream" {
		return storeSpec{}, fmt.Errorf("%q is not sqlite:DIR, jetstream:URL or jetstream:DIR", v)
	}
	s := storeSpec{kind: kind, where: where}
	if !s.isURL() {
		abs, err := filepath.Abs(where)
		if err != nil {
			return storeSpec{}, err
		}
		s.where = abs
	} else if kind == "sqlite" {
		return storeSpec{}, fmt.Errorf("%q: sqlite takes a directory", v)
	}
	return s, nil
}

// copyClock is the clock of the target store: the copy sets it to the source run's times, so
// that createdAt and updatedAt are copied.
type copyClock struct{ at atomic.Int64 }

func (c *copyClock) now() time.Time {
	if n := c.at.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Now()
}

func (c *copyClock) set(t time.Time) { c.at.Store(t.UnixNano()) }

// openCopyStore opens one side of a copy. A source directory must hold a store already.
func openCopyStore(s storeSpec, js *jetstreamFlags, clock *copyClock, source bool) (store.Store, error) {
	if !s.isURL() {
		if _, err := os.Stat(s.where); err != nil && source {
			return nil, err
		}
		if err := os.MkdirAll(s.where, 0o750); err != nil {
			return nil, err
		}
	}
	if s.kind == "sqlite" {
		path := filepath.Join(s.where, sqlite.DefaultFileName)
		if _, err := os.Stat(path); err != nil && source {
			return nil, err
		}
		return sqlite.Open(path, sqlite.Options{Now: clock.now})
	}
	if source {
		if _, err := os.Stat(filepath.Join(s.where, jetstream.EmbeddedDir)); err != nil && !s.isURL() {
			return nil, err
		}
	}
	opts := jetstream.Options{EnvoyOrg: js.envoyOrg, OwnEnvoyStream: js.ownEnvoyStream, Replicas: js.replicas, Now: clock.now}
	if !s.isURL() {
		return jetstream.OpenEmbedded(s.where, jetstream.EmbeddedOptions{Store: opts})
	}
	f := *js
	f.replicas = opts.Replicas
	st, err := f.openWith(s.where, opts)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// copyReport collects what could not be copied exactly.
type copyReport struct {
	w        io.Writer
	problems int
}

func (r *copyReport) problem(format string, args ...any) {
	r.problems++
	fmt.Fprintf(r.w, "agentwire: store copy: "+format+"\n", args...)
}

func storeCopy(ctx context.Context, from, to storeSpec, js *jetstreamFlags, stdout, stderr io.Writer) error {
	clock := &copyClock{}
	src, err := openCopyStore(from, js, &copyClock{}, true)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("cannot open %s:%s: %v", from.kind, from.where, err)}
	}
	defer src.Close()
	dst, err := openCopyStore(to, js, clock, false)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("cannot open %s:%s: %v", to.kind, to.where, err)}
	}
	defer dst.Close()
	sl, ok1 := src.(store.Lister)
	dl, ok2 := dst.(store.Lister)
	if !ok1 || !ok2 {
		return &exitError{code: 1, msg: "a store cannot list its contents"}
	}
	if err := checkEmpty(ctx, dl); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	rep := &copyReport{w: stderr}
	runs, evs, err := copyRuns(ctx, src, sl, dst, clock, rep)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("copying runs: %v", err)}
	}
	clock.set(time.Time{})
	streams, counts, err := copyBus(ctx, src, sl, dst, rep)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("copying bus streams: %v", err)}
	}
	envs, err := copyEnvelopes(ctx, sl, dst, rep)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("copying envelopes: %v", err)}
	}
	fmt.Fprintf(stdout, "copied %d runs (%d events), %d bus streams (%d messages, %d task events, %d publishes), %d envelopes\n",
		runs, evs, streams, counts[0], counts[1], counts[2], envs)
	fmt.Fprintln(stdout, "not copied: receipts, ack positions, hello announcements, handoffs, notification session dedupe keys")
	if rep.problems > 0 {
		fmt.Fprintf(stderr, "agentwire: store copy: %d items could not be copied exactly (listed above)\n", rep.problems)
		return errRefused
	}
	return nil
}

// checkEmpty refuses a target that holds runs, bus streams or envelopes.
func checkEmpty(ctx context.Context, l store.Lister) error {
	orgs, err := l.RunOrgs(ctx)
	if err != nil {
		return err
	}
	streams, err := l.BusStreams(ctx)
	if err != nil {
		return err
	}
	envs, err := l.AllEnvelopes(ctx, 0, 1)
	if err != nil {
		return err
	}
	if len(orgs)+len(streams)+len(envs) > 0 {
		return errors.New("the target store is not empty (it holds runs, bus streams or envelopes)")
	}
	return nil
}

// copyRuns copies every run of every org and returns the runs and events copied.
func copyRuns(ctx context.Context, src store.Store, sl store.Lister, dst store.Store, clock *copyClock, rep *copyReport) (int, int64, error) {
	orgs, err := sl.RunOrgs(ctx)
	if err != nil {
		return 0, 0, err
	}
	runs, evs := 0, int64(0)
	for _, org := range orgs {
		for cursor := ""; ; {
			page, err := src.ListRuns(ctx, org, store.ListRunsQuery{Limit: 100, Cursor: cursor})
			if err != nil {
				return runs, evs, err
			}
			for _, r := range page.Runs {
				n, err := copyRun(ctx, src, dst, org, r.RunID, clock, rep)
				if err != nil {
					return runs, evs, fmt.Errorf("run %q of org %q: %w", r.RunID, org, err)
				}
				runs++
				evs += n
			}
			if cursor = page.Next; cursor == "" {
				break
			}
		}
	}
	return runs, evs, nil
}

// copyRun appends the run's events in batches of at most storeCopyBatch, never across its
// checkpoint: the batch that ends at the checkpoint carries the source's checkpoint, a first
// batch that ends before it carries the reducer state after it (every run's first batch has
// one). Each batch's status is the reducer's after it; the clock gives the first batch the
// source's createdAt and the last its updatedAt. The copy is then read back and compared.
func copyRun(ctx context.Context, src, dst store.Store, org, runID string, clock *copyClock, rep *copyReport) (int64, error) {
	snap, info, err := src.GetRun(ctx, org, runID)
	if err != nil {
		return 0, err
	}
	st := events.NewReducerState()
	var last, n int64
	clock.set(info.CreatedAt)
	for {
		page, err := src.ReadEvents(ctx, org, runID, last, storeCopyBatch)
		if err != nil {
			return n, err
		}
		if len(page) == 0 {
			break
		}
		// Split at the checkpoint.
		for len(page) > 0 {
			cut := len(page)
			if last < info.SnapshotSequence {
				for i, e := range page {
					if e.LogicalSequence >= info.SnapshotSequence {
						cut = i + 1
						break
					}
				}
			}
			if last == 0 && cut > 1 && page[cut-1].LogicalSequence == info.LastLogicalSequence && !info.CreatedAt.Equal(info.UpdatedAt) {
				// One batch would give the run one time: its last event goes second.
				cut--
			}
			batch := page[:cut]
			page = page[cut:]
			for _, e := range batch {
				ev, err := events.ParseEvent(e.Data)
				if err != nil {
					return n, fmt.Errorf("event %d: %w", e.LogicalSequence, err)
				}
				if st, err = events.Reduce(st, ev); err != nil {
					return n, fmt.Errorf("event %d: %w", e.LogicalSequence, err)
				}
			}
			req := store.AppendRequest{ExpectedLastLogicalSequence: last, Events: batch, Status: string(st.Status())}
			end := batch[len(batch)-1].LogicalSequence
			switch {
			case end == info.SnapshotSequence:
				req.Snapshot = snap
			case last == 0:
				req.Snapshot = st.AppendJSON(nil)
			}
			if end == info.LastLogicalSequence {
				clock.set(info.UpdatedAt)
				req.Status = info.Status
			}
			if _, err := dst.AppendRun(ctx, org, runID, req); err != nil {
				return n, err
			}
			last = end
			n += int64(len(batch))
		}
	}
	// Read back: the same checkpoint, counters, status and times, and the same events.
	gotSnap, got, err := dst.GetRun(ctx, org, runID)
	if err != nil {
		return n, err
	}
	if !bytes.Equal(gotSnap, snap) || got.Status != info.Status || got.EventCount != info.EventCount || got.LastLogicalSequence != info.LastLogicalSequence ||
		got.SnapshotSequence != info.SnapshotSequence || !got.CreatedAt.Equal(info.CreatedAt) || !got.UpdatedAt.Equal(info.UpdatedAt) {
		rep.problem("run %q of org %q: the copy reads back as %+v, the source as %+v", runID, org, got, info)
	}
	return n, nil
}

// copyBus copies every bus stream's entries in seq order. Task events are appended in the
// order of their proposal ids across streams (proposal ids are store-wide, task numbers per
// vault), so a stream waits at a task event until the proposals before it are copied.
func copyBus(ctx context.Context, src store.Store, sl store.Lister, dst store.Store, rep *copyReport) (int, [3]int, error) {
	var counts [3]int
	keys, err := sl.BusStreams(ctx)
	if err != nil {
		return 0, counts, err
	}
	// Every proposal id, in order.
	var ids []int64
	var orgs []string
	for _, k := range keys {
		if k.Network == store.NetworkOrg && !slices.Contains(orgs, k.Org) {
			orgs = append(orgs, k.Org)
		}
	}
	for _, org := range orgs {
		for after := int64(0); ; {
			ps, err := src.ListTaskProposals(ctx, org, store.ProposalQuery{After: after, Limit: storeCopyBatch})
			if err != nil {
				return 0, counts, err
			}
			if len(ps) == 0 {
				break
			}
			for _, p := range ps {
				ids = append(ids, p.ID)
			}
			after = ps[len(ps)-1].ID
		}
	}
	slices.Sort(ids)
	type cursor struct {
		k       store.StreamKey
		after   int64
		pending []store.StreamEntry
		done    bool
	}
	cs := make([]*cursor, len(keys))
	for i, k := range keys {
		cs[i] = &cursor{k: k}
	}
	next := 0 // index in ids of the next proposal to copy
	for {
		progress, left := false, false
		for _, c := range cs {
			for !c.done {
				if len(c.pending) == 0 {
					page, err := src.ReadStream(ctx, c.k, store.ReadQuery{After: c.after, Limit: storeCopyBatch})
					if err != nil {
						return 0, counts, err
					}
					if len(page) == 0 {
						c.done = true
						break
					}
					c.pending = page
					c.after = page[len(page)-1].Seq
				}
				e := c.pending[0]
				if e.Task != nil && next < len(ids) && e.Task.ID != ids[next] {
					break // an earlier proposal of another stream goes first
				}
				if err := copyEntry(ctx, dst, c.k, e, counts[:], rep); err != nil {
					return 0, counts, err
				}
				if e.Task != nil {
					next++
				}
				c.pending = c.pending[1:]
				progress = true
			}
			left = left || !c.done
		}
		if !left {
			break
		}
		if !progress {
			// A proposal listed but never met in its stream: go on without it.
			rep.problem("task proposal %d is not in its channel's stream; later proposal ids are given anew", ids[next])
			next++
		}
	}
	return len(keys), counts, nil
}

// copyEntry appends one stream entry and checks that the target gave it the source's seq
// (and a proposal its id and number).
func copyEntry(ctx context.Context, dst store.Store, k store.StreamKey, e store.StreamEntry, counts []int, rep *copyReport) error {
	where := fmt.Sprintf("%s stream %q of org %q, seq %d", k.Network, k.Name, k.Org, e.Seq)
	switch {
	case e.Message != nil:
		m, replayed, err := dst.AppendMessage(ctx, e.Message.MessageWrite)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		counts[0]++
		if replayed || m.Seq != e.Seq || m.GID != e.Message.GID {
			rep.problem("%s: message %s copied at seq %d (the source's seqs have a gap: expired messages)", where, e.Message.GID, m.Seq)
		}
	case e.Task != nil:
		p, _, err := dst.ProposeTask(ctx, e.Task.TaskProposalWrite)
		if errors.Is(err, store.ErrNotFound) {
			rep.problem("%s: task proposal %d not copied: its question expired", where, e.Task.ID)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		counts[1]++
		if p.Seq != e.Seq || p.ID != e.Task.ID || p.Number != e.Task.Number {
			rep.problem("%s: task proposal %d (task %d) copied as proposal %d (task %d) at seq %d", where, e.Task.ID, e.Task.Number, p.ID, p.Number, p.Seq)
		}
	case e.Publish != nil:
		p, replayed, err := dst.AppendPublish(ctx, e.Publish.PublishWrite)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		counts[2]++
		if replayed || p.Seq != e.Seq {
			rep.problem("%s: publish copied at seq %d (the source's seqs have a gap: expired entries)", where, p.Seq)
		}
	}
	return nil
}

// copyEnvelopes appends every org's envelopes in store order.
func copyEnvelopes(ctx context.Context, sl store.Lister, dst store.Store, rep *copyReport) (int, error) {
	n := 0
	for after := int64(0); ; {
		page, err := sl.AllEnvelopes(ctx, after, storeCopyBatch)
		if err != nil {
			return n, err
		}
		if len(page) == 0 {
			return n, nil
		}
		for _, e := range page {
			_, dup, err := dst.AppendEnvelope(ctx, e.Org, e.EnvelopeWrite, envelope.DeliveryDuplicateWindow)
			if err != nil {
				return n, fmt.Errorf("envelope %d of org %q: %w", e.Seq, e.Org, err)
			}
			if dup {
				rep.problem("envelope %d of org %q (%s) is a duplicate of an earlier one in the target's dedupe window: not copied", e.Seq, e.Org, e.MessageID)
				continue
			}
			n++
		}
		after = page[len(page)-1].Seq
	}
}
