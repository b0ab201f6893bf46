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
}

func (f *frameStmts) defs() []stmtDef {
	return []stmtDef{
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

// expirePubOp is one ExpirePublishes call.
type expirePubOp struct {
	opBase
	now     int64
	limit   int
	deleted int
}

func (o *expirePubOp) weight() int { return 1 }

func (o *expirePubOp) exec(ctx context.Context, w *writer, g *groupState) error {
	res, err := w.bus.frames.expirePublishes.ExecContext(ctx, o.now, o.limit)
	if err != nil {
		return fmt.Errorf("sqlite: expire publishes: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: expire publishes: %w", err)
	}
	o.deleted = int(n)
	if n > 0 {
		g.items += int(n)
		g.wrote = true
	}
	return nil
}

func (o *expirePubOp) notify(*Store) {}

// ExpirePublishes implements [store.BusFrameStore.ExpirePublishes].
func (s *Store) ExpirePublishes(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	o := &expirePubOp{opBase: newOpBase(ctx), now: nanos(now), limit: limit}
	if err := s.submit(ctx, o, o.done); err != nil {
		return 0, err
	}
	return o.deleted, nil
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
func (s *Store) readPublishes(ctx context.Context, tx *sql.Tx, k store.StreamKey, streamID int64, q store.ReadQuery, now int64) ([]store.StoredPublish, error) {
	if q.ThreadID != "" {
		return nil, nil // publishes belong to no thread
	}
	text, args := publishQuery(streamID, q, now)
	rows, err := tx.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.StoredPublish
	for rows.Next() {
		var r pubRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, s.readErr(err)
		}
		p := r.publish()
		p.Stream = k
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// mergeEntries merges the seq-ordered lists of a stream into its first limit entries. Each list
// holds its limit first entries, so the first limit of the merge are exact.
func mergeEntries(msgs []store.StoredMessage, tasks []store.TaskProposal, pubs []store.StoredPublish, limit int) []store.StreamEntry {
	out := make([]store.StreamEntry, 0, min(limit, len(msgs)+len(tasks)+len(pubs)))
	for len(out) < limit && (len(msgs) > 0 || len(tasks) > 0 || len(pubs) > 0) {
		const none = int64(1<<63 - 1)
		m, t, p := none, none, none
		if len(msgs) > 0 {
			m = msgs[0].Seq
		}
		if len(tasks) > 0 {
			t = tasks[0].Seq
		}
		if len(pubs) > 0 {
			p = pubs[0].Seq
		}
		switch {
		case m <= t && m <= p:
			out = append(out, store.StreamEntry{Seq: m, Message: &msgs[0]})
			msgs = msgs[1:]
		case t <= p:
			out = append(out, store.StreamEntry{Seq: t, Task: &tasks[0]})
			tasks = tasks[1:]
		default:
			out = append(out, store.StreamEntry{Seq: p, Publish: &pubs[0]})
			pubs = pubs[1:]
		}
	}
	return out
}
