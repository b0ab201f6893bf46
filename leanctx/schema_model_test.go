package leanctx_test

import (
	"encoding/hex"
	"fmt"
	"github.com/agentwire/agentwire/internal/schematest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/hive/registry"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/leanctx"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// corpusDir is the hive conformance corpus, which holds the leanctx cases
// (conformance/hive/README.md).
const corpusDir = "../conformance/hive"

// modelURL is where the tests register the model with the schema compiler.
const modelURL = "https://agentwire.dev/schemas/leanctx.model.json"

// notExpressible lists the corpus documents the codecs refuse and the schema accepts, each with
// the class of rule it cannot express; TestWireSchemaCorpus checks that the list is exact.
var notExpressible = map[string]string{
	// Int128 (§7.5): the token rule and the range.
	"9.58b i128 max plus one":    numberBound,
	"money i128 min minus one":   numberBound,
	"9.59c exponent coefficient": intSpelling,
	"money coefficient -1.0":     intSpelling,
	// ExtensionsV1 (§7.1), checked while decoding an EvidenceRefV1.
	"evidence blank extension key":                outsideSubset + ": extension keys pass validate_id (propertyNames)",
	"evidence extension key of 257 bytes":         outsideSubset + ": extension keys pass validate_id (propertyNames)",
	"evidence extension nested empty key":         outsideSubset + ": nested extension object keys pass validate_id (propertyNames)",
	"evidence 257 extensions":                     outsideSubset + ": at most 256 extensions (maxProperties)",
	"evidence extension object of 257":            outsideSubset + ": extension objects have at most 256 members (maxProperties)",
	"evidence extension object count before keys": outsideSubset + ": extension objects have at most 256 members (maxProperties)",
	"evidence extension depth 9":                  outsideSubset + ": extension values nest at most 8 deep (a recursive definition per level)",
	"evidence extension array of 257":             outsideSubset + ": extension arrays have at most 256 items, at any depth (a recursive definition per level)",
	"evidence extension string of 65537":          byteLimit + ": extension strings are at most 65536 bytes",
	"evidence extension serialized over limit":    byteLimit + ": an extension value is at most 65536 bytes compact",
	"evidence extension U+2028 counts 3 bytes":    byteLimit + ": an extension value is at most 65536 bytes compact",
	// Relations between members (§7.6).
	"context balance materialized above original":  crossMember + ": materialized_tokens ≤ original_tokens",
	"context balance delivered above materialized": crossMember + ": delivered_tokens ≤ materialized_tokens",
	"savings receipt baseline balance":             crossMember + ": delivered_tokens ≤ materialized_tokens",
	"savings receipt treatment balance":            crossMember + ": materialized_tokens ≤ original_tokens",
	"savings receipt balance check before avoided": crossMember + ": delivered_tokens ≤ materialized_tokens",
	"9.64 avoided above baseline":                  crossMember + ": avoided_cost_micros ≤ baseline_cost_micros",
	"savings receipt quality mismatch":             crossMember + ": quality_preserved matches the scores",
}

// The classes of rules the schema cannot express.
const (
	crossMember   = "cross-member rule"
	intSpelling   = "integer spelling (D6, §7.5): JSON Schema's integer is a value, so 1.0 and 1e3 pass"
	numberBound   = "u64 or i128 bound: not emitted, IEEE doubles cannot spell it"
	byteLimit     = "byte-length limit"
	outsideSubset = "keyword outside the TypeScript renderer's subset"
)

// docCase is one document case of the corpus.
type docCase struct {
	name, typ string
	doc       []byte
	valid     bool
}

func loadCases(t testing.TB) []docCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus under %s: %v", corpusDir, err)
	}
	var out []docCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(raw, f)
		if err != nil {
			t.Fatal(err)
		}
		cases, _ := root.Get("cases")
		for _, cv := range cases.([]any) {
			c := cv.(*jsonvalue.Object)
			typ, _ := c.Get("type")
			if typ == nil {
				continue // a function case
			}
			name, _ := c.Get("name")
			exp, _ := c.Get("expect")
			valid, _ := exp.(*jsonvalue.Object).Get("valid")
			dc := docCase{name: name.(string), typ: typ.(string), valid: valid == true}
			if d, ok := c.Get("document"); ok {
				dc.doc = []byte(d.(string))
			} else if h, ok := c.Get("document_hex"); ok {
				if dc.doc, err = hex.DecodeString(h.(string)); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, dc)
		}
	}
	return out
}

