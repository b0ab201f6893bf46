package conformance_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/jsonvalue"
)

// The envelope corpus: conformance/envelope/*.json (format in conformance/envelope/README.md).
const envelopeDir = "envelope"

// envOpMembers lists, per op, the case members besides name, spec, op and expect, and the
// members its expect object may hold.
var envOpMembers = map[string]struct{ members, expect []string }{
	"decode":                {[]string{"text", "textHex"}, []string{"wire", "decode", "validate", "encoded"}},
	"subject":               {[]string{"kind", "args"}, []string{"subject"}},
	"subject-validity":      {[]string{"subject", "subjectRepeat"}, []string{"publish", "subscribe"}},
	"match":                 {[]string{"pattern", "subject"}, []string{"match"}},
	"overlap":               {[]string{"a", "b"}, []string{"overlap"}},
	"dedupe":                {[]string{"envelope"}, []string{"namesItsEvent", "transport", "messageId"}},
	"stream-subject":        {[]string{"subject"}, []string{"streamSubject"}},
	"merge-stream-subjects": {[]string{"deployed"}, []string{"subjects"}},
	"constant":              {[]string{"constant"}, []string{"value"}},
	"delivery-exception":    {[]string{"text", "reason", "recipientSession", "id", "traceId", "issuedAt"}, []string{"text", "none"}},
}

var envSpecRE = regexp.MustCompile(`^§[1-7](\.[0-9]+)?$`)

// envValidationMessages are the spec's exact messages (§2.2, §2.3); any other message is a
// decoding problem, whose wording is implementation-defined.
var envValidationMessages = map[string]bool{
	envelope.MsgEventIDRequired: true, envelope.MsgSourceRequired: true, envelope.MsgSourceEventIDRequired: true,
	envelope.MsgTopicRequired: true, envelope.MsgDedupeKeyRequired: true, envelope.MsgIssuedAtMustBeSet: true,
	envelope.MsgPayloadSummaryRequired: true, envelope.MsgTraceIDRequired: true, envelope.MsgInReplyToNotEmpty: true,
	envelope.MsgSupersedesNotEmpty: true, envelope.MsgSourceEnum: true, envelope.MsgUrgencyEnum: true,
	envelope.MsgExpectsReplyEnum: true, envelope.MsgSenderSessionIDRequired: true, envelope.MsgUrgencyNotEmpty: true,
	envelope.MsgExpectsReplyNotEmpty: true, envelope.MsgSenderSessionIDNotEmpty: true,
}

func TestEnvelopeCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(envelopeDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files in %s: %v", envelopeDir, err)
	}
	names := map[string]string{}
	section7 := map[int]bool{}
	total := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonvalue.ParseObject(raw, file)
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Keys(); !slices.Equal(got, []string{"description", "cases"}) {
			t.Fatalf("%s: top-level members %q", file, got)
		}
		if d, _ := doc.Get("description"); envStr(d) == "" {
			t.Fatalf("%s: empty description", file)
		}
		cs, _ := doc.Get("cases")
		list, ok := cs.([]any)
		if !ok || len(list) == 0 {
			t.Fatalf("%s: cases must be a non-empty array", file)
		}
		for i, c := range list {
			o, ok := c.(*jsonvalue.Object)
			if !ok {
				t.Fatalf("%s: case %d is not an object", file, i)
			}
			name := envStr(envGet(o, "name"))
			if name == "" {
				t.Fatalf("%s: case %d has no name", file, i)
			}
			if prev, dup := names[name]; dup {
				t.Fatalf("%s: case name %q already used in %s", file, name, prev)
			}
			names[name] = file
			spec := envStr(envGet(o, "spec"))
			if !envSpecRE.MatchString(spec) {
				t.Fatalf("%s/%s: spec %q", file, name, spec)
			}
			if n, ok := strings.CutPrefix(spec, "§7."); ok {
				k, _ := strconv.Atoi(n)
				section7[k] = true
			}
			op := envStr(envGet(o, "op"))
			shape, ok := envOpMembers[op]
			if !ok {
				t.Fatalf("%s/%s: unknown op %q", file, name, op)
			}
			for _, k := range o.Keys() {
				if k != "name" && k != "spec" && k != "op" && k != "expect" && !slices.Contains(shape.members, k) {
					t.Fatalf("%s/%s: member %q not allowed for op %s", file, name, k, op)
				}
			}
			exp, ok := envGet(o, "expect").(*jsonvalue.Object)
			if !ok {
				t.Fatalf("%s/%s: expect must be an object", file, name)
			}
			for _, k := range exp.Keys() {
				if !slices.Contains(shape.expect, k) {
					t.Fatalf("%s/%s: expect member %q not allowed for op %s", file, name, k, op)
				}
			}
			total++
			t.Run(name, func(t *testing.T) { envRun(t, op, o, exp) })
		}
	}
	// Every conformance case of envelope.md §7 is pinned by at least one corpus case.
	for k := 1; k <= 50; k++ {
		if !section7[k] {
			t.Errorf("envelope.md §7 case %d has no corpus case", k)
		}
	}
	t.Logf("%d envelope cases in %d files", total, len(files))
}

