package envelope

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentwire/agentwire/jsonvalue"
)

// matchReference is the simple reference for MatchSubject: split both on "." and match
// recursively (a different algorithm from the streaming matcher under test).
func matchReference(pattern, subject string) bool {
	var rec func(p, s []string) bool
	rec = func(p, s []string) bool {
		if len(p) == 0 {
			return len(s) == 0
		}
		if p[0] == ">" && len(p) == 1 {
			return len(s) >= 1
		}
		if len(s) == 0 {
			return false
		}
		if p[0] != "*" && p[0] != s[0] {
			return false
		}
		return rec(p[1:], s[1:])
	}
	return rec(strings.Split(pattern, "."), strings.Split(subject, "."))
}

// matchRegexp is a second reference for valid UTF-8 inputs: the pattern translated to an
// anchored regular expression.
func matchRegexp(pattern, subject string) bool {
	toks := strings.Split(pattern, ".")
	parts := make([]string, len(toks))
	for i, t := range toks {
		switch {
		case t == ">" && i == len(toks)-1:
			parts[i] = `[^.]*(?:\.[^.]*)*`
		case t == "*":
			parts[i] = `[^.]*`
		default:
			parts[i] = regexp.QuoteMeta(t)
		}
	}
	return regexp.MustCompile(`\A` + strings.Join(parts, `\.`) + `\z`).MatchString(subject)
}

func hasWildcardToken(s string) bool {
	for _, t := range strings.Split(s, ".") {
		if t == "*" || t == ">" {
			return true
		}
	}
	return false
}

// FuzzMatchSubject checks MatchSubject against the two references and SubjectsOverlap against
// MatchSubject where one side is a literal subject.
func FuzzMatchSubject(f *testing.F) {
	for _, c := range [][2]string{
		{"notifications.github.acme.widgets.>", "notifications.github.acme.widgets.pr.42"},
		{"notifications.>", "notifications"},
		{"notifications.slack.T1.*.message", "notifications.slack.T1.C1.thread.1_2.message"},
		{"a.>.c", "a.>.c"}, {"*.*", "a."}, {">", ""}, {"", ""}, {"a*", "ab"}, {"a..b", "a.x.b"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		got := MatchSubject(pattern, subject)
		if want := matchReference(pattern, subject); got != want {
			t.Fatalf("MatchSubject(%q, %q) = %v, reference %v", pattern, subject, got, want)
		}
		if utf8.ValidString(pattern) && utf8.ValidString(subject) {
			if want := matchRegexp(pattern, subject); got != want {
				t.Fatalf("MatchSubject(%q, %q) = %v, regexp %v", pattern, subject, got, want)
			}
		}
		if !hasWildcardToken(subject) {
			if o := SubjectsOverlap(pattern, subject); o != got {
				t.Fatalf("SubjectsOverlap(%q, %q) = %v, MatchSubject %v", pattern, subject, o, got)
			}
			if o := SubjectsOverlap(subject, pattern); o != got {
				t.Fatalf("SubjectsOverlap(%q, %q) = %v (swapped), MatchSubject %v", subject, pattern, o, got)
			}
		}
		if SubjectsOverlap(pattern, subject) != SubjectsOverlap(subject, pattern) {
			t.Fatalf("SubjectsOverlap not symmetric for %q, %q", pattern, subject)
		}
		// A publishable subject matches itself; a valid pattern overlaps itself.
		if ValidPublishSubject(subject) == nil && !MatchSubject(subject, subject) {
			t.Fatalf("%q does not match itself", subject)
		}
		if ValidSubscribeSubject(pattern) == nil && !SubjectsOverlap(pattern, pattern) {
			t.Fatalf("%q does not overlap itself", pattern)
		}
	})
}

// wireReference is ValidateWire written the compatibility target's way, with encoding/json
// into maps. Decoding problems are reported with Message "" (wording is implementation-defined).
func wireReference(raw []byte) Problems {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Problems{{Field: ""}}
	}
	var ps Problems
	empty := func(r json.RawMessage) bool { return string(r) == `""` }
	for _, k := range []string{"in_reply_to", "supersedes", "urgency", "expects_reply"} {
		if r, ok := m[k]; ok && empty(r) {
			ps = append(ps, Problem{k, k + " must not be empty"})
		}
	}
	if r, ok := m["sender"]; ok {
		var sm map[string]json.RawMessage
		if err := json.Unmarshal(r, &sm); err != nil {
			ps = append(ps, Problem{Field: "sender"})
		} else if r, ok := sm["session_id"]; ok && empty(r) {
			ps = append(ps, Problem{"sender.session_id", "sender.session_id must not be empty"})
		}
	}
	return ps
}

