package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentwire/agentwire/store"
)

// The bus frames other than messages (store.BusFrameStore): publishes take their stream's
// next seq from the same bus_streams.last_seq as messages and task events, inside the same
// group-commit transaction, so one channel has one gap-free counter.

// pubCols are the bus_publishes columns of a pubRow, in its order.
const pubCols = `p.id, p.seq, p.sender_org, p.sender_instance, p.client_msg_id, p.to_agent, p.private, p.server_time,
	p.expires_at, p.data`

// pubRow is one scanned bus_publishes row.
type pubRow struct {
	id                  int64
	p                   store.StoredPublish
	private             int
	serverTime, expires int64
}

func (r *pubRow) dest(extra ...any) []any {
	p := &r.p
	return append([]any{&r.id, &p.Seq, &p.SenderOrg, &p.SenderInstance, &p.ClientMsgID, &p.To, &r.private, &r.serverTime,
		&r.expires, &p.Data}, extra...)
}

func (r *pubRow) publish() store.StoredPublish {
	r.p.Private = r.private != 0
	r.p.ServerTime, r.p.ExpiresAt = fromNanos(r.serverTime), fromNanos(r.expires)
	return r.p
}

// frameStmts are the writer's statements of the bus frames; they are part of busStmts.
type frameStmts struct {
	pubByClient, delPublish, insPublish, expirePublishes *sql.Stmt
	hoByKey, delHandoff, insHandoff, settleHandoff       *sql.Stmt
	expireHandoffs                                       *sql.Stmt
}

