package leanctx

import "github.com/agentwire/agentwire/hive/wire"

// ExperimentArm is the `arm` of an assignment.
type ExperimentArm string

// ExperimentArm values.
const (
	ExperimentArmControl   ExperimentArm = "Control"
	ExperimentArmOptimized ExperimentArm = "Optimized"
	ExperimentArmShadow    ExperimentArm = "Shadow"
)

var experimentArms = []string{"Control", "Optimized", "Shadow"}

// MarshalJSON writes the value; an unknown value fails.
func (a ExperimentArm) MarshalJSON() ([]byte, error) {
	return enumMarshal(a, "ExperimentArm", experimentArms)
}

// UnmarshalJSON refuses any other string.
func (a *ExperimentArm) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "ExperimentArm", experimentArms, a)
}

// DataClassification is the `data_classification` of an assignment.
type DataClassification string

// DataClassification values.
const (
	DataClassificationPublic       DataClassification = "Public"
	DataClassificationInternal     DataClassification = "Internal"
	DataClassificationConfidential DataClassification = "Confidential"
	DataClassificationRestricted   DataClassification = "Restricted"
)

var dataClassifications = []string{"Public", "Internal", "Confidential", "Restricted"}

// MarshalJSON writes the value; an unknown value fails.
func (c DataClassification) MarshalJSON() ([]byte, error) {
	return enumMarshal(c, "DataClassification", dataClassifications)
}

// UnmarshalJSON refuses any other string.
func (c *DataClassification) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "DataClassification", dataClassifications, c)
}

// SideEffectPolicy is the `side_effect_policy` of an assignment.
type SideEffectPolicy string

// SideEffectPolicy values.
const (
	SideEffectPolicyNoSideEffects SideEffectPolicy = "NoSideEffects"
	SideEffectPolicyReadOnly      SideEffectPolicy = "ReadOnly"
	SideEffectPolicyAllowWrites   SideEffectPolicy = "AllowWrites"
)

var sideEffectPolicies = []string{"NoSideEffects", "ReadOnly", "AllowWrites"}

// MarshalJSON writes the value; an unknown value fails.
func (p SideEffectPolicy) MarshalJSON() ([]byte, error) {
	return enumMarshal(p, "SideEffectPolicy", sideEffectPolicies)
}

// UnmarshalJSON refuses any other string.
func (p *SideEffectPolicy) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "SideEffectPolicy", sideEffectPolicies, p)
}

// ExperimentAssignmentV1 assigns a subject to an experiment arm (hive.md §7.3). It arrives
// signed; the runtime executes it and never decides. Lenient, no Validate.
type ExperimentAssignmentV1 struct {
	ExperimentID       string             // `experiment_id`
	SubjectID          string             // `subject_id`
	Arm                ExperimentArm      // `arm`
	ConfigurationRef   string             // `configuration_ref`
	ExpiresAt          string             // `expires_at` (plain string, not checked)
	MaxIncrementalCost MoneyV1            // `max_incremental_cost`
	AllowedProviders   []string           // `allowed_providers` (always written)
	AllowedModels      []string           // `allowed_models` (always written)
	DataClassification DataClassification // `data_classification`
	SideEffectPolicy   SideEffectPolicy   // `side_effect_policy`
	KillSwitchRef      string             // `kill_switch_ref`
	Signature          string             // `signature`
}

var assignmentFields = []string{"experiment_id", "subject_id", "arm", "configuration_ref", "expires_at", "max_incremental_cost", "allowed_providers", "allowed_models", "data_classification", "side_effect_policy", "kill_switch_ref", "signature"}

func (a *ExperimentAssignmentV1) decode(d *wire.Decoder) error {
	*a = ExperimentAssignmentV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "experiment_id":
			seen |= 1 << 0
			return decodeString(d, &a.ExperimentID)
		case "subject_id":
			seen |= 1 << 1
			return decodeString(d, &a.SubjectID)
		case "arm":
			seen |= 1 << 2
			v, err := decodeEnum[ExperimentArm](d, experimentArms)
			a.Arm = v
			return err
		case "configuration_ref":
			seen |= 1 << 3
			return decodeString(d, &a.ConfigurationRef)
		case "expires_at":
			seen |= 1 << 4
			return decodeString(d, &a.ExpiresAt)
		case "max_incremental_cost":
			seen |= 1 << 5
			return a.MaxIncrementalCost.decode(d)
		case "allowed_providers":
			seen |= 1 << 6
			return decodeStringList(d, &a.AllowedProviders)
		case "allowed_models":
			seen |= 1 << 7
			return decodeStringList(d, &a.AllowedModels)
		case "data_classification":
			seen |= 1 << 8
			v, err := decodeEnum[DataClassification](d, dataClassifications)
			a.DataClassification = v
			return err
		case "side_effect_policy":
			seen |= 1 << 9
			v, err := decodeEnum[SideEffectPolicy](d, sideEffectPolicies)
			a.SideEffectPolicy = v
			return err
		case "kill_switch_ref":
			seen |= 1 << 10
			return decodeString(d, &a.KillSwitchRef)
		case "signature":
			seen |= 1 << 11
			return decodeString(d, &a.Signature)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<12-1, assignmentFields)
}

func (a *ExperimentAssignmentV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("experiment_id", a.ExperimentID)
	e.Str("subject_id", a.SubjectID)
	appendEnum(e, "arm", a.Arm, "ExperimentArm", experimentArms)
	e.Str("configuration_ref", a.ConfigurationRef)
	e.Str("expires_at", a.ExpiresAt)
	e.Key("max_incremental_cost")
	a.MaxIncrementalCost.appendJSON(e)
	appendStringList(e, "allowed_providers", a.AllowedProviders)
	appendStringList(e, "allowed_models", a.AllowedModels)
	appendEnum(e, "data_classification", a.DataClassification, "DataClassification", dataClassifications)
	appendEnum(e, "side_effect_policy", a.SideEffectPolicy, "SideEffectPolicy", sideEffectPolicies)
	e.Str("kill_switch_ref", a.KillSwitchRef)
	e.Str("signature", a.Signature)
	e.Close()
}

// MarshalJSON writes the assignment.
func (a ExperimentAssignmentV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(384, a.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (a *ExperimentAssignmentV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "ExperimentAssignmentV1", a.decode)
}
