package relay_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentwire/agentwire/relay"
)

func sseFrames(t *testing.T, data []byte, oneByte bool) string {
	t.Helper()
	var b strings.Builder
	r := bytes.NewReader(data)
	var err error
	collect := func(f relay.SSEFrame) error {
		fmt.Fprintf(&b, "%q|%q|%q|%q\n", f.ID, f.Event, f.Data, f.Comment)
		return nil
	}
	if oneByte {
		err = relay.ReadSSE(iotest.OneByteReader(r), collect)
	} else {
		err = relay.ReadSSE(r, collect)
	}
	if err != nil {
		t.Fatalf("ReadSSE: %v", err)
	}
	return b.String()
}

// FuzzReadSSE: the SSE parser never panics and yields the same frames whatever the read
// boundaries are.
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("id: 1\nevent: run.started\ndata: {}\n\n"))
	f.Add([]byte(": heartbeat\r\n\r\ndata: a\rdata: b\r\n\n"))
	f.Add([]byte("data\n\nid\nevent:\n\n:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if a, b := sseFrames(t, data, false), sseFrames(t, data, true); a != b {
			t.Fatalf("read boundaries change the frames:\n%s\nvs\n%s", a, b)
		}
	})
}

// FuzzParseAuth: the auth-file parser never panics; an accepted file has at least the tokens it
// lists.
func FuzzParseAuth(f *testing.F) {
	f.Add([]byte(`[{"token_sha256":"` + relay.HashToken("t") + `","org":"o","instance_id":"i","instance_label":"","rights":["admin"]}]`))
	f.Add([]byte(`{"tokens":[]}`))
	f.Add([]byte(`[{"swarms":[{"swarm_id":"s","handle":"h","reputation":1}]}]`))
	f.Add([]byte(`{"tokens":[],"sealed_vaults":[{"org":"o","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","epoch":3},{"org":"o","vault_id":"3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42","epoch":1.5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := relay.ParseAuth(data)
		if err == nil && a == nil {
			t.Fatal("nil auth without error")
		}
	})
}

// FuzzParseErrorBody: the error-body decoder never panics, and what it accepts re-encodes to a
// body it decodes to the same error.
func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"error":{"code":"conflict","message":"Agent event logical sequence must increase monotonically.","index":4}}`))
	f.Add([]byte(`{"error":{"code":"invalid_request","message":"x","field":"after","reason":"r"}}`))
	f.Add([]byte(`{"error":{"code":"","message":1}}`))
	f.Add([]byte(`{"error":{"code":"invalid_request","message":"a; b","field":"topic","problems":[{"field":"topic","message":"a"},{"message":"b"}]}}`))
	f.Add([]byte(`{"error":{"code":"invalid_request","message":"x","problems":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := relay.ParseErrorBody(400, data)
		if err != nil {
			return
		}
		again, err := relay.ParseErrorBody(400, e.AppendJSON(nil))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("round trip: %+v → %+v (%v)", e, again, err)
		}
	})
}
