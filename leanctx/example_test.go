package leanctx_test

import (
	"fmt"

	"github.com/agentwire/agentwire/leanctx"
)

// Money keeps its i128 coefficient exactly: it never passes through float64.
func ExampleMoneyV1() {
	var m leanctx.MoneyV1
	err := m.UnmarshalJSON([]byte(`{"currency":"EUR","coefficient":170141183460469231731687303715884105727,"scale":2}`))
	out, _ := m.MarshalJSON()
	fmt.Println(string(out), err)
	err = m.UnmarshalJSON([]byte(`{"currency":"EUR","coefficient":1e3,"scale":2}`))
	fmt.Println(err)
	// Output:
	// {"currency":"EUR","coefficient":170141183460469231731687303715884105727,"scale":2} <nil>
	// coefficient must be an integer JSON number
}

// Unknown members of an evidence reference are retained and re-emitted.
func ExampleEvidenceRefV1() {
	var r leanctx.EvidenceRefV1
	_ = r.UnmarshalJSON([]byte(`{"kind":"ProviderReceipt","uri":"s3://e/r-1","digest":"sha256:abc","signature_status":"Verified","future_flag":true}`))
	fmt.Println(r.Validate())
	out, _ := r.MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// <nil>
	// {"kind":"ProviderReceipt","uri":"s3://e/r-1","digest":"sha256:abc","signature_status":"Verified","future_flag":true}
}
