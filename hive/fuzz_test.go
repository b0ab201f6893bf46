package hive

import (
	"bytes"
	"errors"
	"github.com/agentwire/agentwire/internal/codectest"
	"regexp"
	"testing"
	"time"

	"github.com/agentwire/agentwire/jsonvalue"
)

// isContractErr reports the errors a hive decoder may refuse with.
func isContractErr(err error) bool {
	var de *DecodeError
	var ve *ValidationError
	return errors.As(err, &de) || errors.As(err, &ve)
}

// checkStrictness asserts the decoder never accepts text jsonvalue refuses, and reports
// jsonvalue's exact message for the JSON-level faults it finds.
func checkStrictness(t *testing.T, data []byte, label string, err error) {
	t.Helper()
	codectest.Strict(t, data, label, err, isContractErr)
}

// fuzzCodec decodes data as T; a decoded value must encode, and the encoding must decode to a
// value that encodes to the same bytes and validates the same way.
func fuzzCodec[T any, P codectest.Codec[T]](t *testing.T, data []byte, label string, validate func(P) error) {
	t.Helper()
	codectest.RoundTrip(t, data, label, validate, isContractErr)
}

func seed(f *testing.F, docs ...string) {
	for _, d := range docs {
		f.Add([]byte(d))
	}
}

const (
	fuzzM = `{"client_msg_id":"01JBMSG","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","body":{"text":"Which retry budget does payments use?"}}`
	fuzzQ = `{"client_msg_id":"01JBMSG7Q3","network":{"kind":"org","channel":"org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"},"type":"question","from":"claude-3e","deadline":"2026-10-21T12:00:00Z","body":{"text":"Which retry budget does payments use?","references":[{"kind":"task","number":7},{"kind":"commit","id":"9f2c1ab"}]}}`
	fuzzD = `{"gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"found"},"trust":"untrusted","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"}`
)

func FuzzAgentMessageV1(f *testing.F) {
	seed(f, fuzzM, fuzzQ)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "AgentMessageV1", (*AgentMessageV1).Validate)
	})
}

func FuzzMessageDeliveryV1(f *testing.F) {
	seed(f, fuzzD)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "MessageDeliveryV1", (*MessageDeliveryV1).Validate)
	})
}

func FuzzMessageReceiptV1(f *testing.F) {
	seed(f, `{"gid":"g-1","by":"codex-85","state":"read"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "MessageReceiptV1", (*MessageReceiptV1).Validate)
	})
}

func FuzzMessageStoredV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[MessageStoredV1](t, data, "MessageStoredV1", nil)
	})
}

func FuzzMessageStatusV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[MessageStatusV1](t, data, "MessageStatusV1", nil)
	})
}

func FuzzTaskEventV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[TaskEventV1](t, data, "TaskEventV1", nil)
	})
}

func FuzzTaskActorV1(f *testing.F) {
	seed(f, `{"kind":"person"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "TaskActorV1", (*TaskActorV1).Validate)
	})
}

func FuzzMessageListV1(f *testing.F) {
	seed(f, `{"schema":"leanctx.hive.message-list/v1","messages":[`+fuzzD+`],"next":"g-9"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "MessageListV1", (*MessageListV1).Validate)
	})
}

func FuzzMessageBodyV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "MessageBodyV1", func(b *MessageBodyV1) error { return b.Validate(NetworkKindSwarm) })
	})
}

func FuzzSealedBlobV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "SealedBlobV1", (*SealedBlobV1).Validate)
	})
}

func FuzzHiveErrorBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec[HiveErrorBody](t, data, "HiveErrorBody", nil)
	})
}

func FuzzBusPollV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "BusPollV1", (*BusPollV1).Validate)
	})
}

func FuzzBusEventsV1(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCodec(t, data, "BusEventsV1", (*BusEventsV1).Validate)
	})
}

// FuzzBusFrame decodes a frame at the service, at a client and by its tag; a decoded frame must
// round-trip on the same side and keep its Validate verdict.
func FuzzBusFrame(f *testing.F) {
	seed(f, `{"t":"hello","instance_id":"i","agents":[{"agent_id":"a","role":"r","channels":["org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g"]}],"cursors":{"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g":1}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		decoders := []func([]byte) (BusFrameV1, error){
			func(b []byte) (BusFrameV1, error) { return DecodeBusFrame(b, AtService) },
			func(b []byte) (BusFrameV1, error) { return DecodeBusFrame(b, AtClient) },
			DecodeBusFrameByTag,
		}
		for _, decode := range decoders {
			fr, err := decode(data)
			checkStrictness(t, data, "BusFrameV1", err)
			if err != nil || fr == nil {
				continue
			}
			verdict := errText(ValidateFrame(fr))
			out, err := fr.MarshalJSON()
			if err != nil {
				t.Fatalf("decoded frame does not encode: %v", err)
			}
			again, err := decode(out)
			if err != nil || again == nil {
				t.Fatalf("re-decoding %s: %v", out, err)
			}
			out2, _ := again.MarshalJSON()
			if !bytes.Equal(out, out2) {
				t.Fatalf("not idempotent:\n%s\n%s", out, out2)
			}
			if errText(ValidateFrame(again)) != verdict {
				t.Fatalf("verdict changed by a round trip")
			}
		}
	})
}

func FuzzNetworkV1(f *testing.F) {
	seed(f, `{"kind":"org","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g"}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := DecodeNetworkV1(data)
		checkStrictness(t, data, "NetworkV1", err)
		if err != nil {
			return
		}
		_ = n.Validate()
		out, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeNetworkV1(out)
		if err != nil || m != n {
			t.Fatalf("round trip %s: %v %v", out, m, err)
		}
	})
}

var timestampShape = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)

// FuzzUtcTimestamp checks NewUtcTimestamp against an independent oracle: the shape regexp for
// the syntax rule, time.Parse (which refuses 24:00, second 60, Feb 29 of common years and day
// overflow) plus year ≠ 0 for the calendar rule.
func FuzzUtcTimestamp(f *testing.F) {
	for _, s := range []string{"2026-10-21T12:00:00Z", "2026-02-29T12:00:00Z", "2028-02-29T23:59:59Z", "2026-10-21T24:00:00Z", "2026-10-21T12:00:00z", "2026-10-21T12:00:00.5Z", "0000-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := NewUtcTimestamp(s)
		want := ""
		if !timestampShape.MatchString(s) {
			want = "UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax"
		} else if tm, perr := time.Parse("2006-01-02T15:04:05Z", s); perr != nil || tm.Year() == 0 {
			want = "UtcTimestamp contains an invalid calendar or clock value"
		}
		if errText(err) != want {
			t.Fatalf("%q: %q, want %q", s, errText(err), want)
		}
		// Decoding a JSON string agrees with NewUtcTimestamp.
		var d UtcTimestamp
		derr := d.UnmarshalJSON([]byte(jsonvalue.Quote(s)))
		if errText(derr) != want && !(derr != nil && !timestampShape.MatchString(s)) {
			t.Fatalf("decode %q: %v, want %q", s, derr, want)
		}
		if err != nil {
			return
		}
		tm, err := ParseTime(ts)
		if err != nil || tm.Format("2006-01-02T15:04:05Z") != s || UtcTimestampOf(tm) != ts {
			t.Fatalf("ParseTime(%q) = %v %v", s, tm, err)
		}
	})
}
