package relay

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"sort"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// GET /v1/bus/poll (hive.md §4.1, project-defined): the frames a socket of the instance would
// have received, for clients that cannot hold a WebSocket open.
//
// What is polled. The streams a socket of the instance follows: the org channels its agents
// announced (stored announcements last seen within 24 hours that no later hello dropped, H2,
// and the pairs of its open sockets; a closed socket drops nothing, so a client that polls
// after its socket closed keeps its channels) and the swarms its token is a member of. For each, the `message.deliver` and `task.event`
// frames visible to the instance (S20: broadcasts, direct messages it sent or that are bound to
// it, task events), in seq order. Streams are taken in a fixed order (org channels by channel,
// then swarms by swarm_id), each up to what remains of the 500 frames, so a stream with a long
// backlog is drained before the next one and the next poll continues where this one stopped.
// Like catch-up, poll includes the instance's own messages (only the sending socket skips
// them, S10).
//
// Positions. Without `cursor`, each stream starts at the instance's acknowledged position
// (`ack`, stored; 0 for a stream never acknowledged, and for swarms, which `ack` cannot name).
// With it, each stream starts at the position the cursor holds, and a stream the cursor does
// not name (newly followed) at its acknowledged position. The answer's `cursor` holds the
// position after this answer of every polled stream. Polling never moves the acknowledged
// positions: that takes an `ack`.
//
// Cursor format (opaque to clients): unpadded base64url of a version byte (1), the number of
// entries as a uvarint, then per entry, in strictly ascending (kind, name) order: a kind byte
// (1 org channel, 2 swarm), the name's length as a uvarint, the name, and the position as a
// uvarint. Names are checked as channels (hive.md §1.6) or swarm ids, positions fit an int64,
// nothing may follow the last entry, and the text must be exactly what the relay would encode
// for those entries (canonical varints and base64). Anything else is refused with 400
// invalid_request, field `cursor`. The cursor names channels, never the org: it is read against
// the caller's org, so another org's cursor reaches nothing of that org.

// Poll refusal messages (project-defined).
const (
	MsgPollCursorInvalid = "cursor is not a cursor this relay issued"
	MsgPollCursorTooLong = "cursor exceeds the 262144 byte limit"
)

const (
	pollCursorVersion  = 1
	pollKindOrg        = 1
	pollKindSwarm      = 2
	maxPollCursorBytes = 256 << 10
)

// errPollCursor is every way a cursor can be malformed.
var errPollCursor = errors.New(MsgPollCursorInvalid)

// pollKey orders the streams of a poll and of its cursor: org channels, then swarms, by name.
func pollKey(k store.StreamKey) (byte, string) {
	if k.Network == store.NetworkSwarm {
		return pollKindSwarm, k.Name
	}
	return pollKindOrg, k.Name
}

func pollLess(a, b store.StreamKey) bool {
	ka, na := pollKey(a)
	kb, nb := pollKey(b)
	if ka != kb {
		return ka < kb
	}
	return na < nb
}

