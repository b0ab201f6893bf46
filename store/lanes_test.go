package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/store"
)

func TestDuplicateGIDWraps(t *testing.T) {
	err := fmt.Errorf("%w %q", store.ErrDuplicateGID, "g-1")
	if !errors.Is(err, store.ErrDuplicateGID) || !errors.Is(err, store.ErrDuplicate) || errors.Is(err, store.ErrDuplicateEventID) {
		t.Fatalf("ErrDuplicateGID wrapping: %v", err)
	}
	if store.ErrDuplicateGID.Error() != "store: duplicate gid" {
		t.Fatalf("ErrDuplicateGID = %q", store.ErrDuplicateGID.Error())
	}
}

func TestMessageScopeIncludes(t *testing.T) {
	for _, c := range []struct {
		name  string
		scope store.MessageScope
		k     store.StreamKey
		want  bool
	}{
		{"own org channel", store.MessageScope{Org: "a"}, store.OrgStream("a", "c"), true},
		{"other org channel", store.MessageScope{Org: "a"}, store.OrgStream("b", "c"), false},
		{"no org reaches no org channel", store.MessageScope{}, store.OrgStream("", "c"), false},
		{"member swarm", store.MessageScope{Swarms: []string{"x", "s"}}, store.SwarmStream("s"), true},
		{"other swarm", store.MessageScope{Org: "a", Swarms: []string{"x"}}, store.SwarmStream("s"), false},
		{"org is not a swarm membership", store.MessageScope{Org: "s"}, store.SwarmStream("s"), false},
		{"a swarm id is not a channel", store.MessageScope{Swarms: []string{"c"}}, store.OrgStream("a", "c"), false},
		{"unknown network", store.MessageScope{Org: "a", Swarms: []string{"c"}}, store.StreamKey{Network: "mesh", Org: "a", Name: "c"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.scope.Includes(c.k); got != c.want {
				t.Fatalf("Includes = %v, want %v", got, c.want)
			}
		})
	}
}

func validMessage() store.MessageWrite {
	now := time.Unix(1700000000, 0)
	return store.MessageWrite{
		Stream: store.OrgStream("o", "c"), SenderOrg: "o", SenderInstance: "i", ClientMsgID: "m", Type: "question",
		Deadline: now.Add(time.Hour), ServerTime: now, ExpiresAt: now.Add(time.Hour), Data: []byte("{}"),
	}
}

func TestValidateMessage(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*store.MessageWrite)
		want   string
	}{
		{"valid", func(*store.MessageWrite) {}, ""},
		{"valid broadcast on a swarm from any org", func(m *store.MessageWrite) {
			m.Stream, m.SenderOrg, m.Deadline = store.SwarmStream("s"), "p", time.Time{}
		}, ""},
		{"valid direct on a swarm to another org", func(m *store.MessageWrite) {
			m.Stream, m.Deadline, m.ToOrg, m.ToInstance = store.SwarmStream("s"), time.Time{}, "p", "j"
		}, ""},
		{"valid direct on an org channel", func(m *store.MessageWrite) { m.ToOrg, m.ToInstance = "o", "j" }, ""},
		{"valid without expiry", func(m *store.MessageWrite) { m.ExpiresAt = time.Time{} }, ""},
		{"unknown network", func(m *store.MessageWrite) { m.Stream.Network = "mesh" }, `store: invalid argument: stream network "mesh" is neither "org" nor "swarm"`},
		{"org stream without org", func(m *store.MessageWrite) { m.Stream.Org = "" }, "store: invalid argument: empty stream org"},
		{"swarm stream with org", func(m *store.MessageWrite) { m.Stream = store.StreamKey{Network: "swarm", Org: "o", Name: "s"} }, `store: invalid argument: swarm stream keyed by org "o"`},
		{"no stream name", func(m *store.MessageWrite) { m.Stream.Name = "" }, "store: invalid argument: empty stream name"},
		{"no sender org", func(m *store.MessageWrite) { m.SenderOrg = "" }, "store: invalid argument: empty sender org"},
		{"no sender instance", func(m *store.MessageWrite) { m.SenderInstance = "" }, "store: invalid argument: empty sender instance"},
		{"no client_msg_id", func(m *store.MessageWrite) { m.ClientMsgID = "" }, "store: invalid argument: empty client_msg_id"},
		{"no type", func(m *store.MessageWrite) { m.Type = "" }, "store: invalid argument: empty message type"},
		{"bridged", func(m *store.MessageWrite) { m.SenderOrg = "p" }, `store: invalid argument: sender org "p" writes to a stream of org "o"`},
		{"half recipient", func(m *store.MessageWrite) { m.ToInstance = "j" }, "store: invalid argument: recipient org and instance must be set together"},
		{"recipient of another org", func(m *store.MessageWrite) { m.ToOrg, m.ToInstance = "p", "j" }, `store: invalid argument: recipient org "p" on a stream of org "o"`},
		{"deadline on a swarm", func(m *store.MessageWrite) { m.Stream, m.SenderOrg = store.SwarmStream("s"), "o" }, "store: invalid argument: task deadline on a swarm stream"},
		{"no server time", func(m *store.MessageWrite) { m.ServerTime = time.Time{} }, "store: invalid argument: zero server time"},
		{"no data", func(m *store.MessageWrite) { m.Data = []byte{} }, "store: invalid argument: empty data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := validMessage()
			c.mutate(&m)
			err := store.ValidateMessage(m)
			if c.want == "" {
				if err != nil {
					t.Fatalf("ValidateMessage: %v", err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalid) || err.Error() != c.want {
				t.Fatalf("ValidateMessage: %v, want %q wrapping ErrInvalid", err, c.want)
			}
		})
	}
}

