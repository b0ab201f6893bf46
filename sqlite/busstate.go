package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentwire/agentwire/store"
)

// The bus lane's durable state besides messages (store.BusStore announcements and acks):
// bus_announcements holds one row per announced (org, instance, agent, channel) with the last
// time it was seen; bus_acks the acknowledged position per (org, instance, stream). Both are
// written through the group-commit writer like every other write.

// stateStmts are the writer's statements of the bus state.
type stateStmts struct {
	putAnn, expireAnn, streamHead, selAck, putAck *sql.Stmt
}

func (b *stateStmts) defs() []stmtDef {
	return []stmtDef{
		// A pair keeps the later of its stored and new times (a late write never ages it), and
		// the dropped flag of the latest write.
		{&b.putAnn, `INSERT INTO bus_announcements (org, instance, agent, channel, vault, last_seen, dropped) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (org, instance, agent, channel) DO UPDATE SET vault = excluded.vault,
			dropped = CASE WHEN excluded.last_seen >= last_seen THEN excluded.dropped ELSE dropped END,
			last_seen = max(last_seen, excluded.last_seen)`},
		{&b.expireAnn, `DELETE FROM bus_announcements WHERE id IN (SELECT id FROM bus_announcements
			WHERE last_seen < ? ORDER BY last_seen, id LIMIT ?)`},
		{&b.streamHead, `SELECT id, last_seq FROM bus_streams WHERE network = ? AND org = ? AND name = ?`},
		{&b.selAck, `SELECT seq FROM bus_acks WHERE org = ? AND instance = ? AND stream = ?`},
		{&b.putAck, `INSERT INTO bus_acks (org, instance, stream, seq) VALUES (?, ?, ?, ?)
			ON CONFLICT (org, instance, stream) DO UPDATE SET seq = max(seq, excluded.seq)`},
	}
}

// annOp is one RecordAnnouncements call.
type annOp struct {
	opBase
	anns []store.Announcement
	at   int64
}

func (o *annOp) weight() int { return len(o.anns) }

func (o *annOp) exec(ctx context.Context, w *writer, g *groupState) error {
	for _, a := range o.anns {
		dropped := 0
		if a.Dropped {
			dropped = 1
		}
		if _, err := w.state.putAnn.ExecContext(ctx, a.Org, a.Instance, a.Agent, a.Channel, a.Vault, o.at, dropped); err != nil {
			return fmt.Errorf("sqlite: write announcement: %w", err)
		}
	}
	g.items += len(o.anns)
	g.wrote = true
	return nil
}

func (o *annOp) notify(*Store) {}

// RecordAnnouncements implements [store.BusStore.RecordAnnouncements] through the group-commit
// writer: one hello's pairs are one transaction.
func (s *Store) RecordAnnouncements(ctx context.Context, anns []store.Announcement, at time.Time) error {
	if err := store.ValidateAnnouncements(anns, at); err != nil {
		return err
	}
	if len(anns) == 0 {
		if s.isClosed() {
			return store.ErrClosed
		}
		return nil
	}
	o := &annOp{opBase: newOpBase(ctx), anns: anns, at: nanos(at)}
	return s.submit(ctx, o, o.done)
}

// ExpireAnnouncements implements [store.BusStore.ExpireAnnouncements] through the group-commit
// writer.
func (s *Store) ExpireAnnouncements(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	return s.sweep(ctx, cutoff, limit, "announcements", func(w *writer) *sql.Stmt { return w.state.expireAnn })
}

// ackOp is one SetAck call.
type ackOp struct {
	opBase
	org, instance string
	stream        store.StreamKey
	seq           int64
	out           int64
}

func (o *ackOp) weight() int { return 1 }

