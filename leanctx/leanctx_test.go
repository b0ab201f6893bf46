package leanctx

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/hive"
)

func TestInt128(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"0", "0", ""},
		{"-0", "0", ""},
		{"1", "1", ""},
		{"-1", "-1", ""},
		{"9223372036854775807", "9223372036854775807", ""},
		{"9223372036854775808", "9223372036854775808", ""},
		{"-9223372036854775808", "-9223372036854775808", ""},
		{"-9223372036854775809", "-9223372036854775809", ""},
		{"18446744073709551615", "18446744073709551615", ""},
		{"18446744073709551616", "18446744073709551616", ""},
		{"-18446744073709551616", "-18446744073709551616", ""},
		{"100000000000000000000000000000000000000", "100000000000000000000000000000000000000", ""},
		{"170141183460469231731687303715884105727", "170141183460469231731687303715884105727", ""},
		{"-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728", ""},
		{"170141183460469231731687303715884105728", "", "coefficient is outside the i128 range"},
		{"-170141183460469231731687303715884105729", "", "coefficient is outside the i128 range"},
		{"340282366920938463463374607431768211456", "", "coefficient is outside the i128 range"},
		{strings.Repeat("9", 400), "", "coefficient is outside the i128 range"},
		{"01", "", "coefficient must be an integer JSON number"},
		{"-01", "", "coefficient must be an integer JSON number"},
		{"1.0", "", "coefficient must be an integer JSON number"},
		{"1e3", "", "coefficient must be an integer JSON number"},
		{"+1", "", "coefficient must be an integer JSON number"},
		{"", "", "coefficient must be an integer JSON number"},
		{"-", "", "coefficient must be an integer JSON number"},
	}
	for _, tc := range tests {
		x, err := ParseInt128(tc.in)
		if errText(err) != tc.err || (err == nil && x.String() != tc.want) {
			t.Errorf("ParseInt128(%q) = %s, %v; want %s, %q", tc.in, x, err, tc.want, tc.err)
		}
		if err == nil {
			b, _ := new(big.Int).SetString(tc.want, 10)
			if x.Big().Cmp(b) != 0 {
				t.Errorf("%s: Big() = %s", tc.in, x.Big())
			}
		}
	}
	if Int128FromInt64(-5).String() != "-5" || Int128FromInt64(-5).Sign() != -1 || (Int128{}).Sign() != 0 || MaxInt128.Sign() != 1 {
		t.Fatal("sign")
	}
	if MinInt128.Cmp(MaxInt128) != -1 || MaxInt128.Cmp(MinInt128) != 1 || Int128FromInt64(3).Cmp(Int128FromInt64(3)) != 0 {
		t.Fatal("Cmp")
	}
	if _, err := Int128FromBig(new(big.Int).Add(MaxInt128.Big(), big.NewInt(1))); errText(err) != "coefficient is outside the i128 range" {
		t.Fatal(err)
	}
}

func TestMoneyDecoding(t *testing.T) {
	tests := []struct{ in, out, err string }{
		{`{"currency":"EUR","coefficient":170141183460469231731687303715884105727,"scale":2}`, `{"currency":"EUR","coefficient":170141183460469231731687303715884105727,"scale":2}`, ""},
		{`{"scale":255,"coefficient":-12,"currency":"JPY"}`, `{"currency":"JPY","coefficient":-12,"scale":255}`, ""},
		{`{"currency":"EUR","coefficient":170141183460469231731687303715884105728,"scale":2}`, "", "coefficient is outside the i128 range"},
		{`{"currency":"EUR","coefficient":"12","scale":2}`, "", "coefficient must be an integer JSON number"},
		{`{"currency":"EUR","coefficient":1.5,"scale":2}`, "", "coefficient must be an integer JSON number"},
		{`{"currency":"EUR","coefficient":1e3,"scale":2}`, "", "coefficient must be an integer JSON number"},
		{`{"currency":"EUR","coefficient":[1],"scale":2}`, "", "coefficient must be an integer JSON number"},
		{`{"currency":"EUR","coefficient":null,"scale":2}`, "", "MoneyV1.coefficient must not be null."},
		{`{"currency":"EUR","coefficient":12,"scale":256}`, "", "MoneyV1.scale must be an integer from 0 to 255."},
		{`{"currency":"EUR","coefficient":12}`, "", "MoneyV1.scale is missing."},
	}
	for _, tc := range tests {
		var m MoneyV1
		err := m.UnmarshalJSON([]byte(tc.in))
		var de *hive.DecodeError
		if tc.err != "" {
			if !errors.As(err, &de) || err.Error() != tc.err {
				t.Errorf("%s: %v, want decode error %q", tc.in, err, tc.err)
			}
			continue
		}
		out, merr := m.MarshalJSON()
		if err != nil || merr != nil || string(out) != tc.out {
			t.Errorf("%s: %s %v %v", tc.in, out, err, merr)
		}
	}
	m := MoneyV1{Currency: "EUR", Coefficient: Int128FromInt64(12345), Scale: 4}
	if m.Rat().RatString() != "2469/2000" {
		t.Fatalf("Rat = %s", m.Rat().RatString())
	}
}

