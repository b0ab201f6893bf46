package leanctx

import "github.com/agentwire/agentwire/hive/wire"

// MeasurementMethod says how savings were measured (snake_case, no fallback).
type MeasurementMethod string

// MeasurementMethod values.
const (
	MeasurementMethodProviderReported MeasurementMethod = "provider_reported"
	MeasurementMethodEstimated        MeasurementMethod = "estimated"
	MeasurementMethodUnavailable      MeasurementMethod = "unavailable"
)

var measurementMethods = []string{"provider_reported", "estimated", "unavailable"}

// MarshalJSON writes the value; an unknown value fails.
func (m MeasurementMethod) MarshalJSON() ([]byte, error) {
	return enumMarshal(m, "MeasurementMethod", measurementMethods)
}

// UnmarshalJSON refuses any other string.
func (m *MeasurementMethod) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "MeasurementMethod", measurementMethods, m)
}

// SavingsObservationV1 records the usage and cost of one optimized call next to its original
// (hive.md §7.6); lenient, no Validate.
type SavingsObservationV1 struct {
	ObservationID     string           // `observation_id`
	ProviderID        string           // `provider_id`
	ModelID           string           // `model_id`
	OriginalUsage     UsageBreakdownV1 // `original_usage`
	ActualUsage       UsageBreakdownV1 // `actual_usage`
	LocalCostEstimate MoneyV1          // `local_cost_estimate`
	EvidenceRefs      []EvidenceRefV1  // `evidence_refs`
	ObservedAt        string           // `observed_at`
	RuntimeVersion    string           // `runtime_version`
	SequenceNumber    uint64           // `sequence_number`
}

var observationFields = []string{"observation_id", "provider_id", "model_id", "original_usage", "actual_usage", "local_cost_estimate", "evidence_refs", "observed_at", "runtime_version", "sequence_number"}

func (o *SavingsObservationV1) decode(d *wire.Decoder) error {
	*o = SavingsObservationV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "observation_id":
			seen |= 1 << 0
			return decodeString(d, &o.ObservationID)
		case "provider_id":
			seen |= 1 << 1
			return decodeString(d, &o.ProviderID)
		case "model_id":
			seen |= 1 << 2
			return decodeString(d, &o.ModelID)
		case "original_usage":
			seen |= 1 << 3
			return o.OriginalUsage.decode(d)
		case "actual_usage":
			seen |= 1 << 4
			return o.ActualUsage.decode(d)
		case "local_cost_estimate":
			seen |= 1 << 5
			return o.LocalCostEstimate.decode(d)
		case "evidence_refs":
			seen |= 1 << 6
			return decodeEvidenceList(d, &o.EvidenceRefs)
		case "observed_at":
			seen |= 1 << 7
			return decodeString(d, &o.ObservedAt)
		case "runtime_version":
			seen |= 1 << 8
			return decodeString(d, &o.RuntimeVersion)
		case "sequence_number":
			seen |= 1 << 9
			return decodeU64(d, &o.SequenceNumber)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<10-1, observationFields)
}

func (o *SavingsObservationV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("observation_id", o.ObservationID)
	e.Str("provider_id", o.ProviderID)
	e.Str("model_id", o.ModelID)
	e.Key("original_usage")
	o.OriginalUsage.appendJSON(e)
	e.Key("actual_usage")
	o.ActualUsage.appendJSON(e)
	e.Key("local_cost_estimate")
	o.LocalCostEstimate.appendJSON(e)
	appendEvidenceList(e, "evidence_refs", o.EvidenceRefs)
	e.Str("observed_at", o.ObservedAt)
	e.Str("runtime_version", o.RuntimeVersion)
	e.Uint("sequence_number", o.SequenceNumber)
	e.Close()
}

// MarshalJSON writes the observation.
func (o SavingsObservationV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(512, o.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (o *SavingsObservationV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "SavingsObservationV1", o.decode)
}

// ContextBalanceV1 is the token balance of one side of a savings receipt (hive.md §7.6);
// strict.
type ContextBalanceV1 struct {
	OriginalTokens       uint64 // `original_tokens`
	MaterializedTokens   uint64 // `materialized_tokens`
	DeliveredTokens      uint64 // `delivered_tokens`
	ProviderBilledTokens uint64 // `provider_billed_tokens`
}

// Validate checks materialized ≤ original, then delivered ≤ materialized (§7.6).
func (c *ContextBalanceV1) Validate() error {
	if c.MaterializedTokens > c.OriginalTokens {
		return verr("materialized_tokens exceeds original_tokens")
	}
	if c.DeliveredTokens > c.MaterializedTokens {
		return verr("delivered_tokens exceeds materialized_tokens")
	}
	return nil
}

var balanceFields = []string{"original_tokens", "materialized_tokens", "delivered_tokens", "provider_billed_tokens"}

func (c *ContextBalanceV1) decode(d *wire.Decoder) error {
	*c = ContextBalanceV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "original_tokens":
			seen |= 1 << 0
			return decodeU64(d, &c.OriginalTokens)
		case "materialized_tokens":
			seen |= 1 << 1
			return decodeU64(d, &c.MaterializedTokens)
		case "delivered_tokens":
			seen |= 1 << 2
			return decodeU64(d, &c.DeliveredTokens)
		case "provider_billed_tokens":
			seen |= 1 << 3
			return decodeU64(d, &c.ProviderBilledTokens)
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 15, balanceFields)
}

