package jetstream

import (
	"context"
	"fmt"
	"slices"
	"strings"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/store"
)

var _ store.Lister = (*Store)(nil)

// RunOrgs reads the last head of every run (a last-per-subject consumer) and keeps the
// distinct orgs.
func (s *Store) RunOrgs(ctx context.Context) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	seen := map[string]bool{}
	err := s.lastPerSubject(ctx, s.runs, runHeadPrefix+">", func(m njs.Msg, _ uint64) error {
		org, _, err := splitKey(m.Subject(), runHeadPrefix)
		if err != nil {
			return err
		}
		seen[org] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for org := range seen {
		out = append(out, org)
	}
	slices.Sort(out)
	return out, nil
}

// BusStreams reads the counter subject of every stream (one per stream, rolled up).
func (s *Store) BusStreams(ctx context.Context) ([]store.StreamKey, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []store.StreamKey
	err := s.lastPerSubject(ctx, s.bus, busCtrPrefix+">", func(m njs.Msg, _ uint64) error {
		k, err := parseTail(strings.TrimPrefix(m.Subject(), busCtrPrefix))
		if err != nil {
			return err
		}
		out = append(out, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b store.StreamKey) int {
		return strings.Compare(a.Network+"\x00"+a.Org+"\x00"+a.Name, b.Network+"\x00"+b.Org+"\x00"+b.Name)
	})
	return out, nil
}

// AllEnvelopes walks the stream from after, keeping the envelopes that belong to an org.
func (s *Store) AllEnvelopes(ctx context.Context, after int64, limit int) ([]store.OrgEnvelope, error) {
	if after < 0 || limit <= 0 {
		return nil, fmt.Errorf("%w: after %d, limit %d", store.ErrInvalid, after, limit)
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []store.OrgEnvelope
	for seq := uint64(after) + 1; len(out) < limit; {
		m, err := s.getMsg(ctx, s.env, seq, ">")
		if err != nil {
			return nil, fmt.Errorf("jetstream: read envelopes: %w", err)
		}
		if m == nil {
			break
		}
		seq = m.Sequence + 1
		if e, org, ok := s.decodeEnvelope(m); ok {
			out = append(out, store.OrgEnvelope{Org: org, StoredEnvelope: e})
		}
	}
	return out, nil
}
