package envelope

import "testing"

var benchEnvelope = []byte(`{"event_id":"5d41402abc4b2a76b9719d911017c592","source":"github","source_event_id":"d-7",` +
	`"topic":"notifications.github.acme.widgets.pr.42","dedupe_key":"github.d-7","issued_at":1760000000000,` +
	`"payload_summary":"PR #42 opened","payload":"{\"action\":\"opened\"}","trace_id":"0af7651916cd43dd",` +
	`"sender":{"session_id":"ses_1","machine":"m1","roles":["reviewer"]},"urgency":"high"}`)

// BenchmarkDecode measures Decode (strict parse, wire checks, struct decode, Validate) of a
// typical valid envelope.
func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEnvelope)))
	for b.Loop() {
		if _, ps := Decode(benchEnvelope); len(ps) != 0 {
			b.Fatal(ps)
		}
	}
}

// BenchmarkValidate measures the struct checks alone.
func BenchmarkValidate(b *testing.B) {
	e, _ := Decode(benchEnvelope)
	b.ReportAllocs()
	for b.Loop() {
		if ps := e.Validate(); len(ps) != 0 {
			b.Fatal(ps)
		}
	}
}

// BenchmarkMarshal measures the canonical encoding.
func BenchmarkMarshal(b *testing.B) {
	e, _ := Decode(benchEnvelope)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = e.AppendJSON(buf[:0])
	}
}

// BenchmarkMatchSubject measures the wildcard matcher.
func BenchmarkMatchSubject(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !MatchSubject("notifications.github.*.widgets.>", "notifications.github.acme.widgets.pr.42.comment") {
			b.Fatal("no match")
		}
	}
}

// BenchmarkDedupeKeyNamesItsEvent measures the minted-key regexp path.
func BenchmarkDedupeKeyNamesItsEvent(b *testing.B) {
	e := Envelope{Source: SourceAgent, DedupeKey: "agent.ses_a.3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"}
	b.ReportAllocs()
	for b.Loop() {
		if !DedupeKeyNamesItsEvent(e) {
			b.Fatal("false")
		}
	}
}