func (c *ContextBalanceV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Uint("original_tokens", c.OriginalTokens)
	e.Uint("materialized_tokens", c.MaterializedTokens)
	e.Uint("delivered_tokens", c.DeliveredTokens)
	e.Uint("provider_billed_tokens", c.ProviderBilledTokens)
	e.Close()
}

// MarshalJSON writes the balance.
func (c ContextBalanceV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(128, c.appendJSON)
}

// UnmarshalJSON decodes strictly (unknown members refused).
func (c *ContextBalanceV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "ContextBalanceV1", c.decode)
}

// SavingsReceiptV1 is a signed statement of savings between a baseline and a treatment
// (hive.md §7.6); strict. schema_version, the typed ids and the milliunits are checked while
// decoding.
type SavingsReceiptV1 struct {
	SchemaVersion              uint32            // `schema_version`: 1
	SavingsID                  string            // `savings_id`
	TaskID                     TaskId            // `task_id`
	BaselineReceiptID          ReceiptId         // `baseline_receipt_id`
	TreatmentReceiptID         ReceiptId         // `treatment_receipt_id`
	BaselineCostMicros         uint64            // `baseline_cost_micros`
	TreatmentCostMicros        uint64            // `treatment_cost_micros`
	AvoidedCostMicros          uint64            // `avoided_cost_micros`
	BaselineTokens             ContextBalanceV1  // `baseline_tokens`
	TreatmentTokens            ContextBalanceV1  // `treatment_tokens`
	TokenSavingsRatioMilli     Milliunit         // `token_savings_ratio_milli`
	QualityPreserved           bool              // `quality_preserved`
	QualityBaselineScoreMilli  Milliunit         // `quality_baseline_score_milli`
	QualityTreatmentScoreMilli Milliunit         // `quality_treatment_score_milli`
	MeasurementMethod          MeasurementMethod // `measurement_method`
	ContextStrategy            string            // `context_strategy`
	MethodologyVersion         string            // `methodology_version`
	EvidenceRefs               []EvidenceRefV1   // `evidence_refs` (not validated here)
	DecisionRefs               []string          // `decision_refs`
	Signature                  string            // `signature`
}

var receiptFields = []string{"schema_version", "savings_id", "task_id", "baseline_receipt_id", "treatment_receipt_id", "baseline_cost_micros", "treatment_cost_micros", "avoided_cost_micros", "baseline_tokens", "treatment_tokens", "token_savings_ratio_milli", "quality_preserved", "quality_baseline_score_milli", "quality_treatment_score_milli", "measurement_method", "context_strategy", "methodology_version", "evidence_refs", "decision_refs", "signature"}

// Validate is SavingsReceiptV1.validate() (§7.6), in order.
func (r *SavingsReceiptV1) Validate() error {
	if r.SchemaVersion != V1SchemaVersion {
		return schemaVersionError(uint64(r.SchemaVersion))
	}
	if err := r.BaselineTokens.Validate(); err != nil {
		return err
	}
	if err := r.TreatmentTokens.Validate(); err != nil {
		return err
	}
	for _, m := range []struct {
		v    Milliunit
		name string
	}{
		{r.TokenSavingsRatioMilli, "token_savings_ratio_milli"},
		{r.QualityBaselineScoreMilli, "quality_baseline_score_milli"},
		{r.QualityTreatmentScoreMilli, "quality_treatment_score_milli"},
	} {
		if m.v > MaxMilliunit {
			return verr(m.name + " must be between 0 and 1000")
		}
	}
	if r.AvoidedCostMicros > r.BaselineCostMicros {
		return verr("avoided_cost_micros exceeds baseline_cost_micros")
	}
	if r.QualityPreserved != (r.QualityTreatmentScoreMilli >= r.QualityBaselineScoreMilli) {
		return verr("quality_preserved does not match quality scores")
	}
	return nil
}

