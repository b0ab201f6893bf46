package relay

import (
	"errors"
	"sync"
	"time"
)

// Token lifetime (relay.md §1): the auth file can change while the relay runs (SetAuth, on
// SIGHUP or when the file changes), and a token's `expires_at` can pass. A request is checked
// when it arrives; a stream or socket lives on, so each one holds a grant — the token's hash
// and the right its route needs — and the grant checker re-checks every grant when the auth
// file is replaced and every Config.AuthRecheck (for expiry). A grant whose token was removed,
// has expired or no longer holds the right is revoked: the stream ends with a final comment
// naming the reason and its last delivered cursor, the socket closes with 1008 and the reason.
// Other clients are untouched. Local mode has no tokens and no grants.

// DefaultAuthRecheck is Config.AuthRecheck's default.
const DefaultAuthRecheck = time.Second

// grant is what one open stream or socket was authorized with.
type grant struct {
	p     *Principal
	right Right
	// end is closed when the grant is revoked; reason (set before) says why.
	end    chan struct{}
	reason string
}

// grants is the set of open grants (nil in local mode).
type grants struct {
	mu  sync.Mutex
	set map[*grant]struct{}
}

// holdGrant registers an open stream of p that needs right; nil in local mode (nothing to
// revoke). The caller calls dropGrant when the stream ends and watches ended.
func (s *Server) holdGrant(p *Principal, right Right) *grant {
	if s.local {
		return nil
	}
	g := &grant{p: p, right: right, end: make(chan struct{})}
	s.grants.mu.Lock()
	s.grants.set[g] = struct{}{}
	s.grants.mu.Unlock()
	return g
}

func (s *Server) dropGrant(g *grant) {
	if g == nil {
		return
	}
	s.grants.mu.Lock()
	delete(s.grants.set, g)
	s.grants.mu.Unlock()
}

// ended is the channel closed when g is revoked (nil, never closed, for a nil grant).
func (g *grant) ended() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.end
}

// SetAuth replaces the auth file the relay checks tokens against (a reload: `agentwire serve`
// calls it on SIGHUP and when the file changes). Requests from then on use a; the streams and
// sockets opened with a token that a no longer grants — removed, expired, or without the
// right — end within Config.AuthRecheck. A relay started in local mode stays in it: SetAuth
// then fails, as it does for a nil a.
func (s *Server) SetAuth(a *Auth) error {
	if s.local {
		return errors.New("relay: SetAuth on a relay in local mode (started without Config.Auth)")
	}
	if a == nil {
		return errors.New("relay: SetAuth needs an auth file")
	}
	s.auth.Store(a)
	select {
	case s.recheck <- struct{}{}:
	default:
	}
	return nil
}

// startGrantChecker runs the grant checker until Shutdown (auth mode only).
func (s *Server) startGrantChecker() {
	if s.local {
		return
	}
	go func() {
		t := time.NewTicker(s.cfg.AuthRecheck)
		defer t.Stop()
		for {
			select {
			case <-s.shutdown:
				return
			case <-t.C:
			case <-s.recheck:
			}
			s.recheckGrants()
		}
	}()
}

// recheckGrants revokes every grant the current auth file no longer honours.
func (s *Server) recheckGrants() {
	a, now := s.auth.Load(), s.now()
	s.grants.mu.Lock()
	defer s.grants.mu.Unlock()
	for g := range s.grants.set {
		reason := ""
		switch cur := a.lookup(g.p.token); {
		case cur == nil:
			reason = "the token was removed from the auth file"
		case cur.expired(now):
			reason = "the token expired at " + cur.ExpiresAt.UTC().Format(time.RFC3339)
		case !cur.Has(g.right):
			reason = "the token no longer grants the right " + string(g.right)
		case cur.Org != g.p.Org || cur.InstanceID != g.p.InstanceID:
			reason = "the token now names another org or instance"
		}
		if reason != "" {
			g.reason = reason
			close(g.end)
			delete(s.grants.set, g)
			s.metrics.revoked.Inc()
		}
	}
}
