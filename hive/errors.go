package hive

import (
	"strings"

	"github.com/agentwire/agentwire/hive/wire"
)

// HiveErrorCode is the `code` of an error detail (hive.md §5.2): snake_case; any other string
// decodes as HiveErrorCodeUnknown, which encodes as "unknown" and means "act on the HTTP status".
type HiveErrorCode string

// HiveErrorCode values (hive.md §5.2).
const (
	HiveErrorCodeAuthorizationPending HiveErrorCode = "authorization_pending" // 400: device flow not approved yet
	HiveErrorCodeSlowDown             HiveErrorCode = "slow_down"             // 400: device flow polling too fast
	HiveErrorCodeExpiredToken         HiveErrorCode = "expired_token"         // 400: device code expired
	HiveErrorCodeAccessDenied         HiveErrorCode = "access_denied"         // 400: the user refused
	HiveErrorCodeInvalidRequest       HiveErrorCode = "invalid_request"       // 400: decoding or validation failed
	HiveErrorCodeUnauthorized         HiveErrorCode = "unauthorized"          // 401: token missing, expired or foreign
	HiveErrorCodePlanRequired         HiveErrorCode = "plan_required"         // 402: the plan lacks Hive
	HiveErrorCodeForbiddenRight       HiveErrorCode = "forbidden_right"       // 403: the lease lacks the right
	HiveErrorCodeUploadDisabled       HiveErrorCode = "upload_disabled"       // 403: carries kind
	HiveErrorCodeScreeningRequired    HiveErrorCode = "screening_required"    // 403: screening first
	HiveErrorCodeInstanceRevoked      HiveErrorCode = "instance_revoked"      // 403: stop all traffic
	HiveErrorCodePolicyDenied         HiveErrorCode = "policy_denied"         // 403: policy refused the content
	HiveErrorCodeNotFound             HiveErrorCode = "not_found"             // 404: unknown target
	HiveErrorCodeInstanceLimit        HiveErrorCode = "instance_limit"        // 409: seats taken
	HiveErrorCodeRevisionConflict     HiveErrorCode = "revision_conflict"     // 409: re-read, retry
	HiveErrorCodeInvalidState         HiveErrorCode = "invalid_state"         // 409: see reason
	HiveErrorCodeLeaseExpired         HiveErrorCode = "lease_expired"         // 409: drop the work
	HiveErrorCodeUpgradeRequired      HiveErrorCode = "upgrade_required"      // 426: protocol too old
	HiveErrorCodeRateLimited          HiveErrorCode = "rate_limited"          // 429: wait, retry
	HiveErrorCodeQuotaExceeded        HiveErrorCode = "quota_exceeded"        // 429: no retry until the quota changes
	HiveErrorCodeUnknown              HiveErrorCode = "unknown"               // any: act on the status alone
)

var errorCodes = []HiveErrorCode{
	HiveErrorCodeAuthorizationPending, HiveErrorCodeSlowDown, HiveErrorCodeExpiredToken, HiveErrorCodeAccessDenied,
	HiveErrorCodeInvalidRequest, HiveErrorCodeUnauthorized, HiveErrorCodePlanRequired, HiveErrorCodeForbiddenRight,
	HiveErrorCodeUploadDisabled, HiveErrorCodeScreeningRequired, HiveErrorCodeInstanceRevoked, HiveErrorCodePolicyDenied,
	HiveErrorCodeNotFound, HiveErrorCodeInstanceLimit, HiveErrorCodeRevisionConflict, HiveErrorCodeInvalidState,
	HiveErrorCodeLeaseExpired, HiveErrorCodeUpgradeRequired, HiveErrorCodeRateLimited, HiveErrorCodeQuotaExceeded,
}

var errorStatus = map[HiveErrorCode]int{
	HiveErrorCodeAuthorizationPending: 400, HiveErrorCodeSlowDown: 400, HiveErrorCodeExpiredToken: 400,
	HiveErrorCodeAccessDenied: 400, HiveErrorCodeInvalidRequest: 400, HiveErrorCodeUnauthorized: 401,
	HiveErrorCodePlanRequired: 402, HiveErrorCodeForbiddenRight: 403, HiveErrorCodeUploadDisabled: 403,
	HiveErrorCodeScreeningRequired: 403, HiveErrorCodeInstanceRevoked: 403, HiveErrorCodePolicyDenied: 403,
	HiveErrorCodeNotFound: 404, HiveErrorCodeInstanceLimit: 409, HiveErrorCodeRevisionConflict: 409,
	HiveErrorCodeInvalidState: 409, HiveErrorCodeLeaseExpired: 409, HiveErrorCodeUpgradeRequired: 426,
	HiveErrorCodeRateLimited: 429, HiveErrorCodeQuotaExceeded: 429,
}

// HiveErrorCodes returns the known codes in the order of hive.md §5.2.
func HiveErrorCodes() []HiveErrorCode { return append([]HiveErrorCode(nil), errorCodes...) }

