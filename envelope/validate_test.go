package envelope

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

const hex32 = "0123456789abcdef0123456789abcdef"

// v is the spec's base envelope V of envelope.md §7.
func v() Envelope {
	return Envelope{
		EventID: "e1", Source: SourceAgent, SourceEventID: "s1", Topic: "notifications.agent.ses_1",
		DedupeKey: "publish." + hex32, IssuedAt: 1760000000000, PayloadSummary: "hi", TraceID: "t1",
	}
}

// vJSON is the JSON of V with extra members spliced in before the closing brace.
func vJSON(extra string) string {
	base := `{"event_id":"e1","source":"agent","source_event_id":"s1","topic":"notifications.agent.ses_1",` +
		`"dedupe_key":"publish.` + hex32 + `","issued_at":1760000000000,"payload_summary":"hi","trace_id":"t1"`
	if extra != "" {
		base += "," + extra
	}
	return base + "}"
}

func with(f func(*Envelope)) Envelope {
	e := v()
	f(&e)
	return e
}

func ptr[T any](x T) *T { return &x }

var eightRequired = []string{
	MsgEventIDRequired, MsgSourceRequired, MsgSourceEventIDRequired, MsgTopicRequired,
	MsgDedupeKeyRequired, MsgIssuedAtMustBeSet, MsgPayloadSummaryRequired, MsgTraceIDRequired,
}