func receipt() SavingsReceiptV1 {
	bal := ContextBalanceV1{OriginalTokens: 10000, MaterializedTokens: 6000, DeliveredTokens: 5000, ProviderBilledTokens: 5000}
	return SavingsReceiptV1{
		SchemaVersion: 1, SavingsID: "sav-1", TaskID: "task-1", BaselineReceiptID: "b", TreatmentReceiptID: "t",
		BaselineCostMicros: 90000, TreatmentCostMicros: 50000, AvoidedCostMicros: 40000,
		BaselineTokens: bal, TreatmentTokens: bal, TokenSavingsRatioMilli: 400, QualityPreserved: true,
		QualityBaselineScoreMilli: 900, QualityTreatmentScoreMilli: 910, MeasurementMethod: MeasurementMethodProviderReported,
		ContextStrategy: "lean", MethodologyVersion: "m-1", EvidenceRefs: []EvidenceRefV1{}, DecisionRefs: []string{}, Signature: "sig",
	}
}

func TestSavingsReceiptValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *SavingsReceiptV1)
		want string
	}{
		{"valid", func(r *SavingsReceiptV1) {}, ""},
		{"schema_version 2", func(r *SavingsReceiptV1) { r.SchemaVersion = 2 }, "unsupported schema_version 2; expected 1"},
		{"baseline materialized", func(r *SavingsReceiptV1) { r.BaselineTokens.MaterializedTokens = 10001 }, "materialized_tokens exceeds original_tokens"},
		{"baseline delivered", func(r *SavingsReceiptV1) { r.BaselineTokens.DeliveredTokens = 6001 }, "delivered_tokens exceeds materialized_tokens"},
		{"treatment delivered", func(r *SavingsReceiptV1) { r.TreatmentTokens.DeliveredTokens = 6001 }, "delivered_tokens exceeds materialized_tokens"},
		{"ratio 1001", func(r *SavingsReceiptV1) { r.TokenSavingsRatioMilli = 1001 }, "token_savings_ratio_milli must be between 0 and 1000"},
		{"baseline score 1001", func(r *SavingsReceiptV1) { r.QualityBaselineScoreMilli = 1001 }, "quality_baseline_score_milli must be between 0 and 1000"},
		{"treatment score 1001", func(r *SavingsReceiptV1) { r.QualityTreatmentScoreMilli = 1001 }, "quality_treatment_score_milli must be between 0 and 1000"},
		{"milliunits in order", func(r *SavingsReceiptV1) { r.TokenSavingsRatioMilli = 2000; r.QualityBaselineScoreMilli = 2000 }, "token_savings_ratio_milli must be between 0 and 1000"},
		{"avoided above baseline", func(r *SavingsReceiptV1) { r.AvoidedCostMicros = 90001 }, "avoided_cost_micros exceeds baseline_cost_micros"},
		{"avoided equals baseline", func(r *SavingsReceiptV1) { r.AvoidedCostMicros = 90000 }, ""},
		{"quality mismatch", func(r *SavingsReceiptV1) { r.QualityPreserved = false }, "quality_preserved does not match quality scores"},
		{"quality equal is preserved", func(r *SavingsReceiptV1) { r.QualityTreatmentScoreMilli = 900 }, ""},
		{"quality drop", func(r *SavingsReceiptV1) { r.QualityTreatmentScoreMilli = 899; r.QualityPreserved = false }, ""},
		{"tokens before milliunits", func(r *SavingsReceiptV1) { r.TreatmentTokens.MaterializedTokens = 1e6; r.TokenSavingsRatioMilli = 2000 }, "materialized_tokens exceeds original_tokens"},
	}
	for _, tc := range tests {
		r := receipt()
		tc.edit(&r)
		if got := errText(r.Validate()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	r := receipt()
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back SavingsReceiptV1
	if err := back.UnmarshalJSON(out); err != nil || back.Validate() != nil {
		t.Fatalf("%s: %v", out, err)
	}
}

func TestSavingsReceiptDecodeChecks(t *testing.T) {
	base, _ := receipt().MarshalJSON()
	swap := func(old, new string) string { return strings.Replace(string(base), old, new, 1) }
	tests := []struct{ in, want string }{
		{swap(`"schema_version":1`, `"schema_version":2`), "unsupported schema_version 2; expected 1"},
		{swap(`"schema_version":1`, `"schema_version":4294967296`), "SavingsReceiptV1.schema_version must be an integer from 0 to 4294967295."},
		{swap(`"token_savings_ratio_milli":400`, `"token_savings_ratio_milli":1001`), "milliunit must be between 0 and 1000"},
		{swap(`"task_id":"task-1"`, `"task_id":""`), "TaskId must not be empty"},
		{swap(`"baseline_receipt_id":"b"`, `"baseline_receipt_id":"`+strings.Repeat("r", 257)+`"`), "ReceiptId exceeds the 256 byte limit"},
		{swap(`"signature":"sig"`, `"signature":"sig","x":1`), "SavingsReceiptV1.x is not a known member."},
		{swap(`"provider_billed_tokens":5000}`, `"provider_billed_tokens":5000,"x":1}`), "SavingsReceiptV1.baseline_tokens.x is not a known member."},
		{swap(`"provider_reported"`, `"Estimated"`), `SavingsReceiptV1.measurement_method has unknown value "Estimated"; expected one of "provider_reported", "estimated", "unavailable".`},
	}
	for _, tc := range tests {
		var r SavingsReceiptV1
		err := r.UnmarshalJSON([]byte(tc.in))
		var de *hive.DecodeError
		if !errors.As(err, &de) || err.Error() != tc.want {
			t.Errorf("got %v, want decode error %q", err, tc.want)
		}
	}
	var id TaskId
	if err := id.UnmarshalJSON([]byte(`" "`)); errText(err) != "TaskId must not be empty" {
		t.Fatal(err)
	}
	var mu Milliunit
	if err := mu.UnmarshalJSON([]byte(`1001`)); errText(err) != "milliunit must be between 0 and 1000" {
		t.Fatal(err)
	}
}

func TestContextBalanceValidate(t *testing.T) {
	tests := []struct {
		c    ContextBalanceV1
		want string
	}{
		{ContextBalanceV1{10, 10, 10, 99}, ""},
		{ContextBalanceV1{10, 11, 0, 0}, "materialized_tokens exceeds original_tokens"},
		{ContextBalanceV1{10, 9, 10, 0}, "delivered_tokens exceeds materialized_tokens"},
		{ContextBalanceV1{10, 11, 12, 0}, "materialized_tokens exceeds original_tokens"},
	}
	for _, tc := range tests {
		if got := errText(tc.c.Validate()); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestEvidenceRefValidate(t *testing.T) {
	one := uint32(1)
	two := uint32(2)
	hex := strings.Repeat("ab", 32)
	ref := func() EvidenceRefV1 {
		return EvidenceRefV1{Kind: EvidenceKindRuntimeLog, URI: "file:///log", Digest: "sha256:abc", SignatureStatus: SignatureStatusNotSigned}
	}
	tests := []struct {
		name string
		edit func(r *EvidenceRefV1)
		want string
	}{
		{"legacy digest without version", func(r *EvidenceRefV1) {}, ""},
		{"legacy digest with version", func(r *EvidenceRefV1) { r.SchemaVersion = &one }, "evidence digest must contain a supported 64-digit hexadecimal digest"},
		{"sha256 with version", func(r *EvidenceRefV1) { r.SchemaVersion = &one; r.Digest = "sha256:" + hex }, ""},
		{"blake3 uppercase", func(r *EvidenceRefV1) { r.SchemaVersion = &one; r.Digest = "blake3:" + strings.ToUpper(hex) }, ""},
		{"bare hex", func(r *EvidenceRefV1) { r.SchemaVersion = &one; r.Digest = hex }, ""},
		{"one prefix only", func(r *EvidenceRefV1) { r.SchemaVersion = &one; r.Digest = "sha256:blake3:" + hex }, "evidence digest must contain a supported 64-digit hexadecimal digest"},
		{"version 2", func(r *EvidenceRefV1) { r.SchemaVersion = &two }, "unsupported schema_version 2; expected 1"},
		{"empty uri", func(r *EvidenceRefV1) { r.URI = "" }, "evidence uri must not be empty"},
		{"uri over 256", func(r *EvidenceRefV1) { r.URI = strings.Repeat("u", 257) }, "evidence uri exceeds the 256 byte limit"},
		{"digest control", func(r *EvidenceRefV1) { r.Digest = "a\tb" }, "evidence digest must not contain control characters"},
		{"media type", func(r *EvidenceRefV1) { r.MediaType = new(string) }, "evidence media_type must not be empty"},
		{"reserved extension", func(r *EvidenceRefV1) {
			if err := r.Extensions.Insert(`ur"i`, json.RawMessage(`1`)); err != nil {
				t.Fatal(err)
			}
			if err := r.Extensions.Insert("uri", json.RawMessage(`1`)); err != nil {
				t.Fatal(err)
			}
		}, `extension key "uri" collides with a reserved field`},
		{"reserved before version", func(r *EvidenceRefV1) {
			_ = r.Extensions.Insert("kind", json.RawMessage(`1`))
			r.SchemaVersion = &two
		}, `extension key "kind" collides with a reserved field`},
	}
	for _, tc := range tests {
		r := ref()
		tc.edit(&r)
		if got := errText(r.Validate()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestExtensionsInsert(t *testing.T) {
	var x ExtensionsV1
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct{ key, value, want string }{
		{"a", `{"b" : [1, 2.50, "x"]}`, ""},
		{" ", `1`, "extension key must not be empty"},
		{"k\x00", `1`, "extension key must not contain control characters"},
		{"d", nest(9), ""},
		{"d9", nest(10), "extension value exceeds nesting depth 8"},
		{"arr", "[" + strings.TrimSuffix(strings.Repeat("0,", 257), ",") + "]", "extension array exceeds item limit"},
		{"obj", `{"":1}`, "extension object key must not be empty"},
		{"s", `"` + strings.Repeat("s", 65537) + `"`, "extension string exceeds byte limit"},
		{"big", `["` + strings.Repeat("s", 40000) + `","` + strings.Repeat("s", 40000) + `"]`, "extension value exceeds serialized byte limit"},
		{"bad", `{"a":1,"a":2}`, `extension contains duplicate member name "a".`},
	}
	for _, tc := range tests {
		if got := errText(x.Insert(tc.key, json.RawMessage(tc.value))); got != tc.want {
			t.Errorf("Insert(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
	if v, ok := x.Get("a"); !ok || string(v) != `{"b":[1,2.50,"x"]}` {
		t.Fatalf("stored compact with numbers as written: %s", v)
	}
	if err := x.Insert("a", json.RawMessage(`true`)); err != nil || x.Len() != 2 {
		t.Fatalf("replace in place: %v %d", err, x.Len())
	}
	for i := x.Len(); i < MaxExtensionFields; i++ {
		if err := x.Insert("k"+strings.Repeat("x", i), json.RawMessage(`0`)); err != nil {
			t.Fatal(err)
		}
	}
	if errText(x.Insert("one-more", json.RawMessage(`0`))) != "extensions exceeds the 256 field limit" {
		t.Fatal("field limit")
	}
}

func TestEnumsHaveNoFallback(t *testing.T) {
	var k EvidenceKind
	if err := k.UnmarshalJSON([]byte(`"providerReceipt"`)); err == nil {
		t.Fatal("PascalCase only")
	}
	if err := k.UnmarshalJSON([]byte(`"ProviderReceipt"`)); err != nil || k != EvidenceKindProviderReceipt {
		t.Fatal(err)
	}
	if _, err := EvidenceKind("Other").MarshalJSON(); err == nil {
		t.Fatal("an unknown value must not encode")
	}
	var m MeasurementMethod
	if err := m.UnmarshalJSON([]byte(`"estimated"`)); err != nil || m != MeasurementMethodEstimated {
		t.Fatal(err)
	}
	p := PolicyClassification{Criticality: "Severe", ExpiryBehavior: ExpiryBehaviorFailOpen}
	if _, err := p.MarshalJSON(); errText(err) != `PolicyCriticality "Severe" is not a known value` {
		t.Fatal(err)
	}
}