// compileDefs compiles the model and returns a lookup of its compiled definitions ("" is the
// root).
func compileDefs(t testing.TB) func(def string) *jsonschema.Schema {
	return schematest.CompileDefs(t, modelURL, leanctx.WireSchema())
}

var verdict = schematest.Verdict

// TestWireSchemaCorpus replays the leanctx document cases of the corpus against the model:
// every document the codecs accept (registry.Check: decode, then Validate) is valid under
// $defs/<Type>; every refused document that parses as strict JSON is refused by it, except the
// listed ones.
func TestWireSchemaCorpus(t *testing.T) {
	def := compileDefs(t)
	corpus := schematest.Corpus{T: t, Who: "codec", ListName: "notExpressible", NotExpressible: notExpressible}
	for _, c := range loadCases(t) {
		typ, ok := registry.Lookup(c.typ)
		if !ok {
			t.Fatalf("%s: unknown TYPE %q", c.name, c.typ)
		}
		d, ok := strings.CutPrefix(typ.GoName, "leanctx.")
		if !ok {
			continue // a hive contract: hive/schema_model_test.go
		}
		_, err := typ.Check(c.doc)
		if (err == nil) != c.valid {
			t.Fatalf("%s: the corpus says valid=%v, the codec %v", c.name, c.valid, err)
		}
		corpus.Check(c.name, d, def(d), c.doc, c.valid, err)
	}
	corpus.Finish(30, 20)
}

// TestWireSchemaEnums checks the model's enumerations against the codecs: each value decodes as
// itself, in the spec's order, and any other string (here "Unknown" and a lowercased value) is a
// decode error.
func TestWireSchemaEnums(t *testing.T) {
	d, _ := leanctx.WireSchema().Get("$defs")
	defs := d.(*jsonvalue.Object)
	decoders := map[string]func([]byte) (string, error){
		"EvidenceKind":        decodeAs[leanctx.EvidenceKind],
		"SignatureStatus":     decodeAs[leanctx.SignatureStatus],
		"ExperimentArm":       decodeAs[leanctx.ExperimentArm],
		"DataClassification":  decodeAs[leanctx.DataClassification],
		"SideEffectPolicy":    decodeAs[leanctx.SideEffectPolicy],
		"GapReason":           decodeAs[leanctx.GapReason],
		"BillingPeriodStatus": decodeAs[leanctx.BillingPeriodStatus],
		"PolicyCriticality":   decodeAs[leanctx.PolicyCriticality],
		"ExpiryBehavior":      decodeAs[leanctx.ExpiryBehavior],
		"MeasurementMethod":   decodeAs[leanctx.MeasurementMethod],
	}
	for def, decode := range decoders {
		o, _ := defs.Get(def)
		e, _ := o.(*jsonvalue.Object).Get("enum")
		if len(e.([]any)) == 0 {
			t.Fatalf("%s has no enum", def)
		}
		for _, v := range e.([]any) {
			if got, err := decode([]byte(jsonvalue.Quote(v.(string)))); err != nil || got != v {
				t.Errorf("%s %q decodes as %q (%v)", def, v, got, err)
			}
			if _, err := decode([]byte(jsonvalue.Quote(strings.ToLower(v.(string)) + "!"))); err == nil {
				t.Errorf("%s accepts a value outside the enum", def)
			}
		}
		if _, err := decode([]byte(`"Unknown"`)); err == nil {
			t.Errorf("%s has a fallback", def)
		}
	}
}

