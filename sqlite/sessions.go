package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentwire/agentwire/store"
)

// Session dedupe of the notification lane (store.NotificationStore.RecordSessionDeliveries):
// notify_session_keys holds one row per (org, session, dedupe_key) with the store sequence and
// time of its first delivery; a row older than the caller's window is replaced by the next
// delivery, and the sweeper deletes rows past the retention.

// sessionOp is one RecordSessionDeliveries call.
type sessionOp struct {
	opBase
	org, session string
	ds           []store.SessionDelivery
	at, cutoff   int64
}

func (o *sessionOp) weight() int { return len(o.ds) }

func (o *sessionOp) exec(ctx context.Context, w *writer, g *groupState) error {
	for _, d := range o.ds {
		if _, err := w.env.putSession.ExecContext(ctx, o.org, o.session, d.DedupeKey, d.Seq, o.at, o.cutoff); err != nil {
			return fmt.Errorf("sqlite: write session delivery: %w", err)
		}
	}
	g.items += len(o.ds)
	g.wrote = true
	return nil
}

func (o *sessionOp) notify(*Store) {}

// RecordSessionDeliveries implements [store.NotificationStore.RecordSessionDeliveries] through
// the group-commit writer: one call is one transaction.
func (s *Store) RecordSessionDeliveries(ctx context.Context, org, session string, ds []store.SessionDelivery, at time.Time, window time.Duration) error {
	if err := store.ValidateSessionDeliveries(org, session, ds, at, window); err != nil {
		return err
	}
	if len(ds) == 0 {
		if s.isClosed() {
			return store.ErrClosed
		}
		return nil
	}
	o := &sessionOp{opBase: newOpBase(ctx), org: org, session: session, ds: ds, at: nanos(at), cutoff: nanos(at) - int64(window)}
	return s.submit(ctx, o, o.done)
}

// ExpireSessionDeliveries implements [store.NotificationStore.ExpireSessionDeliveries] through
// the group-commit writer.
func (s *Store) ExpireSessionDeliveries(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	return s.sweep(ctx, cutoff, limit, "session deliveries", func(w *writer) *sql.Stmt { return w.env.expireSession })
}

// qSessionKeys looks the keys up through the (org, session, dedupe_key) unique index; the keys
// travel as one JSON array, so one statement serves any number of them.
const qSessionKeys = `SELECT dedupe_key, seq, delivered_at FROM notify_session_keys
	WHERE org = ? AND session = ? AND dedupe_key IN (SELECT value FROM json_each(?)) AND delivered_at >= ?`

// SessionDeliveries implements [store.NotificationStore.SessionDeliveries] on the reader pool.
func (s *Store) SessionDeliveries(ctx context.Context, org, session string, keys []string, since time.Time) (map[string]store.SessionDelivery, error) {
	if err := store.ValidateSession(org, session, keys); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	out := map[string]store.SessionDelivery{}
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys) // valid UTF-8 (checked): json_each gives the keys back unchanged
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode keys: %w", err)
	}
	rows, err := s.rd.sessionKeys.QueryContext(ctx, org, session, string(list), sinceNanos(since))
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d store.SessionDelivery
		var at int64
		if err := rows.Scan(&d.DedupeKey, &d.Seq, &at); err != nil {
			return nil, s.readErr(err)
		}
		d.DeliveredAt = time.Unix(0, at).UTC()
		out[d.DedupeKey] = d
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