// TestValidate covers every §2.2 message and the struct cases of envelope.md §7.
func TestValidate(t *testing.T) {
	src := MsgSourceEnum
	tests := []struct {
		name string
		e    Envelope
		want []string
	}{
		{"case 1 V", v(), nil},
		{"case 2 event_id empty", with(func(e *Envelope) { e.EventID = "" }), []string{"event_id is required"}},
		{"case 2 trace_id blank", with(func(e *Envelope) { e.TraceID = " \t" }), []string{"trace_id is required"}},
		{"case 3 source empty", with(func(e *Envelope) { e.Source = "" }), []string{"source is required"}},
		{"source blank", with(func(e *Envelope) { e.Source = " \u00a0" }), []string{"source is required"}},
		{"case 4 source email", with(func(e *Envelope) { e.Source = "email" }), []string{src}},
		{"case 4 source leading space", with(func(e *Envelope) { e.Source = " agent" }), []string{src}},
		{"source case variant", with(func(e *Envelope) { e.Source = "Agent" }), []string{src}},
		{"case 5 human", with(func(e *Envelope) { e.Source = SourceHuman }), nil},
		{"case 5 dispatch", with(func(e *Envelope) { e.Source = SourceDispatch }), nil},
		{"source_event_id blank", with(func(e *Envelope) { e.SourceEventID = "\n" }), []string{"source_event_id is required"}},
		{"topic empty", with(func(e *Envelope) { e.Topic = "" }), []string{"topic is required"}},
		{"topic white space", with(func(e *Envelope) { e.Topic = "   " }), []string{"topic is required"}},
		{"dedupe_key empty", with(func(e *Envelope) { e.DedupeKey = "" }), []string{"dedupe_key is required"}},
		{"case 6 issued_at 0", with(func(e *Envelope) { e.IssuedAt = 0 }), []string{"issued_at must be set"}},
		{"case 6 issued_at negative", with(func(e *Envelope) { e.IssuedAt = -5 }), nil},
		{"issued_at in seconds", with(func(e *Envelope) { e.IssuedAt = 1760000000 }), nil},
		{"payload_summary blank", with(func(e *Envelope) { e.PayloadSummary = "\r\n" }), []string{"payload_summary is required"}},
		{"case 7 expires_at before issued_at", with(func(e *Envelope) { e.ExpiresAt = ptr(int64(1)) }), nil},
		{"case 8 zero envelope", Envelope{}, eightRequired},
		{"case 9 in_reply_to blank", with(func(e *Envelope) { e.InReplyTo = " " }), []string{"in_reply_to must not be empty"}},
		{"case 9 supersedes blank", with(func(e *Envelope) { e.Supersedes = "\t" }), []string{"supersedes must not be empty"}},
		{"in_reply_to set", with(func(e *Envelope) { e.InReplyTo = "e0"; e.Supersedes = "e0" }), nil},
		{"case 10 urgency", with(func(e *Envelope) { e.Urgency = "urgent" }), []string{"urgency must be one of: low, med, high, blocking"}},
		{"case 10 expects_reply", with(func(e *Envelope) { e.ExpectsReply = "later" }), []string{"expects_reply must be one of: none, optional, required"}},
		{"urgency blank is not empty", with(func(e *Envelope) { e.Urgency = " " }), []string{"urgency must be one of: low, med, high, blocking"}},
		{"case 11 blocking required", with(func(e *Envelope) { e.Urgency = UrgencyBlocking; e.ExpectsReply = ExpectsReplyRequired }), nil},
		{"case 12 sender session empty", with(func(e *Envelope) { e.Sender = &EnvelopeSender{} }), []string{"sender.session_id is required"}},
		{"case 12 sender ok", with(func(e *Envelope) { e.Sender = &EnvelopeSender{SessionID: "ses_1", Roles: []string{"r"}} }), nil},
		{"case 13 enum after in_reply_to", with(func(e *Envelope) { e.Source = "bogus"; e.InReplyTo = " " }), []string{"in_reply_to must not be empty", src}},
		{"case 14 many", with(func(e *Envelope) {
			e.Topic, e.Source, e.InReplyTo, e.Urgency = "", "bogus", " ", "x"
			e.Sender = &EnvelopeSender{SessionID: " "}
		}), []string{"topic is required", "in_reply_to must not be empty", src, "urgency must be one of: low, med, high, blocking", "sender.session_id is required"}},
		{"case 15 topic not a subject", with(func(e *Envelope) { e.Topic = "not a subject" }), nil},
		{"dedupe_key shape unchecked", with(func(e *Envelope) { e.DedupeKey = "anything at all" }), nil},
		{"all fourteen steps", Envelope{
			Source: "nope", InReplyTo: " ", Supersedes: " ", Urgency: "u", ExpectsReply: "x",
			Sender: &EnvelopeSender{},
		}, []string{
			"event_id is required", "source_event_id is required", "topic is required",
			"dedupe_key is required", "issued_at must be set", "payload_summary is required", "trace_id is required",
			"in_reply_to must not be empty", "supersedes must not be empty", src,
			"urgency must be one of: low, med, high, blocking", "expects_reply must be one of: none, optional, required",
			"sender.session_id is required",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := tt.e.Validate()
			if got := ps.Messages(); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("Validate:\n got %q\nwant %q", got, tt.want)
			}
			first := ps.First()
			if len(tt.want) == 0 {
				if first != nil || ps.Err() != nil {
					t.Fatalf("First/Err of empty list = %v / %v", first, ps.Err())
				}
				return
			}
			if first == nil || first.Error() != tt.want[0] {
				t.Fatalf("First() = %v, want %q", first, tt.want[0])
			}
			if got := ps.Err().Error(); got != strings.Join(tt.want, "; ") {
				t.Fatalf("Err() = %q", got)
			}
		})
	}
}