func decodeAs[T ~string, P interface {
	*T
	UnmarshalJSON([]byte) error
}](data []byte) (string, error) {
	var v T
	err := P(&v).UnmarshalJSON(data)
	return string(v), err
}

// TestWireSchemaVerdicts pins schema verdicts on hand-written documents, one per rule the model
// expresses beyond plain member types, each also checked against the codecs.
func TestWireSchemaVerdicts(t *testing.T) {
	def := compileDefs(t)
	const ev = `"kind":"RuntimeLog","uri":"u","signature_status":"NotSigned"`
	const hex64 = "0123456789abcdef0123456789abcdef0123456789ABCDEF0123456789abcdef"
	tests := []struct {
		typ, doc string
		valid    bool
	}{
		{"evidence-ref", `{` + ev + `,"digest":"sha256:abc"}`, true},
		{"evidence-ref", `{` + ev + `,"digest":"sha256:abc","schema_version":null}`, true},
		{"evidence-ref", `{` + ev + `,"digest":"blake3:` + hex64 + `","schema_version":1}`, true},
		{"evidence-ref", `{` + ev + `,"digest":"` + hex64 + `","schema_version":1}`, true},
		{"evidence-ref", `{` + ev + `,"digest":"md5:` + hex64 + `","schema_version":1}`, false},
		{"evidence-ref", `{` + ev + `,"digest":"` + hex64 + `","schema_version":2}`, false},
		{"evidence-ref", `{` + ev + `,"digest":" "}`, false},
		{"evidence-ref", `{` + ev + `,"digest":"d","media_type":"\u0007"}`, false},
		{"evidence-ref", `{` + ev + `,"digest":"d","x-flag":{"a":[1,{"b":null}]}}`, true},
		{"money", `{"currency":"","coefficient":-0,"scale":255}`, true},
		{"money", `{"currency":"USD","coefficient":1,"scale":256}`, false},
		{"money", `{"currency":"USD","coefficient":null,"scale":0}`, false},
		{"usage-breakdown", `{"input_tokens":0,"output_tokens":0,"cached_input_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"other_units":null}`, false},
		{"usage-breakdown", `{"input_tokens":0,"output_tokens":0,"cached_input_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"other_units":[],"x":1}`, true},
		{"context-balance", `{"original_tokens":3,"materialized_tokens":2,"delivered_tokens":1,"provider_billed_tokens":9,"x":1}`, false},
		{"policy-classification", `{"criticality":"Low","expiry_behavior":"FailOpen","grace_period_seconds":0,"fallback_policy_ref":null,"last_known_good_allowed":false}`, true},
		{"evidence-gap-opened", `{"gap_id":"g","tenant_id":"t","source_instance_id":"i","first_missing_sequence":1,"last_missing_sequence":null,"started_at":"s","detected_at":"d","reason":"DiskFull","affected_event_types":[],"runtime_version":"r","previous_evidence_hash":"h","signature":"s"}`, true},
	}
	for _, tt := range tests {
		typ, _ := registry.Lookup(tt.typ)
		if _, err := typ.Check([]byte(tt.doc)); (err == nil) != tt.valid {
			t.Errorf("%s %s: the codec says %v, want valid=%v", tt.typ, tt.doc, err, tt.valid)
		}
		name := strings.TrimPrefix(typ.GoName, "leanctx.")
		if err := verdict(t, def(name), []byte(tt.doc)); (err == nil) != tt.valid {
			t.Errorf("%s %s: the schema says %v, want valid=%v", tt.typ, tt.doc, err, tt.valid)
		}
	}
}

// BenchmarkWireSchema measures building the model (the generator calls it once per render).
func BenchmarkWireSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		leanctx.WireSchema()
	}
}

// ExampleWireSchema prints the JSON Schema of a MoneyV1 coefficient.
func ExampleWireSchema() {
	defs, _ := leanctx.WireSchema().Get("$defs")
	i128, _ := defs.(*jsonvalue.Object).Get("Int128")
	typ, _ := i128.(*jsonvalue.Object).Get("type")
	fmt.Println(typ)
	// Output: integer
}