func TestValidateOtherLanes(t *testing.T) {
	now := time.Unix(1700000000, 0)
	k := store.OrgStream("o", "c")
	prop := store.TaskProposalWrite{Stream: k, Vault: "v", QuestionGID: "q", CreatedAt: now, Data: []byte("x")}
	env := store.EnvelopeWrite{Subject: "notifications.agent.s", StoredAt: now, Data: []byte("{}")}
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"scope ok", store.ValidateScope(store.MessageScope{}, "g"), true},
		{"scope empty gid", store.ValidateScope(store.MessageScope{Org: "o"}, ""), false},
		{"read ok", store.ValidateReadQuery(k, store.ReadQuery{Limit: 1, Viewer: &store.Viewer{Org: "o", Instance: "i"}}), true},
		{"read bad stream", store.ValidateReadQuery(store.StreamKey{}, store.ReadQuery{Limit: 1}), false},
		{"read negative after", store.ValidateReadQuery(k, store.ReadQuery{After: -1, Limit: 1}), false},
		{"read zero limit", store.ValidateReadQuery(k, store.ReadQuery{}), false},
		{"read viewer without instance", store.ValidateReadQuery(k, store.ReadQuery{Limit: 1, Viewer: &store.Viewer{Org: "o"}}), false},
		{"receipt ok", store.ValidateReceipt(k, "g", "b", store.ReceiptDelivered, now), true},
		{"receipt read ok", store.ValidateReceipt(store.SwarmStream("s"), "g", "b", store.ReceiptRead, now), true},
		{"receipt unknown state", store.ValidateReceipt(k, "g", "b", "unknown", now), false},
		{"receipt no gid", store.ValidateReceipt(k, "", "b", store.ReceiptRead, now), false},
		{"receipt no by", store.ValidateReceipt(k, "g", "", store.ReceiptRead, now), false},
		{"receipt no time", store.ValidateReceipt(k, "g", "b", store.ReceiptRead, time.Time{}), false},
		{"proposal ok", store.ValidateProposal(prop), true},
		{"proposal swarm", store.ValidateProposal(store.TaskProposalWrite{Stream: store.SwarmStream("s"), Vault: "v", QuestionGID: "q", CreatedAt: now, Data: []byte("x")}), false},
		{"page ok", store.ValidatePage("o", 0, 1), true},
		{"page no org", store.ValidatePage("", 0, 1), false},
		{"sweep ok", store.ValidateSweep(now, 1), true},
		{"sweep zero time", store.ValidateSweep(time.Time{}, 1), false},
		{"envelope ok", store.ValidateEnvelope("o", env, 72*time.Hour), true},
		{"envelope zero window ok", store.ValidateEnvelope("o", env, 0), true},
		{"envelope no org", store.ValidateEnvelope("", env, time.Hour), false},
		{"envelope query ok", store.ValidateEnvelopeQuery("o", store.EnvelopeQuery{Limit: 1}), true},
		{"envelope query zero limit", store.ValidateEnvelopeQuery("o", store.EnvelopeQuery{}), false},
	} {
		if (c.err == nil) != c.ok || (c.err != nil && !errors.Is(c.err, store.ErrInvalid)) {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
}

// decodeULID inverts the encoding for the tests: 26 Crockford base32 characters → 48-bit
// milliseconds and 80 random bits.
func decodeULID(t *testing.T, s string) (ms uint64, random [10]byte) {
	t.Helper()
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	if len(s) != 26 || s[0] > '7' {
		t.Fatalf("ULID %q: wrong length or first character", s)
	}
	var hi, lo uint64 // the 128 bits, 2 bits of padding at the top of hi
	for i := range 26 {
		v := strings.IndexByte(alphabet, s[i])
		if v < 0 {
			t.Fatalf("ULID %q: character %q outside the alphabet", s, s[i])
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	ms = hi >> 16
	r := [16]byte{}
	for i := range 8 {
		r[i] = byte(hi >> (56 - 8*i))
		r[8+i] = byte(lo >> (56 - 8*i))
	}
	copy(random[:], r[6:])
	return ms, random
}

func TestULIDSpecExample(t *testing.T) {
	// The timestamp of the ULID specification's example 01ARYZ6S41TSV4RRFFQ69G5FAV.
	ms, _ := decodeULID(t, "01ARYZ6S41TSV4RRFFQ69G5FAV")
	if ms != 1469918176385 {
		t.Fatalf("decoder: ms %d", ms)
	}
	var u store.ULIDSource
	id := u.New(time.UnixMilli(1469918176385))
	if id[:10] != "01ARYZ6S41" {
		t.Fatalf("ULID for the spec's instant = %s, want prefix 01ARYZ6S41", id)
	}
}

func TestULIDMonotonic(t *testing.T) {
	var u store.ULIDSource
	base := time.UnixMilli(1700000000000)
	prev := ""
	// Same millisecond, later millisecond, and a clock that steps back: always increasing.
	for i, at := range []time.Time{base, base, base, base.Add(time.Millisecond), base.Add(-time.Second), base, base.Add(2 * time.Millisecond)} {
		id := u.New(at)
		ms, _ := decodeULID(t, id)
		if id <= prev {
			t.Fatalf("ULID %d %s not after %s", i, id, prev)
		}
		if want := uint64(max(at.UnixMilli(), base.Add(time.Millisecond).UnixMilli())); i >= 3 && i <= 5 && ms != want {
			t.Fatalf("ULID %d: ms %d, want %d (never back)", i, ms, want)
		}
		prev = id
	}
	// Within one millisecond the random part increments by one.
	a, b := u.New(base.Add(time.Hour)), u.New(base.Add(time.Hour))
	_, ra := decodeULID(t, a)
	_, rb := decodeULID(t, b)
	carry := 1
	for i := 9; i >= 0; i-- {
		sum := int(ra[i]) + carry
		if byte(sum) != rb[i] {
			t.Fatalf("%s then %s: random part not incremented by one", a, b)
		}
		carry = sum >> 8
	}
}

func TestULIDConcurrentUnique(t *testing.T) {
	const goroutines, each = 8, 500
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	at := time.Now()
	for range goroutines {
		wg.Go(func() {
			ids := make([]string, each)
			for i := range ids {
				ids[i] = store.NewULID(at)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] {
					t.Errorf("ULID %s minted twice", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
	if len(seen) != goroutines*each {
		t.Fatalf("%d distinct ULIDs, want %d", len(seen), goroutines*each)
	}
}

// FuzzValidateMessage: ValidateMessage accepts exactly the writes AppendMessage's preconditions
// describe, and every refusal wraps ErrInvalid.
func FuzzValidateMessage(f *testing.F) {
	f.Add("org", "o", "c", "o", "i", "m", "question", "", "", int64(1), int64(1), []byte("{}"))
	f.Add("swarm", "", "s", "p", "i", "m", "finding", "q", "j", int64(0), int64(1), []byte("x"))
	f.Add("swarm", "o", "s", "o", "i", "m", "t", "", "", int64(0), int64(1), []byte("x"))
	f.Add("org", "o", "c", "p", "i", "m", "t", "", "", int64(0), int64(1), []byte("x"))
	f.Add("org", "o", "c", "o", "i", "m", "t", "o", "", int64(0), int64(0), []byte{})
	f.Fuzz(func(t *testing.T, network, org, name, senderOrg, instance, clientMsgID, typ, toOrg, toInstance string, deadline, serverTime int64, data []byte) {
		m := store.MessageWrite{
			Stream: store.StreamKey{Network: network, Org: org, Name: name}, SenderOrg: senderOrg, SenderInstance: instance,
			ClientMsgID: clientMsgID, Type: typ, ToOrg: toOrg, ToInstance: toInstance, Data: data,
		}
		if deadline != 0 {
			m.Deadline = time.Unix(deadline, 0)
		}
		if serverTime != 0 {
			m.ServerTime = time.Unix(serverTime, 0)
		}
		isOrg := network == store.NetworkOrg
		streamOK := (isOrg && org != "" || network == store.NetworkSwarm && org == "") && name != ""
		want := streamOK && senderOrg != "" && instance != "" && clientMsgID != "" && typ != "" &&
			(!isOrg || senderOrg == org) && (toOrg == "") == (toInstance == "") && (!isOrg || toOrg == "" || toOrg == org) &&
			(isOrg || deadline == 0) && serverTime != 0 && len(data) > 0
		err := store.ValidateMessage(m)
		if (err == nil) != want {
			t.Fatalf("ValidateMessage(%+v) = %v, want valid=%v", m, err, want)
		}
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("ValidateMessage error %v does not wrap ErrInvalid", err)
		}
	})
}

// FuzzULIDMonotonic: whatever instants a source is asked for, its ULIDs are well formed and
// strictly increase.
func FuzzULIDMonotonic(f *testing.F) {
	f.Add(int64(1700000000000), []byte{0, 0, 1, 255, 3})
	f.Add(int64(0), []byte{})
	f.Add(int64(1<<48-2), []byte{1, 1, 1})
	f.Add(int64(-5), []byte{200, 0})
	f.Fuzz(func(t *testing.T, start int64, steps []byte) {
		var u store.ULIDSource
		at := start
		prev := u.New(time.UnixMilli(at))
		decodeULID(t, prev)
		for _, s := range steps {
			at += int64(int8(s)) // forward, back or the same millisecond
			id := u.New(time.UnixMilli(at))
			decodeULID(t, id)
			if id <= prev {
				t.Fatalf("ULID %s after %s (instant %d)", id, prev, at)
			}
			prev = id
		}
	})
}
