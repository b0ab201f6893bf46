package relay

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/store"
)

// Right is one permission a token grants (relay.md §1 Auth, the auth file's `rights`).
type Right string

// The rights of relay.md §1. `admin` grants every other right within the token's org.
const (
	RightRunsWrite       Right = "runs.write"
	RightRunsRead        Right = "runs.read"
	RightBusRelay        Right = "bus.relay"
	RightNotifyPublish   Right = "notify.publish"
	RightNotifySubscribe Right = "notify.subscribe"
	RightAdmin           Right = "admin"
)

var allRights = []Right{RightRunsWrite, RightRunsRead, RightBusRelay, RightNotifyPublish, RightNotifySubscribe, RightAdmin}

func rightBit(r Right) uint8 {
	for i, x := range allRights {
		if x == r {
			return 1 << i
		}
	}
	return 0
}

// Swarm is one entry of a token's `swarms` (relay.md §1): the instance's membership of a
// swarm network with its `handle` and `reputation` (used by the bus lane).
type Swarm struct {
	SwarmID    string
	Handle     string
	Reputation float64
}

// Principal is the identity a request acts as: the token's `org`, `instance_id`,
// `instance_label`, `owner`, `plan`, `swarms` and `rights` (relay.md §1), or the local-mode
// identity (org and instance `local`, every right).
type Principal struct {
	Org           string
	InstanceID    string
	InstanceLabel string
	Owner         string // empty when absent
	Plan          string // "team" (the default) or "personal"
	Swarms        []Swarm
	// ExpiresAt is the entry's `expires_at`; zero when it has none (and in local mode).
	ExpiresAt time.Time
	rights    uint8
	// token is the SHA-256 of the bearer token the request presented (zero in local mode):
	// what an open stream is checked against when the auth file changes (revoke.go).
	token [sha256.Size]byte
}

// Has reports whether the principal holds right r; `admin` holds them all.
func (p *Principal) Has(r Right) bool {
	return p.rights&(rightBit(r)|rightBit(RightAdmin)) != 0
}

// Rights lists the rights the principal holds explicitly, in the spec's order.
func (p *Principal) Rights() []Right {
	var out []Right
	for _, r := range allRights {
		if p.rights&rightBit(r) != 0 {
			out = append(out, r)
		}
	}
	return out
}

// LocalOrg is the org (and instance ID) every request acts as in local mode (relay.md §1).
const LocalOrg = "local"

// LocalPrincipal returns the local-mode identity: org `local`, instance `local`, all rights.
func LocalPrincipal() *Principal {
	var all uint8
	for _, r := range allRights {
		all |= rightBit(r)
	}
	return &Principal{Org: LocalOrg, InstanceID: LocalOrg, InstanceLabel: LocalOrg, Plan: "team", rights: all}
}

// Auth is a parsed `--auth FILE` (relay.md §1): bearer tokens known only by their SHA-256.
// A nil *Auth means local mode.
type Auth struct {
	tokens []authToken
	// sealed holds the file's `sealed_vaults`: each sealed vault's current epoch
	// (bus_sealed.go).
	sealed map[sealedVault]uint64
}

type authToken struct {
	hash      [sha256.Size]byte
	principal *Principal
}

// Len returns the number of tokens.
func (a *Auth) Len() int { return len(a.tokens) }

