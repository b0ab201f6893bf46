package leanctx

import (
	"errors"
	"github.com/agentwire/agentwire/internal/codectest"
	"math/big"
	"regexp"
	"testing"

	"github.com/agentwire/agentwire/hive"
)

func errText(err error) string { return codectest.ErrText(err) }

// isDecodeErr reports the errors a leanctx decoder may refuse with.
func isDecodeErr(err error) bool {
	var de *hive.DecodeError
	return errors.As(err, &de)
}

// fuzzCodec: the decoder never accepts text jsonvalue refuses and reports jsonvalue's message
// for JSON-level faults; a decoded value encodes, and the encoding decodes to a value that
// encodes to the same bytes with the same Validate verdict (package internal/codectest).
func fuzzCodec[T any, P codectest.Codec[T]](t *testing.T, data []byte, label string, validate func(P) error) {
	t.Helper()
	codectest.RoundTrip(t, data, label, validate, isDecodeErr)
}

func FuzzMoneyV1(f *testing.F) {
	f.Add([]byte(`{"currency":"EUR","coefficient":170141183460469231731687303715884105727,"scale":2}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzCodec[MoneyV1](t, data, "MoneyV1", nil) })
}

func FuzzEvidenceRefV1(f *testing.F) {
	f.Add([]byte(`{"kind":"ProviderReceipt","uri":"u","digest":"sha256:abc","signature_status":"Verified","future_flag":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "EvidenceRefV1", (*EvidenceRefV1).Validate)
	})
}

func FuzzExperimentAssignmentV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[ExperimentAssignmentV1](t, data, "ExperimentAssignmentV1", nil)
	})
}

func FuzzEvidenceGapOpenedV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[EvidenceGapOpenedV1](t, data, "EvidenceGapOpenedV1", nil)
	})
}

func FuzzEvidenceGapClosedV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[EvidenceGapClosedV1](t, data, "EvidenceGapClosedV1", nil)
	})
}

func FuzzPolicyClassification(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[PolicyClassification](t, data, "PolicyClassification", nil)
	})
}

func FuzzUsageBreakdownV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[UsageBreakdownV1](t, data, "UsageBreakdownV1", nil)
	})
}

func FuzzSavingsObservationV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[SavingsObservationV1](t, data, "SavingsObservationV1", nil)
	})
}

func FuzzContextBalanceV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "ContextBalanceV1", (*ContextBalanceV1).Validate)
	})
}

func FuzzSavingsReceiptV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "SavingsReceiptV1", (*SavingsReceiptV1).Validate)
	})
}

var int128Shape = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// FuzzInt128 checks ParseInt128 against math/big and the §7.5 grammar, and String against
// big.Int's decimal form.
func FuzzInt128(f *testing.F) {
	for _, s := range []string{"0", "-0", "170141183460469231731687303715884105727", "-170141183460469231731687303715884105728", "170141183460469231731687303715884105728", "01", "1e3"} {
		f.Add(s)
	}
	lo, hi := MinInt128.Big(), MaxInt128.Big()
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseInt128(s)
		if !int128Shape.MatchString(s) {
			if errText(err) != "coefficient must be an integer JSON number" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		b, _ := new(big.Int).SetString(s, 10)
		if b.Cmp(lo) < 0 || b.Cmp(hi) > 0 {
			if errText(err) != "coefficient is outside the i128 range" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if err != nil || x.Big().Cmp(b) != 0 || x.String() != b.String() {
			t.Fatalf("%q: %v %s %v", s, x, x.String(), err)
		}
		y, err := Int128FromBig(b)
		if err != nil || y != x {
			t.Fatalf("Int128FromBig(%s) = %v %v", b, y, err)
		}
	})
}
