package relay

// Estimates of the state cache's accounting (state.go), for tests that size a budget.
var (
	ReducedCost = reducedCost
	DecodedCost = decodedCost
)

// CachedStates returns the state cache's idle runs, accounted bytes and evictions.
func (s *Server) CachedStates() (runs int, bytes int64, evictions uint64) { return s.runs.cached() }

// StateCached reports whether the run's reducer state is in the cache, idle.
func (s *Server) StateCached(org, run string) bool {
	s.runs.mu.Lock()
	defer s.runs.mu.Unlock()
	e := s.runs.entries[runKey{org, run}]
	return e != nil && e.elem != nil
}
