package jsonvalue

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var benchEvent = []byte(`{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hello, world. This is a streamed delta of moderate length."},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`)

func BenchmarkParseEvent(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEvent)))
	for b.Loop() {
		if _, err := Parse(benchEvent, "Agent event"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTokenizeEvent is the ceiling: the same bytes merely tokenized by jsontext.
func BenchmarkTokenizeEvent(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEvent)))
	dec := jsontext.NewDecoder(bytes.NewReader(nil))
	for b.Loop() {
		dec.Reset(bytes.NewReader(benchEvent))
		for {
			if _, err := dec.ReadToken(); err != nil {
				break
			}
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	v, _ := Parse(benchEvent, "")
	b.ReportAllocs()
	for b.Loop() {
		_ = FingerprintOf(v)
	}
}
