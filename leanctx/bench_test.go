package leanctx

import "testing"

func BenchmarkSavingsReceiptDecodeValidate(b *testing.B) {
	data, err := receipt().MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var r SavingsReceiptV1
		if err := r.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseInt128(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseInt128("-170141183460469231731687303715884105728"); err != nil {
			b.Fatal(err)
		}
	}
}
