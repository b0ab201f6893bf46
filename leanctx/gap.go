package leanctx

import "github.com/agentwire/agentwire/hive/wire"

// GapReason is why events went missing.
type GapReason string

// GapReason values.
const (
	GapReasonBufferFull         GapReason = "BufferFull"
	GapReasonNetworkTimeout     GapReason = "NetworkTimeout"
	GapReasonProcessCrash       GapReason = "ProcessCrash"
	GapReasonSidecarUnreachable GapReason = "SidecarUnreachable"
	GapReasonDiskFull           GapReason = "DiskFull"
)

var gapReasons = []string{"BufferFull", "NetworkTimeout", "ProcessCrash", "SidecarUnreachable", "DiskFull"}

// MarshalJSON writes the value; an unknown value fails.
func (r GapReason) MarshalJSON() ([]byte, error) { return enumMarshal(r, "GapReason", gapReasons) }

// UnmarshalJSON refuses any other string.
func (r *GapReason) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "GapReason", gapReasons, r)
}

// BillingPeriodStatus says how a gap affects billing.
type BillingPeriodStatus string

// BillingPeriodStatus values.
const (
	BillingPeriodStatusComplete    BillingPeriodStatus = "Complete"
	BillingPeriodStatusIncomplete  BillingPeriodStatus = "Incomplete"
	BillingPeriodStatusNonBillable BillingPeriodStatus = "NonBillable"
)

var billingStatuses = []string{"Complete", "Incomplete", "NonBillable"}

// MarshalJSON writes the value; an unknown value fails.
func (s BillingPeriodStatus) MarshalJSON() ([]byte, error) {
	return enumMarshal(s, "BillingPeriodStatus", billingStatuses)
}

// UnmarshalJSON refuses any other string.
func (s *BillingPeriodStatus) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "BillingPeriodStatus", billingStatuses, s)
}

// EvidenceGapOpenedV1 is the append-only audit event that opens an evidence gap (hive.md
// §7.3); lenient, no Validate.
type EvidenceGapOpenedV1 struct {
	GapID                string    // `gap_id`
	TenantID             string    // `tenant_id`
	SourceInstanceID     string    // `source_instance_id`
	FirstMissingSequence uint64    // `first_missing_sequence`
	LastMissingSequence  *uint64   // `last_missing_sequence` (optional, omitted when absent)
	StartedAt            string    // `started_at`
	DetectedAt           string    // `detected_at`
	Reason               GapReason // `reason`
	AffectedEventTypes   []string  // `affected_event_types`
	RuntimeVersion       string    // `runtime_version`
	PreviousEvidenceHash string    // `previous_evidence_hash`
	Signature            string    // `signature`
}

var gapOpenedFields = []string{"gap_id", "tenant_id", "source_instance_id", "first_missing_sequence", "last_missing_sequence", "started_at", "detected_at", "reason", "affected_event_types", "runtime_version", "previous_evidence_hash", "signature"}

func (g *EvidenceGapOpenedV1) decode(d *wire.Decoder) error {
	*g = EvidenceGapOpenedV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "gap_id":
			seen |= 1 << 0
			return decodeString(d, &g.GapID)
		case "tenant_id":
			seen |= 1 << 1
			return decodeString(d, &g.TenantID)
		case "source_instance_id":
			seen |= 1 << 2
			return decodeString(d, &g.SourceInstanceID)
		case "first_missing_sequence":
			seen |= 1 << 3
			return decodeU64(d, &g.FirstMissingSequence)
		case "last_missing_sequence":
			return d.OptUint(&g.LastMissingSequence, ^uint64(0))
		case "started_at":
			seen |= 1 << 5
			return decodeString(d, &g.StartedAt)
		case "detected_at":
			seen |= 1 << 6
			return decodeString(d, &g.DetectedAt)
		case "reason":
			seen |= 1 << 7
			v, err := decodeEnum[GapReason](d, gapReasons)
			g.Reason = v
			return err
		case "affected_event_types":
			seen |= 1 << 8
			return decodeStringList(d, &g.AffectedEventTypes)
		case "runtime_version":
			seen |= 1 << 9
			return decodeString(d, &g.RuntimeVersion)
		case "previous_evidence_hash":
			seen |= 1 << 10
			return decodeString(d, &g.PreviousEvidenceHash)
		case "signature":
			seen |= 1 << 11
			return decodeString(d, &g.Signature)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<12-1-1<<4, gapOpenedFields)
}