// LoadAuth reads and parses an auth file (see [ParseAuth]).
func LoadAuth(path string) (*Auth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	a, err := ParseAuth(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseAuth parses the auth file's JSON (strict JSON, relay.md §1): either an array of token
// entries or an object `{"tokens":[…], "sealed_vaults"?:[…]}`. Each token entry is
//
//	{"token_sha256": "<64 hex digits>", "org": "…", "instance_id": "…", "instance_label": "…",
//	 "owner"?: "…", "plan"?: "team"|"personal", "expires_at"?: "<RFC 3339 time>",
//	 "swarms"?: [{"swarm_id": "…", "handle": "…", "reputation": <number>}],
//	 "rights": ["runs.write", "runs.read", "bus.relay", "notify.publish", "notify.subscribe", "admin"]}
//
// and each `sealed_vaults` entry (project-defined, hive.md §8 S17) names a sealed vault of an
// org and its current key epoch:
//
//	{"org": "…", "vault_id": "<32 lowercase hex>", "epoch": <integer ≥ 1>}
//
// Unknown members, unknown rights, empty org or instance IDs, repeated token hashes and a
// vault listed twice are refused, so that a typo in the file cannot silently widen or narrow
// access.
func ParseAuth(data []byte) (*Auth, error) {
	v, err := jsonvalue.Parse(data, "auth file")
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	a := &Auth{}
	if obj, isObj := v.(*jsonvalue.Object); isObj {
		if !obj.Has("tokens") {
			return nil, errors.New("auth file must be an array of tokens or {\"tokens\":[…]}")
		}
		for _, m := range obj.Members() {
			switch m.Name {
			case "tokens":
				list, ok = m.Value.([]any)
			case "sealed_vaults":
				if a.sealed, err = parseSealedVaults(m.Value); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("auth file has unknown member %q", m.Name)
			}
		}
	}
	if !ok {
		return nil, errors.New("auth file must be an array of tokens or {\"tokens\":[…]}")
	}
	seen := map[[sha256.Size]byte]bool{}
	for i, item := range list {
		path := fmt.Sprintf("tokens[%d]", i)
		t, err := parseToken(path, item)
		if err != nil {
			return nil, err
		}
		if seen[t.hash] {
			return nil, fmt.Errorf("%s.token_sha256 repeats an earlier token", path)
		}
		seen[t.hash] = true
		a.tokens = append(a.tokens, t)
	}
	return a, nil
}

func parseToken(path string, item any) (authToken, error) {
	obj, ok := item.(*jsonvalue.Object)
	if !ok {
		return authToken{}, fmt.Errorf("%s must be an object", path)
	}
	p := &Principal{Plan: "team"}
	var t authToken
	str := func(name string, v any, required bool) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s.%s must be a string", path, name)
		}
		if required && s == "" {
			return "", fmt.Errorf("%s.%s must not be empty", path, name)
		}
		return s, nil
	}
	var haveHash, haveRights bool
	var err error
	for _, m := range obj.Members() {
		switch m.Name {
		case "token_sha256":
			var s string
			if s, err = str(m.Name, m.Value, true); err != nil {
				return t, err
			}
			b, derr := hex.DecodeString(s)
			if derr != nil || len(b) != sha256.Size {
				return t, fmt.Errorf("%s.token_sha256 must be 64 hexadecimal digits (the SHA-256 of the token)", path)
			}
			copy(t.hash[:], b)
			haveHash = true
		case "org":
			p.Org, err = str(m.Name, m.Value, true)
		case "instance_id":
			p.InstanceID, err = str(m.Name, m.Value, true)
		case "instance_label":
			p.InstanceLabel, err = str(m.Name, m.Value, false)
		case "owner":
			p.Owner, err = str(m.Name, m.Value, false)
		case "plan":
			if p.Plan, err = str(m.Name, m.Value, true); err == nil && p.Plan != "team" && p.Plan != "personal" {
				err = fmt.Errorf("%s.plan must be \"team\" or \"personal\"", path)
			}
		case "swarms":
			p.Swarms, err = parseSwarms(path+".swarms", m.Value)
		case "expires_at":
			var v string
			if v, err = str(m.Name, m.Value, true); err == nil {
				if p.ExpiresAt, err = time.Parse(time.RFC3339, v); err != nil {
					err = fmt.Errorf("%s.expires_at must be an RFC 3339 time (2026-12-31T23:59:59Z), got %q", path, v)
				}
			}
		case "rights":
			arr, ok := m.Value.([]any)
			if !ok {
				return t, fmt.Errorf("%s.rights must be an array", path)
			}
			for j, r := range arr {
				s, ok := r.(string)
				if !ok || rightBit(Right(s)) == 0 {
					return t, fmt.Errorf("%s.rights[%d] is not a known right (runs.write, runs.read, bus.relay, notify.publish, notify.subscribe, admin)", path, j)
				}
				p.rights |= rightBit(Right(s))
			}
			haveRights = true
		default:
			return t, fmt.Errorf("%s has unknown member %q", path, m.Name)
		}
		if err != nil {
			return t, err
		}
	}
	switch {
	case !haveHash:
		return t, fmt.Errorf("%s.token_sha256 is missing", path)
	case p.Org == "":
		return t, fmt.Errorf("%s.org is missing", path)
	case len(p.Org) > store.MaxIDBytes:
		return t, fmt.Errorf("%s.org exceeds the %d-byte limit of every id", path, store.MaxIDBytes)
	case p.InstanceID == "":
		return t, fmt.Errorf("%s.instance_id is missing", path)
	case !obj.Has("instance_label"):
		return t, fmt.Errorf("%s.instance_label is missing", path)
	case !haveRights:
		return t, fmt.Errorf("%s.rights is missing", path)
	}
	t.principal = p
	return t, nil
}

