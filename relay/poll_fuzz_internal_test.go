package relay

import (
	"encoding/base64"
	"testing"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/store"
)

// FuzzPollCursor: decodePollCursor never panics, accepts a text only if it is exactly the
// encoding of what it decoded (so every accepted cursor is canonical and round-trips), yields
// only valid channels and swarm ids with non-negative positions, and keys org channels by the
// caller's org; every refusal is the one cursor error.
func FuzzPollCursor(f *testing.F) {
	b64 := base64.RawURLEncoding.EncodeToString
	f.Add(encodePollCursor(map[store.StreamKey]int64{}))
	f.Add(encodePollCursor(map[store.StreamKey]int64{
		store.OrgStream("o", "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"): 41,
		store.OrgStream("o", "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/ops"):     0,
		store.SwarmStream("sw-1"): 1 << 40,
	}))
	f.Add(b64([]byte{1, 1, 2, 1, 'a', 0x80, 0}))         // non-canonical varint
	f.Add(b64([]byte{1, 2, 2, 1, 'b', 0, 2, 1, 'a', 0})) // unsorted
	f.Add(b64([]byte{1, 1, 9, 1, 'a', 0}))               // unknown kind
	f.Add("AQA=")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, text string) {
		pos, err := decodePollCursor("o", text)
		if err != nil {
			if err != errPollCursor {
				t.Fatalf("refusal %v is not errPollCursor", err)
			}
			return
		}
		if got := encodePollCursor(pos); got != text {
			t.Fatalf("accepted %q but it encodes as %q", text, got)
		}
		for k, seq := range pos {
			if seq < 0 {
				t.Fatalf("negative position %d", seq)
			}
			switch k.Network {
			case store.NetworkOrg:
				if k.Org != "o" || hive.ValidateChannel(k.Name) != nil {
					t.Fatalf("org key %+v", k)
				}
			case store.NetworkSwarm:
				if k.Org != "" || hive.ValidateID(k.Name, "swarm_id") != nil {
					t.Fatalf("swarm key %+v", k)
				}
			default:
				t.Fatalf("key %+v", k)
			}
		}
	})
}