func (g *EvidenceGapOpenedV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("gap_id", g.GapID)
	e.Str("tenant_id", g.TenantID)
	e.Str("source_instance_id", g.SourceInstanceID)
	e.Uint("first_missing_sequence", g.FirstMissingSequence)
	e.OptUint("last_missing_sequence", g.LastMissingSequence)
	e.Str("started_at", g.StartedAt)
	e.Str("detected_at", g.DetectedAt)
	appendEnum(e, "reason", g.Reason, "GapReason", gapReasons)
	appendStringList(e, "affected_event_types", g.AffectedEventTypes)
	e.Str("runtime_version", g.RuntimeVersion)
	e.Str("previous_evidence_hash", g.PreviousEvidenceHash)
	e.Str("signature", g.Signature)
	e.Close()
}

// MarshalJSON writes the event.
func (g EvidenceGapOpenedV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(384, g.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (g *EvidenceGapOpenedV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "EvidenceGapOpenedV1", g.decode)
}

// EvidenceGapClosedV1 closes an evidence gap (hive.md §7.3); lenient, no Validate.
type EvidenceGapClosedV1 struct {
	GapID               string              // `gap_id`
	LastMissingSequence uint64              // `last_missing_sequence`
	EndedAt             string              // `ended_at`
	ResolvedAt          string              // `resolved_at`
	TotalMissingEvents  uint64              // `total_missing_events`
	BillingPeriodStatus BillingPeriodStatus // `billing_period_status`
	Signature           string              // `signature`
}

var gapClosedFields = []string{"gap_id", "last_missing_sequence", "ended_at", "resolved_at", "total_missing_events", "billing_period_status", "signature"}

func (g *EvidenceGapClosedV1) decode(d *wire.Decoder) error {
	*g = EvidenceGapClosedV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "gap_id":
			seen |= 1 << 0
			return decodeString(d, &g.GapID)
		case "last_missing_sequence":
			seen |= 1 << 1
			return decodeU64(d, &g.LastMissingSequence)
		case "ended_at":
			seen |= 1 << 2
			return decodeString(d, &g.EndedAt)
		case "resolved_at":
			seen |= 1 << 3
			return decodeString(d, &g.ResolvedAt)
		case "total_missing_events":
			seen |= 1 << 4
			return decodeU64(d, &g.TotalMissingEvents)
		case "billing_period_status":
			seen |= 1 << 5
			v, err := decodeEnum[BillingPeriodStatus](d, billingStatuses)
			g.BillingPeriodStatus = v
			return err
		case "signature":
			seen |= 1 << 6
			return decodeString(d, &g.Signature)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<7-1, gapClosedFields)
}

func (g *EvidenceGapClosedV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("gap_id", g.GapID)
	e.Uint("last_missing_sequence", g.LastMissingSequence)
	e.Str("ended_at", g.EndedAt)
	e.Str("resolved_at", g.ResolvedAt)
	e.Uint("total_missing_events", g.TotalMissingEvents)
	appendEnum(e, "billing_period_status", g.BillingPeriodStatus, "BillingPeriodStatus", billingStatuses)
	e.Str("signature", g.Signature)
	e.Close()
}

// MarshalJSON writes the event.
func (g EvidenceGapClosedV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(256, g.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (g *EvidenceGapClosedV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "EvidenceGapClosedV1", g.decode)
}