func envRun(t *testing.T, op string, c, exp *jsonvalue.Object) {
	switch op {
	case "decode":
		raw := envText(t, c)
		wire := envelope.ValidateWire(raw)
		envCheckProblems(t, "ValidateWire", wire, envGet(exp, "wire"))
		e, ps := envelope.Decode(raw)
		envCheckProblems(t, "Decode", ps, envGet(exp, "decode"))
		if len(ps) > 0 && ps.First().Error() != ps[0].Message {
			t.Fatalf("First() = %q", ps.First())
		}
		if v, ok := exp.Get("validate"); ok {
			envCheckProblems(t, "Validate", e.Validate(), v)
		}
		if v, ok := exp.Get("encoded"); ok {
			if got := string(e.AppendJSON(nil)); got != envStr(v) {
				t.Fatalf("encoded\n got %s\nwant %s", got, envStr(v))
			}
		}
	case "subject":
		h, ok := envelope.LookupSubjectHelper(envStr(envGet(c, "kind")))
		if !ok {
			t.Fatalf("unknown kind %q", envStr(envGet(c, "kind")))
		}
		args := envStrings(t, envGet(c, "args"))
		if len(args) != len(h.Params) {
			t.Fatalf("%d args for %s %q", len(args), h.Kind, h.Params)
		}
		if got, want := h.Build(args...), envStr(envGet(exp, "subject")); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	case "subject-validity":
		s := envStr(envGet(c, "subject"))
		if r, ok := envGet(c, "subjectRepeat").(*jsonvalue.Object); ok {
			s = strings.Repeat(envStr(envGet(r, "text")), int(envGet(r, "times").(float64)))
		}
		envCheckErr(t, "ValidPublishSubject", envelope.ValidPublishSubject(s), envGet(exp, "publish"))
		envCheckErr(t, "ValidSubscribeSubject", envelope.ValidSubscribeSubject(s), envGet(exp, "subscribe"))
	case "match":
		got := envelope.MatchSubject(envStr(envGet(c, "pattern")), envStr(envGet(c, "subject")))
		if want := envGet(exp, "match").(bool); got != want {
			t.Fatalf("MatchSubject = %v, want %v", got, want)
		}
	case "overlap":
		a, b := envStr(envGet(c, "a")), envStr(envGet(c, "b"))
		want := envGet(exp, "overlap").(bool)
		if envelope.SubjectsOverlap(a, b) != want || envelope.SubjectsOverlap(b, a) != want {
			t.Fatalf("SubjectsOverlap != %v", want)
		}
	case "dedupe":
		o := envGet(c, "envelope").(*jsonvalue.Object)
		e := envelope.Envelope{
			Source:        envelope.Source(envStr(envGet(o, "source"))),
			SourceEventID: envStr(envGet(o, "source_event_id")),
			DedupeKey:     envStr(envGet(o, "dedupe_key")),
			Topic:         envStr(envGet(o, "topic")),
		}
		if got, want := envelope.DedupeKeyNamesItsEvent(e), envGet(exp, "namesItsEvent").(bool); got != want {
			t.Fatalf("DedupeKeyNamesItsEvent = %v, want %v", got, want)
		}
		if !o.Has("topic") {
			return
		}
		if got, want := envelope.PublishTransport(e.Topic).String(), envStr(envGet(exp, "transport")); got != want {
			t.Fatalf("transport %q, want %q", got, want)
		}
		id, ok := envelope.MessageID(e)
		want, hasID := envGet(exp, "messageId").(string)
		if ok != hasID || id != want {
			t.Fatalf("MessageID = %q, %v; want %v", id, ok, envGet(exp, "messageId"))
		}
	case "stream-subject":
		got, ok := envelope.StreamSubjectFor(envStr(envGet(c, "subject")))
		want, has := envGet(exp, "streamSubject").(string)
		if ok != has || got != want {
			t.Fatalf("StreamSubjectFor = %q, %v; want %v", got, ok, envGet(exp, "streamSubject"))
		}
	case "merge-stream-subjects":
		got := envelope.MergeStreamSubjects(envStrings(t, envGet(c, "deployed")))
		if want := envStrings(t, envGet(exp, "subjects")); !slices.Equal(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}
	case "constant":
		name := envStr(envGet(c, "constant"))
		got, ok := envConstants()[name]
		if !ok {
			t.Fatalf("unknown constant %q", name)
		}
		if want := envGet(exp, "value"); !jsonvalue.Equal(got, want) {
			t.Fatalf("%s = %#v, want %#v", name, got, want)
		}
	case "delivery-exception":
		orig, ps := envelope.Decode([]byte(envStr(envGet(c, "text"))))
		if len(ps) != 0 {
			t.Fatalf("original envelope has problems: %v", ps)
		}
		e, err := envelope.BuildDeliveryException(orig, envelope.ExceptionReason(envStr(envGet(c, "reason"))),
			envStr(envGet(c, "recipientSession")), envStr(envGet(c, "id")), envStr(envGet(c, "traceId")),
			int64(envGet(c, "issuedAt").(float64)))
		if exp.Has("none") {
			if !errors.Is(err, envelope.ErrExceptionForException) {
				t.Fatalf("want no exception, got %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(e.AppendJSON(nil)), envStr(envGet(exp, "text")); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
}

// envConstants maps every constant name the corpus may ask for to its JSON value.
func envConstants() map[string]any {
	m := map[string]any{
		"NotificationsStream":     envelope.NotificationsStream,
		"StreamSubjects":          envAnys(envelope.StreamSubjects()),
		"SubjectSegmentReplaced":  envelope.SubjectSegmentReplaced,
		"RoleForwardDedupePrefix": envelope.RoleForwardDedupePrefix,
		"ExceptionDedupePrefix":   envelope.ExceptionDedupePrefix,
		"MaxSubjectBytes":         float64(envelope.MaxSubjectBytes),
	}
	for _, c := range envelope.TypeScriptConstants() {
		switch v := c.Value.(type) {
		case string:
			m[c.Name] = v
		case int64:
			m[c.Name] = float64(v)
		case []string:
			m[c.Name] = envAnys(v)
		default:
			panic(fmt.Sprintf("constant %s of type %T", c.Name, v))
		}
	}
	for _, e := range envelope.TypeScriptEnums() {
		m[e.Tuple] = envAnys(e.Values)
	}
	return m
}

func envAnys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func envGet(o *jsonvalue.Object, name string) any {
	v, _ := o.Get(name)
	return v
}

func envStr(v any) string {
	s, _ := v.(string)
	return s
}

func envStrings(t *testing.T, v any) []string {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("want an array of strings, got %T", v)
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			t.Fatalf("element %d is %T", i, x)
		}
		out[i] = s
	}
	return out
}

// envText returns the raw bytes of a case's "text" or "textHex".
func envText(t *testing.T, c *jsonvalue.Object) []byte {
	t.Helper()
	if h, ok := c.Get("textHex"); ok {
		if c.Has("text") {
			t.Fatal("both text and textHex")
		}
		b, err := hex.DecodeString(envStr(h))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v, ok := c.Get("text")
	if !ok {
		t.Fatal("no text")
	}
	return []byte(envStr(v))
}

// envCheckProblems compares a problem list with the expected list: each expected problem is
// {"field", "message"} (both exact) or {"decoding": true} with an optional exact "field" (the
// message of a decoding problem is implementation-defined, but is none of the spec's messages).
func envCheckProblems(t *testing.T, what string, got envelope.Problems, want any) {
	t.Helper()
	list, ok := want.([]any)
	if !ok {
		t.Fatalf("%s: expected list missing", what)
	}
	if len(got) != len(list) {
		t.Fatalf("%s: got %d problems %+v, want %d %s", what, len(got), got, len(list), jsonvalue.AppendEncoded(nil, want))
	}
	for i, w := range list {
		wo := w.(*jsonvalue.Object)
		g := got[i]
		field, hasField := wo.Get("field")
		if hasField && g.Field != envStr(field) {
			t.Fatalf("%s[%d]: field %q, want %q (%+v)", what, i, g.Field, envStr(field), g)
		}
		if d, _ := wo.Get("decoding"); d == true {
			if g.Message == "" || envValidationMessages[g.Message] {
				t.Fatalf("%s[%d]: %+v is not a decoding problem", what, i, g)
			}
			continue
		}
		if !hasField {
			t.Fatalf("%s[%d]: expected problem without field", what, i)
		}
		if m := envStr(envGet(wo, "message")); g.Message != m {
			t.Fatalf("%s[%d]: message %q, want %q", what, i, g.Message, m)
		}
	}
}

func envCheckErr(t *testing.T, what string, err error, want any) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v, want valid", what, err)
		}
		return
	}
	if err == nil || err.Error() != envStr(want) {
		t.Fatalf("%s: %v, want %q", what, err, want)
	}
}