// encodePollCursor encodes the positions (the org of org streams is not encoded).
func encodePollCursor(pos map[store.StreamKey]int64) string {
	keys := make([]store.StreamKey, 0, len(pos))
	for k := range pos {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return pollLess(keys[i], keys[j]) })
	b := []byte{pollCursorVersion}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		kind, name := pollKey(k)
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(pos[k]))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePollCursor decodes a cursor of encodePollCursor for the caller's org; every other text
// is errPollCursor.
func decodePollCursor(org, text string) (map[store.StreamKey]int64, error) {
	if len(text) > maxPollCursorBytes {
		return nil, errPollCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(raw) == 0 || raw[0] != pollCursorVersion {
		return nil, errPollCursor
	}
	rest := raw[1:]
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	count, ok := uvarint()
	if !ok || count > uint64(len(rest)) { // an entry takes at least 3 bytes
		return nil, errPollCursor
	}
	pos := make(map[store.StreamKey]int64, count)
	var prev store.StreamKey
	for i := uint64(0); i < count; i++ {
		if len(rest) == 0 {
			return nil, errPollCursor
		}
		kind := rest[0]
		rest = rest[1:]
		n, ok := uvarint()
		if !ok || n > uint64(len(rest)) {
			return nil, errPollCursor
		}
		name := string(rest[:n])
		rest = rest[n:]
		seq, ok := uvarint()
		if !ok || seq > math.MaxInt64 {
			return nil, errPollCursor
		}
		var k store.StreamKey
		switch kind {
		case pollKindOrg:
			if hive.ValidateChannel(name) != nil {
				return nil, errPollCursor
			}
			k = store.OrgStream(org, name)
		case pollKindSwarm:
			if hive.ValidateID(name, "swarm_id") != nil {
				return nil, errPollCursor
			}
			k = store.SwarmStream(name)
		default:
			return nil, errPollCursor
		}
		if i > 0 && !pollLess(prev, k) {
			return nil, errPollCursor // unsorted or repeated
		}
		pos[k], prev = int64(seq), k
	}
	if len(rest) != 0 || encodePollCursor(pos) != text {
		return nil, errPollCursor // trailing bytes, or not the canonical encoding
	}
	return pos, nil
}

// handleBusPoll serves GET /v1/bus/poll: BusPollV1 with at most 500 frames.
func (s *Server) handleBusPoll(w http.ResponseWriter, r *http.Request, p *Principal) {
	ctx := r.Context()
	bad := func(field, msg string) {
		writeBusError(w, newBusError(hive.HiveErrorCodeInvalidRequest, field, "", msg))
	}
	vals := r.URL.Query()
	names := make([]string, 0, len(vals))
	for name := range vals {
		names = append(names, name)
	}
	sort.Strings(names) // the first fault reported is stable
	var cursor map[store.StreamKey]int64
	for _, name := range names {
		v := vals[name]
		if name != "cursor" {
			bad(clip(name), "unknown query parameter "+clip(name))
			return
		}
		if len(v) != 1 {
			bad("cursor", "cursor must be given once")
			return
		}
		if len(v[0]) > maxPollCursorBytes {
			bad("cursor", MsgPollCursorTooLong)
			return
		}
		var err error
		if cursor, err = decodePollCursor(p.Org, v[0]); err != nil {
			bad("cursor", err.Error())
			return
		}
	}

	now := s.now()
	channels, err := s.followedChannels(ctx, p.Org, p.InstanceID, now)
	if err != nil {
		writeBusError(w, s.busStoreErr(ctx, "read announcements", err))
		return
	}
	streams := make([]store.StreamKey, 0, len(channels)+len(p.Swarms))
	for _, ch := range channels {
		streams = append(streams, store.OrgStream(p.Org, ch))
	}
	for _, sw := range p.Swarms {
		streams = append(streams, store.SwarmStream(sw.SwarmID))
	}
	sort.Slice(streams, func(i, j int) bool { return pollLess(streams[i], streams[j]) })
	streams = compactStreams(streams)

	acks, err := s.store.Acks(ctx, p.Org, p.InstanceID)
	if err != nil {
		writeBusError(w, s.busStoreErr(ctx, "read acks", err))
		return
	}
	pos := make(map[store.StreamKey]int64, len(streams))
	for _, k := range streams {
		if c, ok := cursor[k]; ok {
			pos[k] = c
		} else {
			pos[k] = acks[k]
		}
	}

	out := hive.BusPollV1{Schema: hive.BusPollSchema, Frames: []hive.BusFrameV1{}}
	// size is the data of the frames taken: each stream is read within what is left of
	// Limits.MaxReadBytes (a stream the budget stopped goes on from its cursor at the next
	// poll), so an answer holds MaxReadBytes and one entry at most.
	size := 0
	for _, k := range streams {
		budget := hive.MaxBusReplay - len(out.Frames)
		if budget == 0 || size >= s.limits.MaxReadBytes {
			break
		}
		viewer := &store.Viewer{Org: p.Org, Instance: p.InstanceID}
		if k.Network == store.NetworkOrg {
			// A private publish is visible to the instances that announced its `to` (S20).
			v, err := s.catchUpViewer(ctx, p, k.Name)
			if err != nil {
				writeBusError(w, s.busStoreErr(ctx, "announcements", err))
				return
			}
			viewer = v
		}
		entries, err := s.store.ReadStream(ctx, k, store.ReadQuery{After: pos[k], Limit: budget, Viewer: viewer, MaxBytes: s.limits.MaxReadBytes - size})
		if err != nil {
			writeBusError(w, s.busStoreErr(ctx, "read stream", err))
			return
		}
		for _, e := range entries {
			size += store.EntryBytes(e)
			f, err := s.entryFrame(e, p)
			if err != nil {
				writeBusError(w, s.busStoreErr(ctx, "render", err))
				return
			}
			out.Frames = append(out.Frames, f)
			pos[k] = e.Seq
		}
	}
	out.Cursor = encodePollCursor(pos)
	writeBusJSON(w, out)
}

// compactStreams drops repeats from a sorted list (a swarm listed twice in the auth file).
func compactStreams(ks []store.StreamKey) []store.StreamKey {
	out := ks[:0]
	for i, k := range ks {
		if i == 0 || k != ks[i-1] {
			out = append(out, k)
		}
	}
	return out
}
