package store_test

import (
	"errors"
	"testing"

	"github.com/agentwire/agentwire/store"
)

// FuzzValidateAppend: ValidateAppend accepts exactly the requests AppendRun's preconditions
// describe, and every refusal wraps ErrInvalid.
func FuzzValidateAppend(f *testing.F) {
	f.Add("o", "r", int64(0), int64(1), "", "run.started", []byte("{}"), []byte("{}"), "running")
	f.Add("", "r", int64(0), int64(1), "e", "t", []byte("x"), []byte("x"), "s")
	f.Add("o", "r", int64(-1), int64(0), "e", "", []byte{}, []byte{}, "")
	long := string(make([]byte, store.MaxIDBytes+1))
	f.Add("o", long, int64(0), int64(1), "e", "t", []byte("x"), []byte("x"), "s")
	f.Add(long[1:], "r", int64(0), int64(1), "e", "t", []byte("x"), []byte("x"), "s")
	f.Fuzz(func(t *testing.T, org, run string, expected, seq int64, id, typ string, data, snapshot []byte, status string) {
		req := store.AppendRequest{
			ExpectedLastLogicalSequence: expected,
			Events:                      []store.Event{{LogicalSequence: seq, EventID: id, Type: typ, Data: data}},
			Snapshot:                    snapshot,
			Status:                      status,
		}
		// A nil snapshot keeps the previous checkpoint (valid after the first batch); an empty
		// non-nil one is refused.
		snapOK := len(snapshot) > 0 || (snapshot == nil && expected > 0)
		idOK := func(id string) bool { return id != "" && len(id) <= store.MaxIDBytes }
		want := idOK(org) && idOK(run) && expected >= 0 && seq > 0 && typ != "" && len(data) > 0 && snapOK && status != ""
		err := store.ValidateAppend(org, run, req)
		if (err == nil) != want {
			t.Fatalf("ValidateAppend = %v, want valid=%v", err, want)
		}
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("ValidateAppend error %v does not wrap ErrInvalid", err)
		}
	})
}