func TestValidateFields(t *testing.T) {
	e := Envelope{Source: "x", InReplyTo: " ", Supersedes: " ", Urgency: "u", ExpectsReply: "x", Sender: &EnvelopeSender{}}
	var got []string
	for _, p := range e.Validate() {
		got = append(got, p.Field)
	}
	want := []string{"event_id", "source_event_id", "topic", "dedupe_key", "issued_at", "payload_summary", "trace_id",
		"in_reply_to", "supersedes", "source", "urgency", "expects_reply", "sender.session_id"}
	if !slices.Equal(got, want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
}

func TestEnumMessages(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{MsgSourceEnum, "source must be one of: agent, human, envoy, github, slack, whatsapp, ghostwispr, dispatch"},
		{MsgUrgencyEnum, "urgency must be one of: low, med, high, blocking"},
		{MsgExpectsReplyEnum, "expects_reply must be one of: none, optional, required"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	for _, s := range Sources {
		if !s.Valid() || Source(strings.ToUpper(string(s))).Valid() {
			t.Errorf("Source %q validity", s)
		}
	}
	for _, u := range Urgencies {
		if !u.Valid() {
			t.Errorf("Urgency %q", u)
		}
	}
	for _, x := range ExpectsReplies {
		if !x.Valid() {
			t.Errorf("ExpectsReply %q", x)
		}
	}
}

type probe struct {
	Field, Message string
	Decoding       bool // implementation-defined message: only the field is compared
}

func msgs(ms ...string) []probe {
	out := make([]probe, len(ms))
	for i, m := range ms {
		out[i] = probe{Message: m}
	}
	return out
}

func decodingAt(field string) probe { return probe{Field: field, Decoding: true} }

func checkProblems(t *testing.T, what string, got Problems, want []probe) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d problems %+v, want %d %+v", what, len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if w.Decoding {
			if g.Field != w.Field || g.Message == "" {
				t.Fatalf("%s[%d]: got %+v, want a decoding problem at %q", what, i, g, w.Field)
			}
			continue
		}
		if g.Message != w.Message || (w.Field != "" && g.Field != w.Field) {
			t.Fatalf("%s[%d]: got %+v, want %+v", what, i, g, w)
		}
	}
}

