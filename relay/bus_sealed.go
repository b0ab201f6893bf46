package relay

import (
	"fmt"
	"math"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Sealed vaults (hive.md §3, §8 S17; project-defined configuration).
//
// Which vaults are sealed, and their current key epoch, comes from the auth file's top-level
// `sealed_vaults` ([ParseAuth]): a vault is sealed for one org (the token's org, like its
// channels), so another org using the same vault_id text is not affected. Local mode has no
// sealed vault. For an org message (`message` frame and POST /v1/messages alike), after the
// §8 S9 resend check:
//
//   - a sealed vault and a clear `body` → 400 invalid_request, field `body`, reason
//     sealed_vault;
//   - an unsealed vault and `sealed` → 400 invalid_request, field `sealed`, reason not_sealed;
//   - a sealed vault and a `sealed` whose epoch is not the current one → 409 invalid_state,
//     field `sealed.epoch`, reason stale_epoch.
//
// The relay never holds a key: `sealed` is stored as sent and every delivery, history page,
// catch-up and replay carries it unread. A changed epoch takes effect when the relay restarts
// with the new file. Publish bodies are opaque and not checked (hive.md §3.2: in a sealed
// vault an engine SHOULD place a SealedBlobV1 there).

// sealedVault keys a sealed vault: the org and the vault_id.
type sealedVault struct{ org, vault string }

// parseSealedVaults reads the auth file's `sealed_vaults`.
func parseSealedVaults(v any) (map[sealedVault]uint64, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("sealed_vaults must be an array")
	}
	out := make(map[sealedVault]uint64, len(arr))
	for i, item := range arr {
		p := fmt.Sprintf("sealed_vaults[%d]", i)
		obj, ok := item.(*jsonvalue.Object)
		if !ok {
			return nil, fmt.Errorf("%s must be an object", p)
		}
		var k sealedVault
		var epoch uint64
		for _, m := range obj.Members() {
			switch m.Name {
			case "org":
				s, ok := m.Value.(string)
				if !ok || s == "" {
					return nil, fmt.Errorf("%s.org must be a non-empty string", p)
				}
				k.org = s
			case "vault_id":
				s, ok := m.Value.(string)
				if !ok || !isVaultID(s) {
					return nil, fmt.Errorf("%s.vault_id must be 32 lowercase hex digits", p)
				}
				k.vault = s
			case "epoch":
				f, ok := m.Value.(float64)
				if !ok || f < 1 || f > 1<<53 || f != math.Trunc(f) {
					return nil, fmt.Errorf("%s.epoch must be an integer from 1", p)
				}
				epoch = uint64(f)
			default:
				return nil, fmt.Errorf("%s has unknown member %q", p, m.Name)
			}
		}
		if k.org == "" || k.vault == "" || epoch == 0 {
			return nil, fmt.Errorf("%s needs org, vault_id and epoch", p)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s repeats the vault %s of org %s", p, k.vault, k.org)
		}
		out[k] = epoch
	}
	return out, nil
}

// isVaultID reports whether s is a channel's vault_id form: 32 lowercase hex digits (hive.md §1.6).
func isVaultID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Sealed returns the current key epoch of the vault vaultID of org, and whether the auth file
// lists it as sealed.
func (a *Auth) Sealed(org, vaultID string) (epoch uint64, ok bool) {
	if a == nil {
		return 0, false
	}
	epoch, ok = a.sealed[sealedVault{org, vaultID}]
	return epoch, ok
}

// checkSealed applies S17 to an org message of principal p in vault.
func (s *Server) checkSealed(p *Principal, vault string, m *hive.AgentMessageV1) *BusError {
	epoch, sealed := s.auth.Load().Sealed(p.Org, vault)
	switch {
	case sealed && m.Body != nil:
		return newBusError(hive.HiveErrorCodeInvalidRequest, "body", hive.ReasonSealedVault, MsgSealedVault)
	case !sealed && m.Sealed != nil:
		return newBusError(hive.HiveErrorCodeInvalidRequest, "sealed", hive.ReasonNotSealed, MsgNotSealed)
	case sealed && m.Sealed != nil && m.Sealed.Epoch != epoch:
		return newBusError(hive.HiveErrorCodeInvalidState, "sealed.epoch", hive.ReasonStaleEpoch, MsgStaleEpoch)
	}
	return nil
}