func (f *frameStmts) defs() []stmtDef {
	return []stmtDef{
		{&f.hoByKey, `SELECT ` + hoCols + ` FROM bus_handoffs h WHERE h.org = ? AND h.handoff_id = ?`},
		{&f.delHandoff, `DELETE FROM bus_handoffs WHERE id = ?`},
		{&f.insHandoff, `INSERT INTO bus_handoffs (org, handoff_id, channel, from_instance, from_agent, to_instance, to_agent, state,
			deadline, created_at, settled_at, expires_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0, ?, ?)`},
		// The compare-and-set of a settlement: only from offered, only before the deadline.
		{&f.settleHandoff, `UPDATE bus_handoffs SET state = ?, settled_at = ? WHERE id = ? AND state = 0 AND deadline > ?`},
		{&f.expireHandoffs, `DELETE FROM bus_handoffs WHERE id IN (SELECT id FROM bus_handoffs
			WHERE expires_at <= ?1 AND expires_at > 0 ORDER BY expires_at, id LIMIT ?2)`},
		{&f.pubByClient, `SELECT ` + pubCols + `, ` + streamCols + ` FROM bus_publishes p JOIN bus_streams s ON s.id = p.stream
			WHERE p.sender_org = ? AND p.sender_instance = ? AND p.client_msg_id = ?`},
		{&f.delPublish, `DELETE FROM bus_publishes WHERE id = ?`},
		{&f.insPublish, `INSERT INTO bus_publishes (stream, seq, sender_org, sender_instance, client_msg_id, to_agent, private,
			server_time, expires_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&f.expirePublishes, `DELETE FROM bus_publishes WHERE id IN (SELECT id FROM bus_publishes
			WHERE expires_at <= ?1 AND expires_at > 0 ORDER BY expires_at, id LIMIT ?2)`},
	}
}

// publishOp is one AppendPublish call.
type publishOp struct {
	opBase
	p        store.PublishWrite
	out      store.StoredPublish
	replayed bool
}

func (o *publishOp) weight() int { return 1 }

func (o *publishOp) exec(ctx context.Context, w *writer, g *groupState) error {
	p := o.p
	f := &w.bus.frames
	var orig pubRow
	k := &orig.p.Stream
	err := f.pubByClient.QueryRowContext(ctx, p.SenderOrg, p.SenderInstance, p.ClientMsgID).Scan(orig.dest(&k.Network, &k.Org, &k.Name)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("sqlite: read publish client_msg_id: %w", err)
	case visible(orig.expires, g.wall):
		o.out, o.replayed = orig.publish(), true
		return nil
	default:
		if _, err := f.delPublish.ExecContext(ctx, orig.id); err != nil {
			return fmt.Errorf("sqlite: delete expired publish: %w", err)
		}
	}
	var streamID, seq int64
	if err := w.bus.nextSeq.QueryRowContext(ctx, p.Stream.Network, p.Stream.Org, p.Stream.Name).Scan(&streamID, &seq); err != nil {
		return fmt.Errorf("sqlite: next seq: %w", err)
	}
	private := 0
	if p.Private {
		private = 1
	}
	if _, err := f.insPublish.ExecContext(ctx, streamID, seq, p.SenderOrg, p.SenderInstance, p.ClientMsgID, p.To, private,
		nanos(p.ServerTime), nanos(p.ExpiresAt), p.Data); err != nil {
		return fmt.Errorf("sqlite: insert publish: %w", err)
	}
	p.ServerTime, p.ExpiresAt = fromNanos(nanos(p.ServerTime)), fromNanos(nanos(p.ExpiresAt))
	o.out = store.StoredPublish{PublishWrite: p, Seq: seq}
	g.items++
	g.wrote = true
	return nil
}

func (o *publishOp) notify(s *Store) {
	if !o.replayed {
		s.tail.skip(o.out.Stream)
		s.streams.Notify(streamTopic(o.out.Stream))
	}
}

// AppendPublish implements [store.BusFrameStore.AppendPublish] through the group-commit writer.
func (s *Store) AppendPublish(ctx context.Context, p store.PublishWrite) (store.StoredPublish, bool, error) {
	if err := store.ValidatePublish(p); err != nil {
		return store.StoredPublish{}, false, err
	}
	o := &publishOp{opBase: newOpBase(ctx), p: p}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.StoredPublish{}, false, err
	}
	return o.out, o.replayed, nil
}

// ExpirePublishes implements [store.BusFrameStore.ExpirePublishes].
func (s *Store) ExpirePublishes(ctx context.Context, now time.Time, limit int) (int, error) {
	return s.sweep(ctx, now, limit, "publishes", func(w *writer) *sql.Stmt { return w.bus.frames.expirePublishes })
}

// qStreamPublishes is the reader's publish range of one stream (ReadStream); publishQuery
// adds the viewer's filter.
const qStreamPublishes = `SELECT ` + pubCols + ` FROM bus_publishes p WHERE p.stream = ? AND p.seq > ? AND (p.expires_at = 0 OR p.expires_at > ?)`

// publishQuery builds the ReadStream publish statement for a known stream row: a viewer sees
// team publishes and the private ones addressed to an agent it announced.
func publishQuery(streamID int64, q store.ReadQuery, now int64) (string, []any) {
	var sb strings.Builder
	sb.WriteString(qStreamPublishes)
	args := []any{streamID, q.After, now}
	if v := q.Viewer; v != nil {
		sb.WriteString(` AND (p.private = 0`)
		if len(v.Agents) > 0 {
			sb.WriteString(` OR p.to_agent IN (?` + strings.Repeat(`, ?`, len(v.Agents)-1) + `)`)
			for _, a := range v.Agents {
				args = append(args, a)
			}
		}
		sb.WriteString(`)`)
	}
	sb.WriteString(` ORDER BY p.seq LIMIT ?`)
	return sb.String(), append(args, q.Limit)
}

// readPublishes runs the ReadStream publish query inside the read transaction.
func (s *Store) readPublishes(ctx context.Context, tx *sql.Tx, k store.StreamKey, streamID int64, q store.ReadQuery, now int64) (_ []store.StoredPublish, cut bool, _ error) {
	if q.ThreadID != "" {
		return nil, false, nil // publishes belong to no thread
	}
	text, args := publishQuery(streamID, q, now)
	rows, err := tx.QueryContext(ctx, text, args...)
	return scanPage(s, rows, err, nil, q.MaxBytes, func() (store.StoredPublish, int, error) {
		var r pubRow
		err := rows.Scan(r.dest()...)
		p := r.publish()
		p.Stream = k
		return p, len(p.Data), err
	})
}

// pageList is one kind of a stream's entries (messages, task events, publishes) in seq order,
// read page by page: fetch reads the entries after a seq, and reports whether the byte budget
// cut them (more may follow).
type pageList[T any] struct {
	fetch   func(after int64) ([]T, bool, error)
	seq     func(*T) int64
	items   []T
	last    T // the last entry taken
	cut     bool
	started bool
}

// head returns the list's next entry, reading on when it ran out at a cut; nil at its end.
func (l *pageList[T]) head(after int64) (*T, error) {
	if len(l.items) == 0 && (!l.started || l.cut) {
		if l.started {
			after = l.seq(&l.last)
		}
		items, cut, err := l.fetch(after)
		if err != nil {
			return nil, err
		}
		l.items, l.cut, l.started = items, cut, true
	}
	if len(l.items) == 0 {
		return nil, nil
	}
	return &l.items[0], nil
}

// pop takes the head.
func (l *pageList[T]) pop() { l.last, l.items = l.items[0], l.items[1:] }

// mergeEntries merges the kinds of a stream into its first q.Limit entries after q.After,
// stopping before the entry that would bring their Data past q.MaxBytes (the first one always
// goes). A kind's first fetch holds its first Limit entries, or fewer when the byte budget cut
// it; a cut kind is fetched again after its last entry when the merge reaches it, so the page
// is exact: it stops short of Limit only at the end of the stream or at the budget.
func mergeEntries(q store.ReadQuery, msgs *pageList[store.StoredMessage], tasks *pageList[store.TaskProposal], pubs *pageList[store.StoredPublish]) ([]store.StreamEntry, error) {
	var out []store.StreamEntry
	size := 0
	for len(out) < q.Limit {
		m, err := msgs.head(q.After)
		if err != nil {
			return nil, err
		}
		t, err := tasks.head(q.After)
		if err != nil {
			return nil, err
		}
		p, err := pubs.head(q.After)
		if err != nil {
			return nil, err
		}
		ms, ts, ps := none, none, none
		if m != nil {
			ms = m.Seq
		}
		if t != nil {
			ts = t.Seq
		}
		if p != nil {
			ps = p.Seq
		}
		var e store.StreamEntry
		switch {
		case m == nil && t == nil && p == nil:
			return out, nil
		case ms <= ts && ms <= ps:
			mc := *m
			e = store.StreamEntry{Seq: ms, Message: &mc}
		case ts <= ps:
			tc := *t
			e = store.StreamEntry{Seq: ts, Task: &tc}
		default:
			pc := *p
			e = store.StreamEntry{Seq: ps, Publish: &pc}
		}
		n := store.EntryBytes(e)
		if overBudget(q.MaxBytes, len(out), size, n) {
			break
		}
		switch {
		case e.Message != nil:
			msgs.pop()
		case e.Task != nil:
			tasks.pop()
		default:
			pubs.pop()
		}
		size += n
		out = append(out, e)
	}
	if out == nil {
		out = []store.StreamEntry{}
	}
	return out, nil
}

const none = int64(1<<63 - 1)

// hoCols are the bus_handoffs columns of a hoRow, in its order.
const hoCols = `h.id, h.org, h.handoff_id, h.channel, h.from_instance, h.from_agent, h.to_instance, h.to_agent, h.state,
	h.deadline, h.created_at, h.settled_at, h.expires_at, h.data`

// hoRow is one scanned bus_handoffs row.
type hoRow struct {
	id                                  int64
	h                                   store.Handoff
	state                               int
	deadline, created, settled, expires int64
}

func (r *hoRow) dest() []any {
	h := &r.h
	return []any{&r.id, &h.Org, &h.HandoffID, &h.Channel, &h.FromInstance, &h.From, &h.ToInstance, &h.To, &r.state,
		&r.deadline, &r.created, &r.settled, &r.expires, &h.Data}
}

// handoffStates are the stored states by number.
var handoffStates = [...]string{0: store.HandoffOffered, 1: store.HandoffAcked, 2: store.HandoffRejected}

func (r *hoRow) handoff() store.Handoff {
	if r.state >= 0 && r.state < len(handoffStates) {
		r.h.State = handoffStates[r.state]
	}
	r.h.Deadline, r.h.CreatedAt, r.h.SettledAt, r.h.ExpiresAt = fromNanos(r.deadline), fromNanos(r.created), fromNanos(r.settled), fromNanos(r.expires)
	return r.h
}

// handoffByKey reads (org, handoffID) inside the write transaction; ok is false when there is
// none or it expired (an expired row is deleted, so its handoff_id is free again).
func (w *writer) handoffByKey(ctx context.Context, org, handoffID string, now int64) (hoRow, bool, error) {
	var r hoRow
	err := w.bus.frames.hoByKey.QueryRowContext(ctx, org, handoffID).Scan(r.dest()...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("sqlite: read handoff: %w", err)
	case visible(r.expires, now):
		return r, true, nil
	}
	if _, err := w.bus.frames.delHandoff.ExecContext(ctx, r.id); err != nil {
		return r, false, fmt.Errorf("sqlite: delete expired handoff: %w", err)
	}
	return r, false, nil
}

// offerOp is one OfferHandoff call.
type offerOp struct {
	opBase
	h       store.HandoffWrite
	out     store.Handoff
	created bool
}

func (o *offerOp) weight() int { return 1 }

func (o *offerOp) exec(ctx context.Context, w *writer, g *groupState) error {
	h := o.h
	r, ok, err := w.handoffByKey(ctx, h.Org, h.HandoffID, g.wall)
	if err != nil {
		return err
	}
	if ok {
		o.out = r.handoff()
		return nil
	}
	if _, err := w.bus.frames.insHandoff.ExecContext(ctx, h.Org, h.HandoffID, h.Channel, h.FromInstance, h.From, h.ToInstance, h.To,
		nanos(h.Deadline), nanos(h.CreatedAt), nanos(h.ExpiresAt), h.Data); err != nil {
		return fmt.Errorf("sqlite: insert handoff: %w", err)
	}
	h.Deadline, h.CreatedAt, h.ExpiresAt = fromNanos(nanos(h.Deadline)), fromNanos(nanos(h.CreatedAt)), fromNanos(nanos(h.ExpiresAt))
	o.out = store.Handoff{HandoffWrite: h, State: store.HandoffOffered}
	o.created = true
	g.items++
	g.wrote = true
	return nil
}

func (o *offerOp) notify(*Store) {}

// OfferHandoff implements [store.BusFrameStore.OfferHandoff] through the group-commit writer.
func (s *Store) OfferHandoff(ctx context.Context, h store.HandoffWrite) (store.Handoff, bool, error) {
	if err := store.ValidateHandoff(h); err != nil {
		return store.Handoff{}, false, err
	}
	o := &offerOp{opBase: newOpBase(ctx), h: h}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.Handoff{}, false, err
	}
	return o.out, o.created, nil
}

// settleOp is one SettleHandoff call.
type settleOp struct {
	opBase
	org, id, state string
	at             time.Time
	out            store.Handoff
	applied        bool
}

func (o *settleOp) weight() int { return 1 }

func (o *settleOp) exec(ctx context.Context, w *writer, g *groupState) error {
	r, ok, err := w.handoffByKey(ctx, o.org, o.id, g.wall)
	if err != nil {
		return err
	}
	if !ok {
		return store.ErrNotFound
	}
	state := 1
	if o.state == store.HandoffRejected {
		state = 2
	}
	at := nanos(o.at)
	res, err := w.bus.frames.settleHandoff.ExecContext(ctx, state, at, r.id, at)
	if err != nil {
		return fmt.Errorf("sqlite: settle handoff: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: settle handoff: %w", err)
	}
	if n == 1 {
		r.state, r.settled = state, at
		o.applied = true
		g.items++
		g.wrote = true
	}
	o.out = r.handoff()
	return nil
}

func (o *settleOp) notify(*Store) {}

// SettleHandoff implements [store.BusFrameStore.SettleHandoff] through the group-commit writer,
// so two concurrent settlements are serialized and only the first applies.
func (s *Store) SettleHandoff(ctx context.Context, org, handoffID, state string, at time.Time) (store.Handoff, bool, error) {
	if err := store.ValidateSettle(org, handoffID, state, at); err != nil {
		return store.Handoff{}, false, err
	}
	o := &settleOp{opBase: newOpBase(ctx), org: org, id: handoffID, state: state, at: at}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.Handoff{}, false, err
	}
	return o.out, o.applied, nil
}

// ExpireHandoffs implements [store.BusFrameStore.ExpireHandoffs].
func (s *Store) ExpireHandoffs(ctx context.Context, now time.Time, limit int) (int, error) {
	return s.sweep(ctx, now, limit, "handoffs", func(w *writer) *sql.Stmt { return w.bus.frames.expireHandoffs })
}

// The reader pool's handoff statements (also checked by TestQueryPlans).
const (
	qHandoffByKey    = `SELECT ` + hoCols + ` FROM bus_handoffs h WHERE h.org = ? AND h.handoff_id = ? AND (h.expires_at = 0 OR h.expires_at > ?)`
	qPendingHandoffs = `SELECT ` + hoCols + ` FROM bus_handoffs h WHERE h.org = ? AND h.to_instance = ? AND h.to_agent = ?
		AND h.state = 0 AND h.deadline > ? AND (h.expires_at = 0 OR h.expires_at > ?) ORDER BY h.id LIMIT ?`
)

// GetHandoff implements [store.BusFrameStore.GetHandoff] on the reader pool.
func (s *Store) GetHandoff(ctx context.Context, org, handoffID string) (store.Handoff, error) {
	if err := store.ValidateHandoffKey(org, handoffID); err != nil {
		return store.Handoff{}, err
	}
	if s.isClosed() {
		return store.Handoff{}, store.ErrClosed
	}
	var r hoRow
	err := s.rdb.QueryRowContext(ctx, qHandoffByKey, org, handoffID, s.now().UnixNano()).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Handoff{}, store.ErrNotFound
	}
	if err != nil {
		return store.Handoff{}, s.readErr(err)
	}
	return r.handoff(), nil
}

// PendingHandoffs implements [store.BusFrameStore.PendingHandoffs] on the reader pool.
func (s *Store) PendingHandoffs(ctx context.Context, org, toInstance, to string, now time.Time, limit int) ([]store.Handoff, error) {
	if err := store.ValidatePending(org, toInstance, to, now, limit); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, qPendingHandoffs, org, toInstance, to, nanos(now), s.now().UnixNano(), limit)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.Handoff
	for rows.Next() {
		var r hoRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, r.handoff())
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
