package sqlite

import (
	"context"
	"fmt"

	"github.com/agentwire/agentwire/store"
)

var _ store.Lister = (*Store)(nil)

// RunOrgs implements [store.Lister.RunOrgs].
func (s *Store) RunOrgs(ctx context.Context) ([]string, error) {
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT DISTINCT org FROM runs ORDER BY org`)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var org string
		if err := rows.Scan(&org); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, org)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// BusStreams implements [store.Lister.BusStreams].
func (s *Store) BusStreams(ctx context.Context) ([]store.StreamKey, error) {
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT network, org, name FROM bus_streams WHERE last_seq > 0 ORDER BY network, org, name`)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.StreamKey
	for rows.Next() {
		var k store.StreamKey
		if err := rows.Scan(&k.Network, &k.Org, &k.Name); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// AllEnvelopes implements [store.Lister.AllEnvelopes].
func (s *Store) AllEnvelopes(ctx context.Context, after int64, limit int) ([]store.OrgEnvelope, error) {
	if after < 0 || limit <= 0 {
		return nil, fmt.Errorf("%w: after %d, limit %d", store.ErrInvalid, after, limit)
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT seq, org, subject, message_id, stored_at, data FROM envelopes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.OrgEnvelope
	for rows.Next() {
		var e store.OrgEnvelope
		var at int64
		if err := rows.Scan(&e.Seq, &e.Org, &e.Subject, &e.MessageID, &at, &e.Data); err != nil {
			return nil, s.readErr(err)
		}
		e.StoredAt = fromNanos(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