func (r *SavingsReceiptV1) decode(d *wire.Decoder) error {
	*r = SavingsReceiptV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "schema_version":
			seen |= 1 << 0
			v, err := d.Uint(uint64(^uint32(0)))
			if err != nil {
				return err
			}
			if v != uint64(V1SchemaVersion) {
				return d.Wrap(schemaVersionError(v))
			}
			r.SchemaVersion = uint32(v)
			return nil
		case "savings_id":
			seen |= 1 << 1
			return decodeString(d, &r.SavingsID)
		case "task_id":
			seen |= 1 << 2
			s, err := decodeTypedID(d, "TaskId")
			r.TaskID = TaskId(s)
			return err
		case "baseline_receipt_id":
			seen |= 1 << 3
			s, err := decodeTypedID(d, "ReceiptId")
			r.BaselineReceiptID = ReceiptId(s)
			return err
		case "treatment_receipt_id":
			seen |= 1 << 4
			s, err := decodeTypedID(d, "ReceiptId")
			r.TreatmentReceiptID = ReceiptId(s)
			return err
		case "baseline_cost_micros":
			seen |= 1 << 5
			return decodeU64(d, &r.BaselineCostMicros)
		case "treatment_cost_micros":
			seen |= 1 << 6
			return decodeU64(d, &r.TreatmentCostMicros)
		case "avoided_cost_micros":
			seen |= 1 << 7
			return decodeU64(d, &r.AvoidedCostMicros)
		case "baseline_tokens":
			seen |= 1 << 8
			return r.BaselineTokens.decode(d)
		case "treatment_tokens":
			seen |= 1 << 9
			return r.TreatmentTokens.decode(d)
		case "token_savings_ratio_milli":
			seen |= 1 << 10
			return decodeMilliunit(d, &r.TokenSavingsRatioMilli)
		case "quality_preserved":
			seen |= 1 << 11
			v, err := d.Bool()
			r.QualityPreserved = v
			return err
		case "quality_baseline_score_milli":
			seen |= 1 << 12
			return decodeMilliunit(d, &r.QualityBaselineScoreMilli)
		case "quality_treatment_score_milli":
			seen |= 1 << 13
			return decodeMilliunit(d, &r.QualityTreatmentScoreMilli)
		case "measurement_method":
			seen |= 1 << 14
			v, err := decodeEnum[MeasurementMethod](d, measurementMethods)
			r.MeasurementMethod = v
			return err
		case "context_strategy":
			seen |= 1 << 15
			return decodeString(d, &r.ContextStrategy)
		case "methodology_version":
			seen |= 1 << 16
			return decodeString(d, &r.MethodologyVersion)
		case "evidence_refs":
			seen |= 1 << 17
			return decodeEvidenceList(d, &r.EvidenceRefs)
		case "decision_refs":
			seen |= 1 << 18
			return decodeStringList(d, &r.DecisionRefs)
		case "signature":
			seen |= 1 << 19
			return decodeString(d, &r.Signature)
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<20-1, receiptFields)
}

func (r *SavingsReceiptV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Uint("schema_version", uint64(r.SchemaVersion))
	e.Str("savings_id", r.SavingsID)
	e.Str("task_id", string(r.TaskID))
	e.Str("baseline_receipt_id", string(r.BaselineReceiptID))
	e.Str("treatment_receipt_id", string(r.TreatmentReceiptID))
	e.Uint("baseline_cost_micros", r.BaselineCostMicros)
	e.Uint("treatment_cost_micros", r.TreatmentCostMicros)
	e.Uint("avoided_cost_micros", r.AvoidedCostMicros)
	e.Key("baseline_tokens")
	r.BaselineTokens.appendJSON(e)
	e.Key("treatment_tokens")
	r.TreatmentTokens.appendJSON(e)
	e.Uint("token_savings_ratio_milli", uint64(r.TokenSavingsRatioMilli))
	e.Bool("quality_preserved", r.QualityPreserved)
	e.Uint("quality_baseline_score_milli", uint64(r.QualityBaselineScoreMilli))
	e.Uint("quality_treatment_score_milli", uint64(r.QualityTreatmentScoreMilli))
	appendEnum(e, "measurement_method", r.MeasurementMethod, "MeasurementMethod", measurementMethods)
	e.Str("context_strategy", r.ContextStrategy)
	e.Str("methodology_version", r.MethodologyVersion)
	appendEvidenceList(e, "evidence_refs", r.EvidenceRefs)
	appendStringList(e, "decision_refs", r.DecisionRefs)
	e.Str("signature", r.Signature)
	e.Close()
}

// MarshalJSON writes the receipt.
func (r SavingsReceiptV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(768, r.appendJSON)
}

// UnmarshalJSON decodes strictly (unknown members refused; decode-time checks applied).
func (r *SavingsReceiptV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "SavingsReceiptV1", r.decode)
}