// HTTPStatus returns the status that carries c (§5.2), or 0 for HiveErrorCodeUnknown (any status).
func (c HiveErrorCode) HTTPStatus() int { return errorStatus[c] }

// CodeForStatus synthesizes a code from the HTTP status when a body cannot be decoded (§5.2,
// project-defined): 400 invalid_request, 401 unauthorized, 402 plan_required, 403
// forbidden_right, 404 not_found, 409 invalid_state, 426 upgrade_required, 429 rate_limited,
// any other unknown.
func CodeForStatus(status int) HiveErrorCode {
	switch status {
	case 400:
		return HiveErrorCodeInvalidRequest
	case 401:
		return HiveErrorCodeUnauthorized
	case 402:
		return HiveErrorCodePlanRequired
	case 403:
		return HiveErrorCodeForbiddenRight
	case 404:
		return HiveErrorCodeNotFound
	case 409:
		return HiveErrorCodeInvalidState
	case 426:
		return HiveErrorCodeUpgradeRequired
	case 429:
		return HiveErrorCodeRateLimited
	}
	return HiveErrorCodeUnknown
}

// MarshalJSON writes the wire value.
func (c HiveErrorCode) MarshalJSON() ([]byte, error) { return enumMarshal(c, errorCodes) }

// UnmarshalJSON reads a string; unknown strings give HiveErrorCodeUnknown.
func (c *HiveErrorCode) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "HiveErrorCode", errorCodes, HiveErrorCodeUnknown, c)
}

// HiveUploadKind is the `kind` of an `upload_disabled` error (values project-defined).
type HiveUploadKind string

// HiveUploadKind values.
const (
	HiveUploadKindDraft       HiveUploadKind = "draft"        // knowledge drafts
	HiveUploadKindMessage     HiveUploadKind = "message"      // agent messages
	HiveUploadKindPublish     HiveUploadKind = "publish"      // bus publish frames
	HiveUploadKindTaskResult  HiveUploadKind = "task_result"  // task results
	HiveUploadKindSwarmResult HiveUploadKind = "swarm_result" // swarm results
	HiveUploadKindUnknown     HiveUploadKind = "unknown"      // any other string
)

var uploadKinds = []HiveUploadKind{HiveUploadKindDraft, HiveUploadKindMessage, HiveUploadKindPublish, HiveUploadKindTaskResult, HiveUploadKindSwarmResult}

// MarshalJSON writes the wire value.
func (k HiveUploadKind) MarshalJSON() ([]byte, error) { return enumMarshal(k, uploadKinds) }

// UnmarshalJSON reads a string; unknown strings give HiveUploadKindUnknown.
func (k *HiveUploadKind) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "HiveUploadKind", uploadKinds, HiveUploadKindUnknown, k)
}

// Reasons sent in HiveErrorDetailV1 `reason` (hive.md §5.3).
const (
	ReasonAmbiguousRecipient = "ambiguous_recipient"
	ReasonCrossNetwork       = "cross_network" // engine-local only; the service never sends it
	ReasonOwnerOnly          = "owner_only"
	ReasonOptinChanged       = "optin_changed"
	ReasonOptinInactive      = "optin_inactive"
	ReasonOptinScope         = "optin_scope"
	ReasonLimitExceeded      = "limit_exceeded"
	ReasonDailyBudget        = "daily_budget"
	ReasonHelloRequired      = "hello_required"
	ReasonInstanceMismatch   = "instance_mismatch"
	ReasonUnannouncedAgent   = "unannounced_agent"
	ReasonSealedVault        = "sealed_vault"
	ReasonNotSealed          = "not_sealed"
	ReasonStaleEpoch         = "stale_epoch"
)

// HiveErrorDetailV1 is the error detail of every non-2xx body and of the bus `error` frame
// (hive.md §5.1); lenient.
type HiveErrorDetailV1 struct {
	// Code is `code` (required).
	Code HiveErrorCode
	// Message is `message`: always written; absent decodes as "".
	Message string
	// Field is `field` (optional): the failing member or parameter, top-level or dotted.
	Field *string
	// Reason is `reason` (optional): a finer code (§5.3).
	Reason *string
	// Limit is `limit` (optional): the limit that was hit.
	Limit *uint64
	// Used is `used` (optional): how much is used.
	Used *uint64
	// RetryAfterS is `retry_after_s` (optional): seconds before a retry can succeed.
	RetryAfterS *uint64
	// Kind is `kind` (optional): with upload_disabled.
	Kind *HiveUploadKind
}

