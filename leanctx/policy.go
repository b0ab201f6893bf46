package leanctx

import "github.com/agentwire/agentwire/hive/wire"

// PolicyCriticality is the `criticality` of a PolicyClassification.
type PolicyCriticality string

// PolicyCriticality values.
const (
	PolicyCriticalityCritical PolicyCriticality = "Critical"
	PolicyCriticalityHigh     PolicyCriticality = "High"
	PolicyCriticalityMedium   PolicyCriticality = "Medium"
	PolicyCriticalityLow      PolicyCriticality = "Low"
)

var policyCriticalities = []string{"Critical", "High", "Medium", "Low"}

// MarshalJSON writes the value; an unknown value fails.
func (c PolicyCriticality) MarshalJSON() ([]byte, error) {
	return enumMarshal(c, "PolicyCriticality", policyCriticalities)
}

// UnmarshalJSON refuses any other string.
func (c *PolicyCriticality) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "PolicyCriticality", policyCriticalities, c)
}

// ExpiryBehavior is the `expiry_behavior` of a PolicyClassification.
type ExpiryBehavior string

// ExpiryBehavior values.
const (
	ExpiryBehaviorFailClosed  ExpiryBehavior = "FailClosed"
	ExpiryBehaviorFailOpen    ExpiryBehavior = "FailOpen"
	ExpiryBehaviorGracePeriod ExpiryBehavior = "GracePeriod"
)

var expiryBehaviors = []string{"FailClosed", "FailOpen", "GracePeriod"}

// MarshalJSON writes the value; an unknown value fails.
func (b ExpiryBehavior) MarshalJSON() ([]byte, error) {
	return enumMarshal(b, "ExpiryBehavior", expiryBehaviors)
}

// UnmarshalJSON refuses any other string.
func (b *ExpiryBehavior) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "ExpiryBehavior", expiryBehaviors, b)
}

// PolicyClassification says how a policy fails when it expires (hive.md §7.3); lenient.
type PolicyClassification struct {
	// Criticality is `criticality`.
	Criticality PolicyCriticality
	// ExpiryBehavior is `expiry_behavior`.
	ExpiryBehavior ExpiryBehavior
	// GracePeriodSeconds is `grace_period_seconds`.
	GracePeriodSeconds uint64
	// FallbackPolicyRef is `fallback_policy_ref` (optional, omitted when absent).
	FallbackPolicyRef *string
	// LastKnownGoodAllowed is `last_known_good_allowed`.
	LastKnownGoodAllowed bool
}

var policyFields = []string{"criticality", "expiry_behavior", "grace_period_seconds", "fallback_policy_ref", "last_known_good_allowed"}

func (p *PolicyClassification) decode(d *wire.Decoder) error {
	*p = PolicyClassification{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "criticality":
			seen |= 1 << 0
			v, err := decodeEnum[PolicyCriticality](d, policyCriticalities)
			p.Criticality = v
			return err
		case "expiry_behavior":
			seen |= 1 << 1
			v, err := decodeEnum[ExpiryBehavior](d, expiryBehaviors)
			p.ExpiryBehavior = v
			return err
		case "grace_period_seconds":
			seen |= 1 << 2
			return decodeU64(d, &p.GracePeriodSeconds)
		case "fallback_policy_ref":
			return d.OptString(&p.FallbackPolicyRef)
		case "last_known_good_allowed":
			seen |= 1 << 4
			v, err := d.Bool()
			p.LastKnownGoodAllowed = v
			return err
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<0|1<<1|1<<2|1<<4, policyFields)
}

func (p *PolicyClassification) appendJSON(e *wire.Encoder) {
	e.Open()
	appendEnum(e, "criticality", p.Criticality, "PolicyCriticality", policyCriticalities)
	appendEnum(e, "expiry_behavior", p.ExpiryBehavior, "ExpiryBehavior", expiryBehaviors)
	e.Uint("grace_period_seconds", p.GracePeriodSeconds)
	e.OptStr("fallback_policy_ref", p.FallbackPolicyRef)
	e.Bool("last_known_good_allowed", p.LastKnownGoodAllowed)
	e.Close()
}

// MarshalJSON writes the classification.
func (p PolicyClassification) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(160, p.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (p *PolicyClassification) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "PolicyClassification", p.decode)
}
