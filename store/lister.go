package store

import "context"

// Lister enumerates what a store holds, where the lane interfaces need a key to start from:
// what moving an installation to another store needs (`agentwire store copy`). Both backends
// implement it.
type Lister interface {
	// RunOrgs returns every org that has a run, each once, in ascending order.
	RunOrgs(ctx context.Context) ([]string, error)

	// BusStreams returns every bus stream that has given a seq, each once, ordered by
	// network, then org, then name.
	BusStreams(ctx context.Context) ([]StreamKey, error)

	// AllEnvelopes returns up to limit stored envelopes of every org with a sequence greater
	// than after, in store order, each with its org (limit positive, after non-negative).
	AllEnvelopes(ctx context.Context, after int64, limit int) ([]OrgEnvelope, error)
}

// OrgEnvelope is a stored envelope and the org it belongs to.
type OrgEnvelope struct {
	Org string
	StoredEnvelope
}
