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

// The notification lane (store.NotificationStore). The store sequence is envelopes.seq (the
// rowid), taken from envelope_state.last_seq inside the write transaction, so a refused or
// rolled-back call gives it back and expiry never frees one. envelope_state.clock is the last
// stored_at: a stored_at never goes back, so sequence order and time order agree.

// envStmts are the writer's statements of the notification lane.
type envStmts struct {
	state, dup, insert, updState, expire *sql.Stmt
	putSession, expireSession            *sql.Stmt
}

func (e *envStmts) defs() []stmtDef {
	return []stmtDef{
		{&e.state, `SELECT last_seq, clock FROM envelope_state WHERE id = 1`},
		// message_id <> '' lets SQLite use the partial index (it cannot prove it from the
		// bound parameter alone).
		{&e.dup, `SELECT seq, subject, stored_at, data FROM envelopes WHERE org = ? AND message_id = ? AND message_id <> ''
			ORDER BY seq DESC LIMIT 1`},
		{&e.insert, `INSERT INTO envelopes (seq, org, subject, message_id, stored_at, data) VALUES (?, ?, ?, ?, ?, ?)`},
		{&e.updState, `UPDATE envelope_state SET last_seq = ?, clock = ? WHERE id = 1`},
		{&e.expire, `DELETE FROM envelopes WHERE seq IN (SELECT seq FROM envelopes WHERE stored_at < ? ORDER BY stored_at, seq LIMIT ?)`},
		// The first delivery of a key counts; one older than the window (?6) is replaced.
		{&e.putSession, `INSERT INTO notify_session_keys (org, session, dedupe_key, seq, delivered_at) VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT (org, session, dedupe_key) DO UPDATE SET seq = excluded.seq, delivered_at = excluded.delivered_at
			WHERE delivered_at <= ?6`},
		{&e.expireSession, `DELETE FROM notify_session_keys WHERE id IN (SELECT id FROM notify_session_keys
			WHERE delivered_at < ? ORDER BY delivered_at, id LIMIT ?)`},
	}
}

// envOp is one AppendEnvelope call.
type envOp struct {
	opBase
	org       string
	e         store.EnvelopeWrite
	window    time.Duration
	out       store.StoredEnvelope
	duplicate bool
}

func (o *envOp) weight() int { return 1 }

func (o *envOp) exec(ctx context.Context, w *writer, g *groupState) error {
	var last, clock int64
	if err := w.env.state.QueryRowContext(ctx).Scan(&last, &clock); err != nil {
		return fmt.Errorf("sqlite: read envelope state: %w", err)
	}
	at := max(nanos(o.e.StoredAt), clock)
	if o.e.MessageID != "" {
		var orig store.StoredEnvelope
		var storedAt int64
		err := w.env.dup.QueryRowContext(ctx, o.org, o.e.MessageID).Scan(&orig.Seq, &orig.Subject, &storedAt, &orig.Data)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("sqlite: read envelope message id: %w", err)
		case at-storedAt < int64(o.window): // at ≥ clock ≥ storedAt: no overflow
			orig.MessageID, orig.StoredAt = o.e.MessageID, fromNanos(storedAt)
			o.out, o.duplicate = orig, true
			return nil
		}
	}
	seq := last + 1
	if _, err := w.env.insert.ExecContext(ctx, seq, o.org, o.e.Subject, o.e.MessageID, at, o.e.Data); err != nil {
		return fmt.Errorf("sqlite: insert envelope: %w", err)
	}
	if _, err := w.env.updState.ExecContext(ctx, seq, at); err != nil {
		return fmt.Errorf("sqlite: update envelope state: %w", err)
	}
	o.out = store.StoredEnvelope{EnvelopeWrite: o.e, Seq: seq}
	o.out.StoredAt = fromNanos(at)
	g.items++
	g.wrote = true
	return nil
}

func (o *envOp) notify(s *Store) {
	if !o.duplicate {
		s.envs.Notify(o.org, "")
	}
}