func (o *ackOp) exec(ctx context.Context, w *writer, g *groupState) error {
	var id, last int64
	err := w.state.streamHead.QueryRowContext(ctx, o.stream.Network, o.stream.Org, o.stream.Name).Scan(&id, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: read stream: %w", err)
	}
	if o.seq > last {
		return fmt.Errorf("%w: ack seq %d is beyond the stream's last seq %d", store.ErrInvalid, o.seq, last)
	}
	var cur int64
	err = w.state.selAck.QueryRowContext(ctx, o.org, o.instance, id).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: read ack: %w", err)
	}
	if o.seq <= cur {
		o.out = cur // never down; nothing to write
		return nil
	}
	if _, err := w.state.putAck.ExecContext(ctx, o.org, o.instance, id, o.seq); err != nil {
		return fmt.Errorf("sqlite: write ack: %w", err)
	}
	o.out = o.seq
	g.items++
	g.wrote = true
	return nil
}

func (o *ackOp) notify(*Store) {}

// SetAck implements [store.BusStore.SetAck] through the group-commit writer; an ack that does
// not raise the position commits nothing.
func (s *Store) SetAck(ctx context.Context, org, instance string, stream store.StreamKey, seq int64) (int64, error) {
	if err := store.ValidateAck(org, instance, stream, seq); err != nil {
		return 0, err
	}
	o := &ackOp{opBase: newOpBase(ctx), org: org, instance: instance, stream: stream, seq: seq}
	if err := s.submit(ctx, o, o.done); err != nil {
		return 0, err
	}
	return o.out, nil
}

// The reader pool's statements of the bus state (also checked by TestQueryPlans).
const (
	qAnnouncedInstances = `SELECT instance FROM bus_announcements WHERE org = ? AND vault = ? AND agent = ? AND last_seen >= ?
		GROUP BY instance ORDER BY instance`
	qAnnouncements = `SELECT agent, channel, vault, last_seen, dropped FROM bus_announcements WHERE org = ? AND instance = ? AND last_seen >= ?
		ORDER BY agent, channel`
	qAcks = `SELECT s.network, s.org, s.name, a.seq FROM bus_acks a JOIN bus_streams s ON s.id = a.stream
		WHERE a.org = ? AND a.instance = ?`
)

// sinceNanos is the stored form of a `since` bound: the zero time keeps every row.
func sinceNanos(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// AnnouncedInstances implements [store.BusStore.AnnouncedInstances] on the reader pool, from
// the (org, vault, agent, instance, last_seen) index.
func (s *Store) AnnouncedInstances(ctx context.Context, org, vault, agent string, since time.Time) ([]string, error) {
	if err := store.ValidateAnnouncedQuery(org, vault, agent); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rd.announcedInstances.QueryContext(ctx, org, vault, agent, sinceNanos(since))
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var inst string
		if err := rows.Scan(&inst); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, inst)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// Announcements implements [store.BusStore.Announcements] on the reader pool.
func (s *Store) Announcements(ctx context.Context, org, instance string, since time.Time) ([]store.Announcement, error) {
	if err := store.ValidateInstance(org, instance); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rd.announcements.QueryContext(ctx, org, instance, sinceNanos(since))
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.Announcement
	for rows.Next() {
		a := store.Announcement{Org: org, Instance: instance}
		var seen int64
		if err := rows.Scan(&a.Agent, &a.Channel, &a.Vault, &seen, &a.Dropped); err != nil {
			return nil, s.readErr(err)
		}
		a.LastSeen = time.Unix(0, seen).UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// Acks implements [store.BusStore.Acks] on the reader pool.
func (s *Store) Acks(ctx context.Context, org, instance string) (map[store.StreamKey]int64, error) {
	if err := store.ValidateInstance(org, instance); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rd.acks.QueryContext(ctx, org, instance)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	out := map[store.StreamKey]int64{}
	for rows.Next() {
		var k store.StreamKey
		var seq int64
		if err := rows.Scan(&k.Network, &k.Org, &k.Name, &seq); err != nil {
			return nil, s.readErr(err)
		}
		out[k] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
