package leanctx

import (
	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/internal/schemabuild"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file is the declarative description of the core contracts of hive.md §7 that the code
// generator (cmd/agentwire-gen, package internal/gen) renders as schema/leanctx.schema.json and
// ts/leanctx.gen.ts. The codecs are hand-written (no struct tags), so reflection cannot describe
// the wire shapes; this model does, in JSON Schema draft 2020-12, built from the codecs' own
// value lists and limits. schema_model_test.go replays the conformance corpus
// (conformance/hive, the leanctx TYPEs of hive/registry) against it: every document the codecs
// accept is valid under the schema, every refusal it can express is refused by it, and the
// refusals it cannot express are listed there by case name.
//
// Conventions: required members are `required`; optional ones may be absent or null (D3);
// defaulted lists (`other_units`) may be absent but not null. SavingsReceiptV1 and
// ContextBalanceV1 are strict (`additionalProperties: false`); the other types accept unknown
// members, and EvidenceRefV1 retains them. Enums are PascalCase (MeasurementMethod snake_case)
// with no Unknown fallback: exactly `enum`. Money is a MoneyV1 whose coefficient is an Int128
// written as a bare JSON integer, never a float.
//
// What the schema cannot express, and the codecs alone enforce (the test lists each corpus
// case): the strict JSON text rules; integer spelling (D6 and the Int128 token rule: JSON
// Schema's integer is a value, so `1.0` and `1e3` pass); the u64 and i128 bounds (stated in
// descriptions: the generator's JSON model holds numbers as IEEE doubles, which cannot spell
// them); validate_id's 256-byte bound (emitted as 256 characters); the EvidenceRefV1 extension
// rules (key names, counts, depth and byte sizes: propertyNames, maxProperties and recursive
// byte limits are outside the TypeScript renderer's keyword subset); and the cross-member rules
// of ContextBalanceV1 and SavingsReceiptV1 (token order, avoided ≤ baseline cost,
// quality_preserved matching the scores).

// WireSchema returns the JSON Schema (draft 2020-12) description of the core contracts (hive.md
// §7). The root validates one core-contract document (an assignment, an evidence gap event, a
// savings observation or a savings receipt); `$defs/<Type>` validates a document of each type as
// `agentwire hive validate --type` does (decode, then Validate when the type has one). The
// document has no `$schema`, `$id` or `title`: the generator adds them. Each call returns a
// fresh value.
func WireSchema() *jsonvalue.Object {
	defs := jsonvalue.NewObject(48)

	// §7.1 shared building blocks.
	id := func(description string) *jsonvalue.Object {
		return schema(description, "type", "string", "minLength", 1.0, "maxLength", float64(hive.MaxIdentifierLength),
			"pattern", hive.IdentifierPattern)
	}
	defs.Set("BoundedString", id("A string passing validate_bounded_string (hive.md §1.2, §7.1): not blank, at "+
		"most 256 bytes of UTF-8 (bounded here at 256 characters), no control character."))
	defs.Set("TaskId", id("A task id, checked while decoding with the §1.2 rule named TaskId (hive.md §7.1)."))
	defs.Set("ReceiptId", id("A receipt id, checked while decoding with the §1.2 rule named ReceiptId (hive.md §7.1)."))
	defs.Set("Uint64", schema("An unsigned 64-bit integer (Rust u64): a JSON number without sign, fraction or "+
		"exponent, 0 to 18446744073709551615 (D6; the upper bound is stated here, not as `maximum`). "+
		"Values beyond 2^53 lose precision as a JavaScript number; parse them losslessly.",
		"type", "integer", "minimum", 0.0))
	defs.Set("Milliunit", schema("Thousandths, 0 to 1000 (a u16 checked while decoding: `milliunit must be "+
		"between 0 and 1000`).", "type", "integer", "minimum", 0.0, "maximum", float64(MaxMilliunit)))
	defs.Set("SchemaVersion", schema("V1_SCHEMA_VERSION: the only supported schema_version (a u32).", "const",
		float64(V1SchemaVersion)))
	defs.Set("Int128", schema("A signed 128-bit integer (Rust i128), written as a bare JSON number: an optional "+
		"-, then digits without leading zeros; no quotes, fraction or exponent (hive.md §7.5). Range "+
		MinInt128.String()+" to "+MaxInt128.String()+" (stated here, not as minimum/maximum). It "+
		"never passes through a float: parse it losslessly (a JavaScript number keeps 53 bits).",
		"type", "integer"))

	// §7.2 evidence.
	defs.Set("EvidenceKind", enumSchema("The kind of an evidence reference (hive.md §7.2). No fallback.", evidenceKinds))
	defs.Set("SignatureStatus", enumSchema("The signature status of an evidence reference (hive.md §7.2). No fallback.", signatureStatuses))
	evidence := func(doc string, versioned, checked bool) *jsonvalue.Object {
		var version member
		digest := ref("BoundedString", "validate_bounded_string as `evidence digest`; legacy digests such as sha256:abc pass.")
		uri := ref("BoundedString", "validate_bounded_string as `evidence uri`.")
		media := ref("BoundedString", "validate_bounded_string as `evidence media_type`.")
		switch {
		case !checked:
			version = opt("schema_version", schema("A u32, not checked on decode.", "type", "integer",
				"minimum", 0.0, "maximum", 4294967295.0))
			digest, uri, media = str(""), str(""), str("")
		case versioned:
			version = req("schema_version", ref("SchemaVersion", "Present: must be 1."))
			digest = schema("With schema_version: one optional sha256: or blake3: prefix, then exactly 64 hex "+
				"digits (either case).", "type", "string", "pattern", "^(?:sha256:|blake3:)?[0-9A-Fa-f]{64}$")
		default:
			version = opt("schema_version", schema("Absent (or null).", "type", "null"))
		}
		o := object(doc, lenient,
			version,
			req("kind", ref("EvidenceKind", "")),
			req("uri", uri),
			req("digest", digest),
			req("signature_status", ref("SignatureStatus", "")),
			opt("media_type", media))
		o.Set("additionalProperties", schema("Any other member is an extension, kept and re-emitted (hive.md "+
			"§7.1): its key passes validate_id, at most 256 of them, values nested at most 8 deep with at "+
			"most 256 items or members and 65536 bytes."))
		return o
	}
	defs.Set("EvidenceRefV1", schema("A reference to a piece of evidence (hive.md §7.2), validated: with "+
		"schema_version (a supported 64-digit digest) or without (a legacy digest). Lenient; unknown "+
		"members are retained as extensions.", "oneOf", refs("EvidenceRefVersioned", "EvidenceRefLegacy")))
	defs.Set("EvidenceRefVersioned", evidence("An EvidenceRefV1 with schema_version 1.", true, true))
	defs.Set("EvidenceRefLegacy", evidence("An EvidenceRefV1 without schema_version.", false, true))
	defs.Set("EvidenceRefV1Unchecked", evidence("An EvidenceRefV1 as a savings observation or receipt carries it: "+
		"decoded (extensions checked), not validated (hive.md §7.6).", false, false))

	// §7.3 experiment, gap, policy, usage.
	enums := []struct {
		name, doc string
		values    []string
	}{
		{"ExperimentArm", "The arm of an experiment assignment.", experimentArms},
		{"DataClassification", "The data classification of an experiment assignment.", dataClassifications},
		{"SideEffectPolicy", "The side-effect policy of an experiment assignment.", sideEffectPolicies},
		{"GapReason", "Why events went missing.", gapReasons},
		{"BillingPeriodStatus", "How an evidence gap affects billing.", billingStatuses},
		{"PolicyCriticality", "The criticality of a policy.", policyCriticalities},
		{"ExpiryBehavior", "How a policy fails when it expires.", expiryBehaviors},
	}
	for _, e := range enums {
		defs.Set(e.name, enumSchema(e.doc+" (hive.md §7.3). No fallback: any other string is a decode error.", e.values))
	}
	strList := func(d string) *jsonvalue.Object { return schema(d, "type", "array", "items", str("")) }
	defs.Set("ExperimentAssignmentV1", object("Assigns a subject to an experiment arm (hive.md §7.3); it "+
		"arrives signed, and the runtime executes it and never decides. Lenient, no Validate.", lenient,
		req("experiment_id", str("")), req("subject_id", str("")),
		req("arm", ref("ExperimentArm", "")),
		req("configuration_ref", str("")),
		req("expires_at", str("A timestamp, not checked; producers SHOULD write the UtcTimestamp form.")),
		req("max_incremental_cost", ref("MoneyV1", "")),
		req("allowed_providers", strList("Always written.")),
		req("allowed_models", strList("Always written.")),
		req("data_classification", ref("DataClassification", "")),
		req("side_effect_policy", ref("SideEffectPolicy", "")),
		req("kill_switch_ref", str("")), req("signature", str(""))))
	defs.Set("EvidenceGapOpenedV1", object("The append-only audit event that opens an evidence gap (hive.md "+
		"§7.3). Lenient, no Validate.", lenient,
		req("gap_id", str("")), req("tenant_id", str("")), req("source_instance_id", str("")),
		req("first_missing_sequence", ref("Uint64", "")),
		opt("last_missing_sequence", ref("Uint64", "Omitted when absent.")),
		req("started_at", str("")), req("detected_at", str("")),
		req("reason", ref("GapReason", "")),
		req("affected_event_types", strList("")),
		req("runtime_version", str("")), req("previous_evidence_hash", str("")), req("signature", str(""))))
	defs.Set("EvidenceGapClosedV1", object("Closes an evidence gap (hive.md §7.3). Lenient, no Validate.", lenient,
		req("gap_id", str("")),
		req("last_missing_sequence", ref("Uint64", "")),
		req("ended_at", str("")), req("resolved_at", str("")),
		req("total_missing_events", ref("Uint64", "")),
		req("billing_period_status", ref("BillingPeriodStatus", "")),
		req("signature", str(""))))
	defs.Set("PolicyClassification", object("How a policy fails when it expires (hive.md §7.3). Lenient, no "+
		"Validate.", lenient,
		req("criticality", ref("PolicyCriticality", "")),
		req("expiry_behavior", ref("ExpiryBehavior", "")),
		req("grace_period_seconds", ref("Uint64", "")),
		opt("fallback_policy_ref", str("Omitted when absent.")),
		req("last_known_good_allowed", schema("", "type", "boolean"))))
	tokens := func(name string) member { return req(name, ref("Uint64", "")) }
	defs.Set("UsageBreakdownV1", object("The usage of one call (hive.md §7.3). Lenient, no Validate.", lenient,
		tokens("input_tokens"), tokens("output_tokens"), tokens("cached_input_tokens"),
		tokens("cache_write_tokens"), tokens("reasoning_tokens"),
		dflt("other_units", schema("Defaulted (absent decodes as empty, null is refused) and omitted when empty.",
			"type", "array", "items", ref("MeasuredUnitV1", "")))))
	defs.Set("MeasuredUnitV1", object("A non-token unit of usage (hive.md §7.3). Lenient.", lenient,
		req("unit_type", str("")), req("quantity", ref("Uint64", ""))))

	// §7.4 money.
	defs.Set("MoneyV1", object("An amount of money (hive.md §7.4): coefficient × 10^-scale, sub-cent "+
		"precision, never a float; rounding to legal minor units happens only at invoice time. Lenient.", lenient,
		req("currency", str("CurrencyCode: ISO 4217 by convention, not checked.")),
		req("coefficient", ref("Int128", "")),
		req("scale", schema("A u8.", "type", "integer", "minimum", 0.0, "maximum", 255.0))))

	// §7.6 savings.
	defs.Set("MeasurementMethod", enumSchema("How savings were measured (hive.md §7.6): snake_case, no "+
		"fallback.", measurementMethods))
	defs.Set("SavingsObservationV1", object("The usage and cost of one optimized call next to its original "+
		"(hive.md §7.6). Lenient, no Validate.", lenient,
		req("observation_id", str("")), req("provider_id", str("")), req("model_id", str("")),
		req("original_usage", ref("UsageBreakdownV1", "")),
		req("actual_usage", ref("UsageBreakdownV1", "")),
		req("local_cost_estimate", ref("MoneyV1", "")),
		req("evidence_refs", schema("Not validated here.", "type", "array", "items", ref("EvidenceRefV1Unchecked", ""))),
		req("observed_at", str("")), req("runtime_version", str("")),
		req("sequence_number", ref("Uint64", ""))))
	defs.Set("ContextBalanceV1", object("The token balance of one side of a savings receipt (hive.md §7.6). "+
		"Strict; validated: materialized_tokens ≤ original_tokens and delivered_tokens ≤ "+
		"materialized_tokens.", strict,
		tokens("original_tokens"), tokens("materialized_tokens"), tokens("delivered_tokens"),
		tokens("provider_billed_tokens")))
	defs.Set("SavingsReceiptV1", object("A signed statement of savings between a baseline and a treatment "+
		"(hive.md §7.6). Strict; schema_version, the typed ids and the milliunits are checked while "+
		"decoding. Validated: both balances, avoided_cost_micros ≤ baseline_cost_micros, and "+
		"quality_preserved equal to (quality_treatment_score_milli ≥ quality_baseline_score_milli).", strict,
		req("schema_version", ref("SchemaVersion", "Checked while decoding: `unsupported schema_version N; expected 1`.")),
		req("savings_id", str("")),
		req("task_id", ref("TaskId", "")),
		req("baseline_receipt_id", ref("ReceiptId", "")),
		req("treatment_receipt_id", ref("ReceiptId", "")),
		req("baseline_cost_micros", ref("Uint64", "")),
		req("treatment_cost_micros", ref("Uint64", "")),
		req("avoided_cost_micros", ref("Uint64", "At most baseline_cost_micros.")),
		req("baseline_tokens", ref("ContextBalanceV1", "")),
		req("treatment_tokens", ref("ContextBalanceV1", "")),
		req("token_savings_ratio_milli", ref("Milliunit", "")),
		req("quality_preserved", schema("Whether quality_treatment_score_milli ≥ quality_baseline_score_milli.", "type", "boolean")),
		req("quality_baseline_score_milli", ref("Milliunit", "")),
		req("quality_treatment_score_milli", ref("Milliunit", "")),
		req("measurement_method", ref("MeasurementMethod", "")),
		req("context_strategy", str("")), req("methodology_version", str("")),
		req("evidence_refs", schema("Not validated here.", "type", "array", "items", ref("EvidenceRefV1Unchecked", ""))),
		req("decision_refs", strList("")),
		req("signature", str(""))))

	defs.Set("LeanCtxDocument", schema("One core-contract document (hive.md §7): an experiment assignment, an "+
		"evidence gap event, a savings observation or a savings receipt.", "anyOf",
		refs("ExperimentAssignmentV1", "EvidenceGapOpenedV1", "EvidenceGapClosedV1", "SavingsObservationV1",
			"SavingsReceiptV1")))

	return jsonvalue.ObjectOf(
		"description", "The core contracts of lean-ctx-protocol 0.4.0 (hive.md §7): evidence, experiment "+
			"assignments, evidence gaps, money, policy, savings and usage. The root validates one "+
			"core-contract document; $defs/<Type> validates a document of each contract type (decoded, "+
			"then validated when the type has a Validate).",
		"$ref", "#/$defs/LeanCtxDocument",
		"$defs", defs,
	)
}

// ---------------------------------------------------------------------------------------------
// Building blocks: package internal/schemabuild, shared with package hive's model.

type member = schemabuild.Member

const (
	strict  = schemabuild.Strict
	lenient = schemabuild.Lenient
)

var (
	req    = schemabuild.Req
	opt    = schemabuild.Opt
	dflt   = schemabuild.Dflt
	schema = schemabuild.Schema
	object = schemabuild.Object
	ref    = schemabuild.Ref
	refs   = schemabuild.Refs
	str    = schemabuild.Str
)

func enumSchema(description string, values []string) *jsonvalue.Object {
	vals := make([]any, len(values))
	for i, v := range values {
		vals[i] = v
	}
	return schema(description, "type", "string", "enum", vals)
}
