package gen

import (
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/leanctx"
)

// leanctxContract renders schema/leanctx.schema.json and ts/leanctx.gen.ts from the declarative
// wire model of package leanctx (leanctx.WireSchema), which a test there checks against the
// codecs on the conformance corpus (the leanctx cases of conformance/hive).
var leanctxContract = Contract{Name: "leanctx", Render: renderLeanctx}

// leanctxEnums are the model's enums, exported as readonly tuples beside their unions.
var leanctxEnums = []string{
	"EvidenceKind", "SignatureStatus", "ExperimentArm", "DataClassification", "SideEffectPolicy",
	"GapReason", "BillingPeriodStatus", "PolicyCriticality", "ExpiryBehavior", "MeasurementMethod",
}

// LeanctxSchema returns schema/leanctx.schema.json as a value: the header members, then
// leanctx.WireSchema.
func LeanctxSchema() *jsonvalue.Object {
	return SchemaDocument("leanctx", "LeanCtxDocument", leanctx.WireSchema())
}

func renderLeanctx() ([]File, error) {
	return Files("leanctx", LeanctxSchema(), TSOptions{
		Doc: "The core contracts of lean-ctx-protocol 0.4.0 (hive.md §7): evidence, experiment assignments, " +
			"evidence gaps, money, policy, savings and usage. Rendered from leanctx.WireSchema in package " +
			"github.com/agentwire/agentwire/leanctx; the JSON Schema is schema/leanctx.schema.json. " +
			"Int128 and Uint64 values are JSON integers beyond JavaScript's 53-bit precision: parse them " +
			"losslessly.",
		Constants: []TSConst{
			{Name: "V1_SCHEMA_VERSION", Value: int64(leanctx.V1SchemaVersion), Doc: "The only supported `schema_version` (hive.md §7.1)."},
			{Name: "MAX_MILLIUNIT", Value: int64(leanctx.MaxMilliunit), Doc: "The largest milliunit (hive.md §7.1)."},
			{Name: "MAX_EXTENSION_FIELDS", Value: int64(leanctx.MaxExtensionFields), Doc: "The most extensions an EvidenceRefV1 retains (hive.md §7.1)."},
			{Name: "MAX_EXTENSION_DEPTH", Value: int64(leanctx.MaxExtensionDepth), Doc: "The deepest nesting of an extension value (hive.md §7.1)."},
			{Name: "MAX_EXTENSION_ITEMS", Value: int64(leanctx.MaxExtensionItems), Doc: "The most items or members of an extension array or object (hive.md §7.1)."},
			{Name: "MAX_EXTENSION_BYTES", Value: int64(leanctx.MaxExtensionBytes), Doc: "The byte limit of an extension string and of an extension value's compact form (hive.md §7.1)."},
		},
		Names: enumTuples(leanctxEnums),
	})
}