func parseSwarms(path string, v any) ([]Swarm, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an array", path)
	}
	out := make([]Swarm, 0, len(arr))
	for i, item := range arr {
		p := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := item.(*jsonvalue.Object)
		if !ok {
			return nil, fmt.Errorf("%s must be an object", p)
		}
		var s Swarm
		var have int
		for _, m := range obj.Members() {
			switch m.Name {
			case "swarm_id", "handle":
				str, ok := m.Value.(string)
				if !ok || str == "" {
					return nil, fmt.Errorf("%s.%s must be a non-empty string", p, m.Name)
				}
				if m.Name == "swarm_id" {
					s.SwarmID = str
				} else {
					s.Handle = str
				}
				have++
			case "reputation":
				f, ok := m.Value.(float64)
				if !ok {
					return nil, fmt.Errorf("%s.reputation must be a number", p)
				}
				s.Reputation = f
				have++
			default:
				return nil, fmt.Errorf("%s has unknown member %q", p, m.Name)
			}
		}
		if have != 3 {
			return nil, fmt.Errorf("%s needs swarm_id, handle and reputation", p)
		}
		out = append(out, s)
	}
	return out, nil
}

// HashToken returns the lowercase hex SHA-256 of a bearer token: the auth file's
// `token_sha256` (only hashes are stored, relay.md §1).
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// authenticate resolves the request's bearer token at time now. The token is hashed and
// compared with every entry in constant time (no early exit), so the answer time does not
// depend on which entry, if any, matched. An expired entry is an unknown token (relay.md §1
// "Token lifetime"). The principal returned is a copy carrying the token's hash.
func (a *Auth) authenticate(r *http.Request, now time.Time) (*Principal, *Error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, newError(CodeUnauthorized, "A bearer token is required.")
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	found := a.lookup(sum)
	if found == nil || found.expired(now) {
		return nil, newError(CodeUnauthorized, "The bearer token is not valid.")
	}
	p := *found
	p.token = sum
	return &p, nil
}

// lookup returns the entry of a token hash, comparing with every entry in constant time.
func (a *Auth) lookup(sum [sha256.Size]byte) *Principal {
	var found *Principal
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].hash[:]) == 1 {
			found = a.tokens[i].principal
		}
	}
	return found
}

// expired reports whether the entry's expires_at has passed at now.
func (p *Principal) expired(now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

// CheckListenAddress enforces local mode's binding rule (relay.md §1): without an auth file
// the relay refuses any address that is not loopback (127.0.0.0/8, ::1 or `localhost`); an
// empty host (all interfaces) is refused too.
func CheckListenAddress(addr string, auth bool) error {
	if auth {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid listen address %q: %v", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		host = "all interfaces"
	}
	return fmt.Errorf("refusing to listen on %s (%s) without --auth: local mode only binds a loopback address", addr, host)
}