func (e *HiveErrorDetailV1) decode(d *wire.Decoder) error {
	*e = HiveErrorDetailV1{}
	seen := false
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "code":
			seen = true
			c, err := enumDecode(d, errorCodes, HiveErrorCodeUnknown)
			e.Code = c
			return err
		case "message":
			if ok, err := d.Null(); err != nil {
				return err
			} else if ok {
				return d.NullRequired()
			}
			return decodeString(d, &e.Message)
		case "field":
			return d.OptString(&e.Field)
		case "reason":
			return d.OptString(&e.Reason)
		case "limit":
			return d.OptUint(&e.Limit, maxU64)
		case "used":
			return d.OptUint(&e.Used, maxU64)
		case "retry_after_s":
			return d.OptUint(&e.RetryAfterS, maxU64)
		case "kind":
			if ok, err := d.Null(); err != nil || ok {
				return err
			}
			k, err := enumDecode(d, uploadKinds, HiveUploadKindUnknown)
			e.Kind = &k
			return err
		}
		return d.Skip()
	})
	if err == nil && !seen {
		err = d.Missing("code")
	}
	return err
}

func (e *HiveErrorDetailV1) appendJSON(enc *wire.Encoder) {
	enc.Open()
	enc.Str("code", enumWire(e.Code, errorCodes))
	enc.Str("message", e.Message)
	enc.OptStr("field", e.Field)
	enc.OptStr("reason", e.Reason)
	enc.OptUint("limit", e.Limit)
	enc.OptUint("used", e.Used)
	enc.OptUint("retry_after_s", e.RetryAfterS)
	if e.Kind != nil {
		enc.Str("kind", enumWire(*e.Kind, uploadKinds))
	}
	enc.Close()
}

// MarshalJSON writes the detail object.
func (e HiveErrorDetailV1) MarshalJSON() ([]byte, error) {
	return marshalWith(96+len(e.Message), e.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (e *HiveErrorDetailV1) UnmarshalJSON(data []byte) error {
	return document(data, "HiveErrorDetailV1", e.decode)
}

// HiveErrorBody is `{"error": HiveErrorDetailV1}`, every non-2xx HTTP body (no `schema`);
// lenient.
type HiveErrorBody struct {
	// Error is `error`.
	Error HiveErrorDetailV1
}

func (b *HiveErrorBody) decode(d *wire.Decoder) error {
	*b = HiveErrorBody{}
	seen := false
	err := d.Object(func(name []byte) error {
		if string(name) == "error" {
			seen = true
			return b.Error.decode(d)
		}
		return d.Skip()
	})
	if err == nil && !seen {
		err = d.Missing("error")
	}
	return err
}

// MarshalJSON writes `{"error":{…}}`.
func (b HiveErrorBody) MarshalJSON() ([]byte, error) {
	return marshalWith(112+len(b.Error.Message), func(e *wire.Encoder) {
		e.Open()
		e.Key("error")
		b.Error.appendJSON(e)
		e.Close()
	})
}

// UnmarshalJSON decodes leniently.
func (b *HiveErrorBody) UnmarshalJSON(data []byte) error {
	return document(data, "HiveErrorBody", b.decode)
}

// NewValidationFailure builds the `400 invalid_request` detail of a refused Validate (§5.4):
// the message verbatim and the field that ValidationField gives.
func NewValidationFailure(err error) HiveErrorDetailV1 {
	msg := err.Error()
	d := HiveErrorDetailV1{Code: HiveErrorCodeInvalidRequest, Message: msg}
	var f string
	if de, ok := err.(*DecodeError); ok {
		f = de.Field
		if ve, ok := de.Err.(*ValidationError); ok && f == "" {
			f = ValidationField(ve.Message)
		}
	} else {
		f = ValidationField(msg)
	}
	if f != "" {
		d.Field = &f
	}
	return d
}

// ValidationField maps a validation message of an AgentMessageV1, MessageReceiptV1 or
// MessageDeliveryV1 to the `field` of hive.md §5.4 (network channels as `network.channel`), or
// "" when the table has no row for it.
func ValidationField(msg string) string {
	switch msg {
	case "unknown message type":
		return "type"
	case "an answer replies to a question":
		return "reply_to"
	case "unknown receipt state":
		return "state"
	case "only questions carry a deadline":
		return "deadline"
	case "too many references", "numbers start at 1", "commit references are 7-64 hex", "Swarm messages do not reference org tasks":
		return "body.references"
	case "a message carries body or sealed":
		return "body"
	case "swarm messages are public to the swarm's workers":
		return "sealed"
	case "sealed epochs start at 1":
		return "sealed.epoch"
	}
	prefixes := []struct{ prefix, field string }{
		{"client_msg_id ", "client_msg_id"}, {"from ", "from"}, {"to_instance ", "to_instance"},
		{"to ", "to"}, {"reply_to ", "reply_to"}, {"gid ", "gid"}, {"by ", "by"},
		{"channel ", "network.channel"}, {"swarm_id ", "network.swarm_id"},
		{"UtcTimestamp ", "deadline"}, {"text ", "body.text"},
		{"reference id ", "body.references"}, {"handoff_id ", "body.references"},
		{"content_schema ", "sealed.content_schema"}, {"sealed content must be ", "sealed.content_schema"},
		{"nonce ", "sealed.nonce"}, {"ciphertext ", "sealed.ciphertext"},
	}
	for _, p := range prefixes {
		if strings.HasPrefix(msg, p.prefix) {
			return p.field
		}
	}
	return ""
}