// mirror has the envelope's fields and tags but no JSON methods, for the json v2 oracle (which is
// case-sensitive and refuses duplicate names and invalid UTF-8, like Decode).
type mirror struct {
	EventID        string        `json:"event_id"`
	Source         string        `json:"source"`
	SourceEventID  string        `json:"source_event_id"`
	SourceSession  string        `json:"source_session"`
	Topic          string        `json:"topic"`
	DedupeKey      string        `json:"dedupe_key"`
	IssuedAt       int64         `json:"issued_at"`
	ExpiresAt      *int64        `json:"expires_at"`
	PayloadSummary string        `json:"payload_summary"`
	PayloadRef     string        `json:"payload_ref"`
	Payload        string        `json:"payload"`
	TraceID        string        `json:"trace_id"`
	Sender         *mirrorSender `json:"sender"`
	InReplyTo      string        `json:"in_reply_to"`
	Supersedes     string        `json:"supersedes"`
	Urgency        string        `json:"urgency"`
	ExpectsReply   string        `json:"expects_reply"`
}

type mirrorSender struct {
	SessionID string   `json:"session_id"`
	Machine   string   `json:"machine"`
	Cwd       string   `json:"cwd"`
	Title     string   `json:"title"`
	Roles     []string `json:"roles"`
}

func sameProblems(got, want Problems) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if got[i].Field != want[i].Field || (want[i].Message != "" && got[i].Message != want[i].Message) {
			return false
		}
	}
	return true
}

var validationMessages = map[string]bool{
	MsgEventIDRequired: true, MsgSourceRequired: true, MsgSourceEventIDRequired: true, MsgTopicRequired: true,
	MsgDedupeKeyRequired: true, MsgIssuedAtMustBeSet: true, MsgPayloadSummaryRequired: true, MsgTraceIDRequired: true,
	MsgInReplyToNotEmpty: true, MsgSupersedesNotEmpty: true, MsgSourceEnum: true, MsgUrgencyEnum: true,
	MsgExpectsReplyEnum: true, MsgSenderSessionIDRequired: true, MsgUrgencyNotEmpty: true,
	MsgExpectsReplyNotEmpty: true, MsgSenderSessionIDNotEmpty: true,
}

// FuzzDecode checks Decode and ValidateWire: ValidateWire against the map-based reference;
// Decode's list starts with the wire problems; Decode refuses to decode exactly when the json v2
// oracle does (outside the strict layer's own extra limits); and a decoded envelope re-encodes
// canonically and decodes back to itself with the same Validate problems.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(vJSON("")))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(vJSON(`"sender":{"session_id":"","roles":["a",null]},"urgency":""`)))
	f.Add([]byte(vJSON(`"in_reply_to":"","in_reply_to":"x"`)))
	f.Add([]byte(strings.Replace(vJSON(""), "1760000000000", "1.0", 1)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		wire := ValidateWire(raw)
		if ref := wireReference(raw); !sameProblems(wire, ref) {
			t.Fatalf("ValidateWire(%q) = %+v, reference %+v", raw, wire, ref)
		}
		e, ps := Decode(raw)
		if len(ps) < len(wire) || !slices.Equal(ps[:len(wire)], wire) {
			t.Fatalf("Decode(%q) = %+v does not start with the wire problems %+v", raw, ps, wire)
		}
		decodingProblem := false
		for _, p := range ps {
			if p.Message == "" {
				t.Fatalf("empty message in %+v", ps)
			}
			if !validationMessages[p.Message] {
				decodingProblem = true
			}
		}
		_, strictErr := jsonvalue.Parse(raw, "")
		var m mirror
		oracleErr := jsonv2.Unmarshal(raw, &m)
		extraLimit := strictErr != nil && (strings.HasSuffix(strictErr.Error(), jsonvalue.SuffixTooDeep) ||
			strings.HasSuffix(strictErr.Error(), jsonvalue.SuffixNotFinite) ||
			strings.HasSuffix(strictErr.Error(), jsonvalue.SuffixUnpaired))
		if !extraLimit && decodingProblem != (oracleErr != nil) {
			t.Fatalf("Decode(%q): decoding problem %v (%+v), json v2 error %v", raw, decodingProblem, ps, oracleErr)
		}
		if decodingProblem {
			return
		}
		if got := e.Validate(); !slices.Equal(ps[len(wire):], got) {
			t.Fatalf("Decode(%q) tail %+v, Validate %+v", raw, ps[len(wire):], got)
		}
		enc := e.AppendJSON(nil)
		e2, ps2 := Decode(enc)
		if !bytes.Equal(e2.AppendJSON(nil), enc) {
			t.Fatalf("round trip of %q:\n%s\n%s", raw, enc, e2.AppendJSON(nil))
		}
		// Re-encoding drops empty optionals, so only an empty sender.session_id stays a wire problem.
		want := e.Validate()
		if e.Sender != nil && e.Sender.SessionID == "" {
			want = append(Problems{{"sender.session_id", MsgSenderSessionIDNotEmpty}}, want...)
		}
		if !slices.Equal(ps2, want) {
			t.Fatalf("Decode(encode) of %q = %+v, want %+v", raw, ps2, want)
		}
	})
}