// TestWireAndDecode covers every §2.3 message, the §2.4 ordering and the wire cases of §7.
func TestWireAndDecode(t *testing.T) {
	src := MsgSourceEnum
	tests := []struct {
		name   string
		raw    string
		wire   []probe
		decode []probe
	}{
		{"V", vJSON(""), nil, nil},
		{"case 16 in_reply_to empty", vJSON(`"in_reply_to":""`), msgs("in_reply_to must not be empty"), msgs("in_reply_to must not be empty")},
		{"supersedes empty", vJSON(`"supersedes":""`), msgs("supersedes must not be empty"), msgs("supersedes must not be empty")},
		{"case 17 urgency and expects_reply empty", vJSON(`"urgency":"","expects_reply":""`),
			msgs("urgency must not be empty", "expects_reply must not be empty"),
			msgs("urgency must not be empty", "expects_reply must not be empty")},
		{"case 18 supersedes null", vJSON(`"supersedes":null`), nil, nil},
		{"case 18 supersedes blank", vJSON(`"supersedes":" "`), nil, msgs("supersedes must not be empty")},
		{"case 19 sender session empty", vJSON(`"sender":{"session_id":""}`),
			msgs("sender.session_id must not be empty"),
			msgs("sender.session_id must not be empty", "sender.session_id is required")},
		{"case 20 sender empty object", vJSON(`"sender":{}`), nil, msgs("sender.session_id is required")},
		{"case 20 raw array", `[]`, []probe{decodingAt("")}, []probe{decodingAt("")}},
		{"case 20 raw null", `null`, nil, msgs(eightRequired...)},
		{"raw empty object", `{}`, nil, msgs(eightRequired...)},
		{"raw not JSON", `{"event_id":`, []probe{decodingAt("")}, []probe{decodingAt("")}},
		{"raw string", `"x"`, []probe{decodingAt("")}, []probe{decodingAt("")}},
		{"raw empty", ``, []probe{decodingAt("")}, []probe{decodingAt("")}},
		{"case 46 misspelt key", strings.Replace(vJSON(""), `"event_id"`, `"Event_ID"`, 1), nil, msgs("event_id is required")},
		{"case 46 case-variant in_reply_to", vJSON(`"In_Reply_To":" "`), nil, nil},
		{"case 47 issued_at 1.0", strings.Replace(vJSON(""), "1760000000000", "1.0", 1), nil, []probe{decodingAt("issued_at")}},
		{"issued_at 1.5", strings.Replace(vJSON(""), "1760000000000", "1.5", 1), nil, []probe{decodingAt("issued_at")}},
		{"issued_at 1e3", strings.Replace(vJSON(""), "1760000000000", "1e3", 1), nil, []probe{decodingAt("issued_at")}},
		{"issued_at string", strings.Replace(vJSON(""), "1760000000000", `"1"`, 1), nil, []probe{decodingAt("issued_at")}},
		{"issued_at over int64", strings.Replace(vJSON(""), "1760000000000", "9223372036854775808", 1), nil, []probe{decodingAt("issued_at")}},
		{"issued_at max int64", strings.Replace(vJSON(""), "1760000000000", "9223372036854775807", 1), nil, nil},
		{"issued_at -0 is zero", strings.Replace(vJSON(""), "1760000000000", "-0", 1), nil, msgs("issued_at must be set")},
		{"issued_at null", strings.Replace(vJSON(""), "1760000000000", "null", 1), nil, msgs("issued_at must be set")},
		{"issued_at overflows a double", strings.Replace(vJSON(""), "1760000000000", "1e400", 1), nil, []probe{decodingAt("issued_at")}},
		{"expires_at fraction", vJSON(`"expires_at":2.5`), nil, []probe{decodingAt("expires_at")}},
		{"expires_at ok", vJSON(`"expires_at":1`), nil, nil},
		{"source number", strings.Replace(vJSON(""), `"agent"`, `5`, 1), nil, []probe{decodingAt("source")}},
		{"source null", strings.Replace(vJSON(""), `"agent"`, `null`, 1), nil, msgs("source is required")},
		{"case 47 duplicate member", vJSON(`"in_reply_to":"","in_reply_to":"x"`), nil, []probe{decodingAt("")}},
		{"duplicate member, last empty", vJSON(`"in_reply_to":"x","in_reply_to":""`),
			msgs("in_reply_to must not be empty"), []probe{{Message: "in_reply_to must not be empty"}, decodingAt("")}},
		{"invalid UTF-8", vJSON("\"payload\":\"\xff\""), nil, []probe{decodingAt("payload")}},
		{"invalid UTF-8 with empty urgency", vJSON("\"payload\":\"\xff\",\"urgency\":\"\""),
			msgs("urgency must not be empty"), []probe{{Message: "urgency must not be empty"}, decodingAt("payload")}},
		{"sender number", vJSON(`"sender":5`), []probe{decodingAt("sender")}, []probe{decodingAt("sender")}},
		{"sender array with empty urgency", vJSON(`"urgency":"","sender":[]`),
			[]probe{{Message: "urgency must not be empty"}, decodingAt("sender")},
			[]probe{{Message: "urgency must not be empty"}, decodingAt("sender")}},
		{"sender null", vJSON(`"sender":null`), nil, nil},
		{"sender session number", vJSON(`"sender":{"session_id":5}`), nil, []probe{decodingAt("sender.session_id")}},
		{"sender roles not array", vJSON(`"sender":{"session_id":"s","roles":"r"}`), nil, []probe{decodingAt("sender.roles")}},
		{"sender roles element", vJSON(`"sender":{"session_id":"s","roles":["a",1]}`), nil, []probe{decodingAt("sender.roles[1]")}},
		{"sender roles null element", vJSON(`"sender":{"session_id":"s","roles":["a",null]}`), nil, nil},
		{"sender unknown key ignored", vJSON(`"sender":{"session_id":"s","extra":{"x":[1]}}`), nil, nil},
		{"first type error wins", strings.Replace(vJSON(`"urgency":7`), `"agent"`, `5`, 1), nil, []probe{decodingAt("source")}},
		{"type error after sender problem", vJSON(`"sender":true,"payload":1`), []probe{decodingAt("sender")}, []probe{decodingAt("sender")}},
		{"escaped key names the field", strings.Replace(vJSON(""), `"issued_at":1760000000000`, `"issued\u005fat":1.0`, 1), nil, []probe{decodingAt("issued_at")}},
		{"escaped key wire check", vJSON(`"in\u005freply_to":""`), msgs("in_reply_to must not be empty"), msgs("in_reply_to must not be empty")},
		{"unknown keys ignored", vJSON(`"extra":{"nested":[1,2,{"a":"b"}]},"x":"}"`), nil, nil},
		{"structural problems then validation", `{"in_reply_to":"","source":"bogus","sender":{"session_id":""}}`,
			msgs("in_reply_to must not be empty", "sender.session_id must not be empty"),
			msgs("in_reply_to must not be empty", "sender.session_id must not be empty",
				"event_id is required", "source_event_id is required", "topic is required", "dedupe_key is required",
				"issued_at must be set", "payload_summary is required", "trace_id is required", src, "sender.session_id is required")},
		{"trailing CR", vJSON("") + "\r", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkProblems(t, "ValidateWire", ValidateWire([]byte(tt.raw)), tt.wire)
			e, ps := Decode([]byte(tt.raw))
			checkProblems(t, "Decode", ps, tt.decode)
			for _, w := range tt.decode {
				if w.Decoding && (e.EventID != "" || e.IssuedAt != 0) {
					t.Fatalf("Decode returned a non-zero envelope with a decoding problem: %+v", e)
				}
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	raw := vJSON(`"expires_at":-9223372036854775808,"source_session":"ses_0","payload_ref":"nats://payloads/evt-1",` +
		`"payload":"{\"a\":1}","sender":{"session_id":"s","machine":"m","cwd":"/w","title":"T","roles":["a","b"]},` +
		`"in_reply_to":"e0","supersedes":"e9","urgency":"high","expects_reply":"optional","unknown":1`)
	e, ps := Decode([]byte(raw))
	if len(ps) != 0 {
		t.Fatalf("problems %v", ps)
	}
	want := with(func(e *Envelope) {
		e.ExpiresAt = ptr(int64(-9223372036854775808))
		e.SourceSession, e.PayloadRef, e.Payload = "ses_0", "nats://payloads/evt-1", `{"a":1}`
		e.Sender = &EnvelopeSender{SessionID: "s", Machine: "m", Cwd: "/w", Title: "T", Roles: []string{"a", "b"}}
		e.InReplyTo, e.Supersedes, e.Urgency, e.ExpectsReply = "e0", "e9", UrgencyHigh, ExpectsReplyOptional
	})
	if string(mustJSON(t, e)) != string(mustJSON(t, want)) {
		t.Fatalf("decoded\n%s\nwant\n%s", mustJSON(t, e), mustJSON(t, want))
	}
	// The exact int64 survives, beyond the float64-exact range.
	e, ps = Decode([]byte(strings.Replace(vJSON(""), "1760000000000", "9007199254740993", 1)))
	if len(ps) != 0 || e.IssuedAt != 9007199254740993 {
		t.Fatalf("issued_at %d, %v", e.IssuedAt, ps)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMarshal pins the canonical encoding (envelope.md §1.1 rule 3).
func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		e    Envelope
		want string
	}{
		{"zero", Envelope{}, `{"event_id":"","source":"","source_event_id":"","topic":"","dedupe_key":"","issued_at":0,"payload_summary":"","trace_id":""}`},
		{"spec example", Envelope{
			EventID: "5d41402abc4b2a76b9719d911017c592", Source: SourceGithub, SourceEventID: "d-7",
			Topic: "notifications.github.acme.widgets.pr.42", DedupeKey: "github.d-7", IssuedAt: 1760000000000,
			PayloadSummary: "PR #42 opened", Payload: `{"action":"opened"}`, TraceID: "0af7651916cd43dd",
		}, `{"event_id":"5d41402abc4b2a76b9719d911017c592","source":"github","source_event_id":"d-7",` +
			`"topic":"notifications.github.acme.widgets.pr.42","dedupe_key":"github.d-7","issued_at":1760000000000,` +
			`"payload_summary":"PR #42 opened","payload":"{\"action\":\"opened\"}","trace_id":"0af7651916cd43dd"}`},
		{"every field", with(func(e *Envelope) {
			e.SourceSession, e.ExpiresAt, e.PayloadRef, e.Payload = "ses_0", ptr(int64(0)), "r", "<&>"
			e.Sender = &EnvelopeSender{SessionID: "s", Machine: "m", Cwd: "c", Title: "t", Roles: []string{"a"}}
			e.InReplyTo, e.Supersedes, e.Urgency, e.ExpectsReply = "i", "s", UrgencyLow, ExpectsReplyNone
		}), `{"event_id":"e1","source":"agent","source_event_id":"s1","source_session":"ses_0","topic":"notifications.agent.ses_1",` +
			`"dedupe_key":"publish.` + hex32 + `","issued_at":1760000000000,"expires_at":0,"payload_summary":"hi","payload_ref":"r",` +
			`"payload":"<&>","trace_id":"t1","sender":{"session_id":"s","machine":"m","cwd":"c","title":"t","roles":["a"]},` +
			`"in_reply_to":"i","supersedes":"s","urgency":"low","expects_reply":"none"}`},
		{"empty roles omitted", with(func(e *Envelope) { e.Sender = &EnvelopeSender{Roles: []string{}} }),
			vJSON(`"sender":{"session_id":""}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := tt.e.MarshalJSON() // json.Marshal would re-escape <, > and & (encoding/json HTML escaping)
			got := string(b)
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			var back Envelope
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if again := string(back.AppendJSON(nil)); again != got {
				t.Fatalf("round trip\n%s\n%s", again, got)
			}
		})
	}
}

func TestUnmarshalJSON(t *testing.T) {
	var e Envelope
	if err := json.Unmarshal([]byte(vJSON(`"Topic":"x"`)), &e); err != nil || e.Topic != "notifications.agent.ses_1" {
		t.Fatalf("case-sensitive decode: %v %q", err, e.Topic)
	}
	err := e.UnmarshalJSON([]byte(`{"issued_at":1.5}`))
	var p Problem
	if !errors.As(err, &p) || p.Field != "issued_at" {
		t.Fatalf("type error %v", err)
	}
	if err := e.UnmarshalJSON([]byte(`{"a":1,"a":1}`)); err == nil {
		t.Fatal("duplicate accepted")
	}
	var s EnvelopeSender
	if err := json.Unmarshal([]byte(`{"session_id":"x","roles":["r"]}`), &s); err != nil || s.SessionID != "x" || len(s.Roles) != 1 {
		t.Fatalf("sender: %v %+v", err, s)
	}
	if err := s.UnmarshalJSON([]byte(`{"session_id":1}`)); err == nil || err.Error() != "sender.session_id must be a string" {
		t.Fatalf("sender type error: %v", err)
	}
}

func TestNowMillis(t *testing.T) {
	// Milliseconds, not seconds: any current time is past 10^12 ms (2001).
	if n := NowMillis(); n < 1_000_000_000_000 {
		t.Fatalf("NowMillis %d looks like seconds", n)
	}
}

// TestAppendString checks the encoder's string form against the strict JSON layer's (RFC 8785)
// and the U+FFFD replacement of invalid UTF-8.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "<&>", "\"\\", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "é€😀", "\u2028\u2029"} {
		if got, want := string(jsonvalue.AppendQuote(nil, s)), jsonvalue.Quote(s); got != want {
			t.Errorf("jsonvalue.AppendQuote(%q) = %s, want %s", s, got, want)
		}
	}
	if got := string(jsonvalue.AppendQuote(nil, "a\xffb\xc3")); got != "\"a\uFFFDb\uFFFD\"" {
		t.Errorf("invalid UTF-8: %s", got)
	}
	e := with(func(e *Envelope) { e.Payload = "\xff" })
	if _, ps := Decode(e.AppendJSON(nil)); len(ps) != 0 {
		t.Fatalf("encoding with invalid UTF-8 does not decode: %v", ps)
	}
}