// AppendEnvelope implements [store.NotificationStore.AppendEnvelope] through the group-commit
// writer, so an envelope shares its transaction and fsync with concurrent writes of every lane.
func (s *Store) AppendEnvelope(ctx context.Context, org string, e store.EnvelopeWrite, window time.Duration) (store.StoredEnvelope, bool, error) {
	if err := store.ValidateEnvelope(org, e, window); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	o := &envOp{opBase: newOpBase(ctx), org: org, e: e, window: window}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.StoredEnvelope{}, false, err
	}
	return o.out, o.duplicate, nil
}

// ExpireEnvelopes implements [store.NotificationStore.ExpireEnvelopes] through the group-commit
// writer.
func (s *Store) ExpireEnvelopes(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	return s.sweep(ctx, cutoff, limit, "envelopes", func(w *writer) *sql.Stmt { return w.env.expire })
}

// The reader pool's notification statements (also checked by TestQueryPlans).
const (
	qReadEnvelopes = `SELECT seq, subject, message_id, stored_at, data FROM envelopes
		WHERE org = ? AND seq > ? AND stored_at >= ? ORDER BY seq LIMIT ?`
	qLastEnvelope = `SELECT coalesce(max(seq), 0) FROM envelopes WHERE org = ?`
)

// ReadEnvelopes implements [store.NotificationStore.ReadEnvelopes] on the reader pool with one
// range query over the (org, seq) index; it reads one row beyond the limit to tell More.
func (s *Store) ReadEnvelopes(ctx context.Context, org string, q store.EnvelopeQuery) (store.EnvelopePage, error) {
	if err := store.ValidateEnvelopeQuery(org, q); err != nil {
		return store.EnvelopePage{}, err
	}
	if s.isClosed() {
		return store.EnvelopePage{}, store.ErrClosed
	}
	since := int64(math.MinInt64)
	if !q.Since.IsZero() {
		since = q.Since.UnixNano()
	}
	rows, err := s.rd.readEnvelopes.QueryContext(ctx, org, q.After, since, int64(q.Limit)+1)
	if err != nil {
		return store.EnvelopePage{}, s.readErr(err)
	}
	defer rows.Close()
	page := store.EnvelopePage{Next: q.After}
	examined, size := 0, 0
	for rows.Next() {
		if examined == q.Limit {
			page.More = true
			break
		}
		var e store.StoredEnvelope
		var storedAt int64
		if err := rows.Scan(&e.Seq, &e.Subject, &e.MessageID, &storedAt, &e.Data); err != nil {
			return store.EnvelopePage{}, s.readErr(err)
		}
		matches := q.Match == nil || q.Match(e.Subject)
		if matches && q.MaxBytes > 0 && len(page.Envelopes) > 0 && size+len(e.Data) > q.MaxBytes {
			page.More = true // rows are scanned one at a time: at most one past the budget
			break
		}
		examined++
		page.Next = e.Seq
		if !matches {
			continue
		}
		size += len(e.Data)
		e.StoredAt = fromNanos(storedAt)
		page.Envelopes = append(page.Envelopes, e)
	}
	if err := rows.Err(); err != nil {
		return store.EnvelopePage{}, s.readErr(err)
	}
	return page, nil
}

// LastEnvelopeSeq implements [store.NotificationStore.LastEnvelopeSeq].
func (s *Store) LastEnvelopeSeq(ctx context.Context, org string) (int64, error) {
	if org == "" {
		return 0, fmt.Errorf("%w: empty org", store.ErrInvalid)
	}
	if s.isClosed() {
		return 0, store.ErrClosed
	}
	var last int64
	if err := s.rd.lastEnvelope.QueryRowContext(ctx, org).Scan(&last); err != nil {
		return 0, s.readErr(err)
	}
	return last, nil
}

// SubscribeEnvelopes implements [store.NotificationStore.SubscribeEnvelopes] in process: the
// writer notifies after COMMIT and before answering the caller.
func (s *Store) SubscribeEnvelopes(org string) (<-chan struct{}, func()) {
	return s.envs.Subscribe(org, "")
}

// EnvelopeSubscribers returns the number of live envelope subscriptions (relay metric
// `subscribers`).
func (s *Store) EnvelopeSubscribers() int { return s.envs.Subscribers() }
