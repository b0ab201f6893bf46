package events

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/jsonvalue"
)

// The one-pass path of ParseEvent (eventdoc.go) against the value-model path it replaced, kept
// here as the oracle: jsonvalue.Parse, then validateEvent (CloneEvent's checker), the
// fingerprint by jsonvalue.FingerprintOf and the encoding by jsonvalue.AppendEncoded of the
// parsed tree, the typed payload by the value-model checker, and one reducer step computed on
// the generic tree.

// oracleEvent is what the value-model path says about data: a fault, or the parsed object.
func oracleEvent(data []byte) (*Object, error) {
	v, err := jsonvalue.Parse(data, eventLabel)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, notJSONObject(eventLabel)
	}
	return o, validateEvent(o)
}

// checkDifferential compares ParseEvent with the oracle on data.
func checkDifferential(t *testing.T, data []byte) {
	t.Helper()
	ev, err := ParseEvent(data)
	o, oerr := oracleEvent(data)
	if (err == nil) != (oerr == nil) || err != nil && (err.Error() != oerr.Error() || errKind(err) != errKind(oerr)) {
		t.Fatalf("%q:\nParseEvent %T %v\noracle     %T %v", data, err, err, oerr, oerr)
	}
	if err != nil {
		if ev.Valid() {
			t.Fatalf("%q: a fault with a valid Event", data)
		}
		return
	}
	if got, want := ev.AppendJSON(nil), jsonvalue.AppendEncoded(nil, o); !bytes.Equal(got, want) {
		t.Fatalf("%q: encoding\n%s\nwant\n%s", data, got, want)
	}
	if got, want := ev.Fingerprint(), jsonvalue.FingerprintOf(o); got != want {
		t.Fatalf("%q: fingerprint %s, want %s", data, got, want)
	}
	str := func(name string) string { v, _ := o.Get(name); return v.(string) }
	num := func(name string) int64 { v, _ := o.Get(name); return int64(v.(float64)) }
	typ, _ := o.Get("type")
	if ev.EventID() != str("eventId") || ev.RunID() != str("runId") || ev.SessionID() != str("sessionId") ||
		ev.PhaseID() != str("phaseId") || ev.Timestamp() != str("timestamp") || string(ev.Type()) != typ.(string) ||
		ev.LogicalSequence() != num("logicalSequence") || ev.Sequence() != num("sequence") {
		t.Fatalf("%q: envelope differs", data)
	}
	var f fields
	f.fill(objView{o: o})
	ck := checker{}
	_, want, _ := ck.payload(&f, true)
	if got := ev.Payload(); !samePayload(got, want) {
		t.Fatalf("%q: payload %#v, want %#v", data, got, want)
	}
	if !jsonvalue.Equal(ev.Value(), o) {
		t.Fatalf("%q: Value differs", data)
	}

	// CloneEvent of the parsed tree builds the same Event.
	cev, err := CloneEvent(o)
	if err != nil || cev.Fingerprint() != ev.Fingerprint() || !bytes.Equal(cev.AppendJSON(nil), ev.AppendJSON(nil)) {
		t.Fatalf("%q: CloneEvent %v", data, err)
	}

	// One reducer step from a state prepared for the event, against the step computed on the
	// generic tree.
	prep, next := reducerStep(o, want)
	st, err := DecodeReducerState(jsonvalue.AppendEncoded(nil, prep))
	if err != nil {
		t.Fatalf("%q: prepared state: %v", data, err)
	}
	for _, e := range []Event{ev, cev} {
		got, err := Reduce(st, e)
		if err != nil {
			t.Fatalf("%q: Reduce: %v", data, err)
		}
		if a, b := got.AppendJSON(nil), jsonvalue.AppendEncoded(nil, next); !bytes.Equal(a, b) {
			t.Fatalf("%q: reduced state\n%s\nwant\n%s", data, a, b)
		}
		// The step is an exact duplicate of itself.
		if again, err := Reduce(got, e); err != nil || again.EventCount() != got.EventCount() {
			t.Fatalf("%q: replay %v", data, err)
		}
	}
}

func errKind(err error) string {
	var je *JSONValidationError
	var ve *ValidationError
	switch {
	case errors.As(err, &je):
		return "json"
	case errors.As(err, &ve):
		return "validation"
	}
	return "other"
}

// samePayload compares two payloads; JSON values are compared as JSON.
func samePayload(a, b Payload) bool {
	enc := func(p Payload) string {
		var parts []string
		add := func(v ...any) {
			for _, x := range v {
				switch y := x.(type) {
				case string:
					parts = append(parts, strconv.Quote(y))
				case *string:
					if y == nil {
						parts = append(parts, "<nil>")
					} else {
						parts = append(parts, "*"+strconv.Quote(*y))
					}
				case *bool:
					if y == nil {
						parts = append(parts, "<nil>")
					} else {
						parts = append(parts, strconv.FormatBool(*y))
					}
				default:
					parts = append(parts, string(jsonvalue.AppendEncoded(nil, x)))
				}
			}
		}
		contentParts := func(cs []ContentPart) {
			add(len(cs) == 0)
			for _, c := range cs {
				add(c.Type, c.Raw)
			}
		}
		switch x := p.(type) {
		case RunStarted:
			add("run.started")
		case MessageStarted:
			add(x.MessageID, string(x.Role))
		case MessagePartDelta:
			add(x.MessageID, x.Part.Type, x.Part.Raw)
		case MessageCompleted:
			add(x.MessageID, string(x.Role), x.RawContent)
			contentParts(x.Content)
		case ToolCalled:
			r := x.ToolCall
			add(r.ToolCallID, r.Name, r.Input, r.Raw)
		case ToolProgress:
			add(x.ToolCallID, x.RawContent)
			contentParts(x.Content)
		case ToolCompleted:
			r := x.Result
			add(r.ToolCallID, r.Name, r.Input, r.Output, r.IsError, r.Raw)
		case ToolFailed:
			r := x.Error
			add(r.ToolCallID, r.Name, r.Input, r.Error, r.Code, r.Raw)
		case InterruptRequired:
			r := x.Interrupt
			add(r.Kind, r.InterruptID, r.Prompt, r.Raw)
		case InterruptResolved:
			add(x.InterruptID, x.Decisions)
		case UsageUpdated:
			add(x.Usage.Raw)
		case RunCompleted:
			add(x.FinishReason, x.RawContent)
			contentParts(x.Content)
			if x.Usage != nil {
				add(x.Usage.Raw)
			}
			if x.Limit != nil {
				add(x.Limit.Kind, x.Limit.Raw)
			}
		case RunFailed:
			add(x.Code, x.Message)
			if x.Limit != nil {
				add(x.Limit.Kind, x.Limit.Raw)
			}
		case RunCancelled:
			add(x.Reason)
			if x.Limit != nil {
				add(x.Limit.Kind, x.Limit.Raw)
			}
		default:
			return "?"
		}
		return strings.Join(parts, "\x00")
	}
	return enc(a) == enc(b) && enc(a) != "?"
}

// reducerStep builds, from the parsed event o and its payload p, a state that accepts the event
// (same run and session, the keys the type rule looks up present) and the state that applying
// the event must give (events.md §8.3 step 11 and the type rule of §8.4), both as generic
// objects in §8.1 member order.
func reducerStep(o *Object, p Payload) (prep, next *Object) {
	get := func(name string) any { v, _ := o.Get(name); return v }
	fp := jsonvalue.FingerprintOf(o)
	st := func() *Object {
		return jsonvalue.ObjectOf(
			"protocolVersion", 1.0, "runId", get("runId"), "sessionId", get("sessionId"), "status", "running",
			"messages", []any{}, "toolCalls", []any{}, "toolProgress", []any{}, "toolResults", []any{},
			"toolErrors", []any{}, "interrupt", nil, "interruptResolution", nil,
			"usage", jsonvalue.ObjectOf("inputTokens", 1.0), "limit", jsonvalue.ObjectOf("kind", "prior"),
			"finishReason", nil, "errorCode", nil, "cancellationReason", nil,
			"lastSequence", 0.0, "lastLogicalSequence", -1.0, "lastPhaseId", nil,
			"eventIds", []any{}, "eventFingerprints", jsonvalue.NewObject(0),
		)
	}
	prep, next = st(), st()
	both := func(name string, v func() any) { prep.Set(name, v()); next.Set(name, v()) }
	priorPart := func() any { return jsonvalue.ObjectOf("type", "text", "text", "prior") }
	priorMessage := func(id string) func() any {
		return func() any {
			return []any{jsonvalue.ObjectOf("messageId", id, "role", "user", "content", []any{priorPart()})}
		}
	}
	priorCall := func(id string) func() any {
		return func() any {
			return []any{jsonvalue.ObjectOf("toolCallId", id, "name", "prior", "input", jsonvalue.NewObject(0))}
		}
	}
	switch x := p.(type) {
	case RunStarted:
		prep.Set("status", "waiting")
	case MessageStarted:
		prep.Set("messages", priorMessage(x.MessageID)())
		next.Set("messages", []any{jsonvalue.ObjectOf("messageId", x.MessageID, "role", string(x.Role), "content", []any{})})
	case MessagePartDelta:
		prep.Set("messages", priorMessage(x.MessageID)())
		next.Set("messages", []any{jsonvalue.ObjectOf("messageId", x.MessageID, "role", "user", "content", []any{priorPart(), x.Part.Raw})})
	case MessageCompleted:
		prep.Set("messages", priorMessage(x.MessageID)())
		next.Set("messages", []any{jsonvalue.ObjectOf("messageId", x.MessageID, "role", string(x.Role), "content", x.RawContent)})
	case ToolCalled:
		next.Set("toolCalls", []any{x.ToolCall.Raw})
	case ToolProgress:
		both("toolCalls", priorCall(x.ToolCallID))
		prep.Set("toolProgress", []any{jsonvalue.ObjectOf("toolCallId", x.ToolCallID, "content", []any{priorPart()})})
		next.Set("toolProgress", []any{jsonvalue.ObjectOf("toolCallId", x.ToolCallID, "content", x.RawContent)})
	case ToolCompleted:
		id := x.Result.ToolCallID
		both("toolCalls", priorCall(id))
		prep.Set("toolResults", []any{jsonvalue.ObjectOf("toolCallId", id, "name", "prior", "input", jsonvalue.NewObject(0), "output", nil)})
		next.Set("toolResults", []any{x.Result.Raw})
	case ToolFailed:
		id := x.Error.ToolCallID
		both("toolCalls", priorCall(id))
		prep.Set("toolErrors", []any{jsonvalue.ObjectOf("toolCallId", id, "name", "prior", "input", jsonvalue.NewObject(0), "error", "prior")})
		next.Set("toolErrors", []any{x.Error.Raw})
	case InterruptRequired:
		prep.Set("interruptResolution", jsonvalue.ObjectOf("interruptId", "prior", "decisions", []any{}))
		next.Set("interrupt", x.Interrupt.Raw)
		next.Set("status", "waiting")
	case InterruptResolved:
		prep.Set("interrupt", jsonvalue.ObjectOf("kind", "custom", "interruptId", x.InterruptID, "prompt", "prior", "actions", []any{}))
		next.Set("interruptResolution", jsonvalue.ObjectOf("interruptId", x.InterruptID, "decisions", x.Decisions))
	case UsageUpdated:
		next.Set("usage", x.Usage.Raw)
	case RunCompleted:
		next.Set("status", "completed")
		next.Set("finishReason", x.FinishReason)
		if x.Usage != nil {
			next.Set("usage", x.Usage.Raw)
		}
		if x.Limit != nil {
			next.Set("limit", x.Limit.Raw)
		}
	case RunFailed:
		next.Set("status", "failed")
		next.Set("errorCode", x.Code)
		if x.Limit != nil {
			next.Set("limit", x.Limit.Raw)
		}
	case RunCancelled:
		next.Set("status", "cancelled")
		if x.Reason != nil {
			next.Set("cancellationReason", *x.Reason)
		}
		if x.Limit != nil {
			next.Set("limit", x.Limit.Raw)
		}
	}
	next.Set("lastSequence", get("sequence"))
	next.Set("lastLogicalSequence", get("logicalSequence"))
	next.Set("lastPhaseId", get("phaseId"))
	next.Set("eventIds", []any{get("eventId")})
	next.Set("eventFingerprints", jsonvalue.ObjectOf(get("eventId").(string), fp))
	return prep, next
}

// differentialSeeds are events of every type with the shapes the one-pass path treats apart:
// escapes in names and values, numbers whose encoding differs from the literal, white space,
// members in canonical order and not, unknown members, and faults of every rule.
var differentialSeeds = []string{
	`{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hel"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`,
	` { "eventId" : "e\u0031" , "logicalSequence" : 3.0 , "messageId" : "m\"1" , "part" : { "text" : "a\/b\u00e9" , "type" : "reasoning" } , "phaseId" : "p" , "protocolVersion" : 1e0 , "runId" : "r" , "sequence" : -0 , "sessionId" : "s" , "timestamp" : "t" , "type" : "message.part.delta" } `,
	`{"type":"run.started","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.started","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t","x":1}`,
	`{"type":"message.started","messageId":"m","role":"tool","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t","\u0000odd\"name":[1e21,1e-7,0.1]}`,
	`{"type":"message.completed","messageId":"m","role":"user","content":[{"type":"image","url":"u","mimeType":"image/png"},{"type":"file","data":"ZA==","name":"n"},{"type":"citation","url":"u","title":"t"},{"type":"custom","name":"c","data":null},{"type":"tool-call","toolCall":{"toolCallId":"c","name":"n","input":{}}},{"type":"tool-result","result":{"toolCallId":"c","name":"n","input":{},"output":[1,{"b":2,"a":1}],"isError":true}},{"type":"audio","fileId":"f"},{"type":"video","data":"d"}],"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"tool.called","toolCall":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo","z":{"y":1,"x":[{"b":1,"a":2}]}}},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"tool.progress","toolCallId":"c-1","content":[],"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"tool.completed","result":{"toolCallId":"c-1","name":"n","input":{"a":1},"output":null},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"tool.failed","error":{"toolCallId":"c-1","name":"n","input":{},"error":"boom","code":"x"},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"interrupt.required","interrupt":{"kind":"tool-approval","interruptId":"","prompt":"p","actions":[{"id":"a","name":"n","input":null}],"payload":{"k":[]}},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"interrupt.resolved","interruptId":"i","decisions":[{"approvalId":"a","approved":false},null,"x"],"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"usage.updated","usage":{"inputTokens":5,"cachedInputTokens":0,"outputTokens":2.5,"reasoningTokens":-0,"totalTokens":1e3,"costUsd":0.0042,"model":"m","provider":"p","extra":true},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.completed","finishReason":"stop","content":[{"type":"text","text":"x"}],"usage":{},"limit":{"kind":"steps","limit":10,"used":3},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.failed","code":"c","message":"m","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.cancelled","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t","limit":{"kind":"k"}}`,
	`{"type":"run.cancelled","reason":"why","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.cancelled","reason":null,"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run.paused","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"run\nx","protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"type":"message.part.delta","messageId":"m","part":{"type":"image","url":null,"fileId":"f"},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":1,"sequence":1,"timestamp":"t"}`,
	`{"protocolVersion":[[1,{"toString":2}],null,"x",true],"type":"run.started"}`,
	`{"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","logicalSequence":9007199254740992,"sequence":1,"timestamp":"t"}`,
	`{"a":1,"a":2}`, `[]`, `"x"`, `{"type":"run.started",}`, "{\"runId\":\"\xff\"}", `{"x":"\ud800"}`, `{"x":1e400}`,
}

func TestParseEventDifferential(t *testing.T) {
	for _, s := range differentialSeeds {
		checkDifferential(t, []byte(s))
	}
	for _, s := range corpusSeeds(t) {
		checkDifferential(t, s)
	}
}

// corpusSeeds returns the inputs of the FuzzDecodeEvent and FuzzReduce corpora (each line of
// the latter) and of the reducer goldens.
func corpusSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range []string{"FuzzDecodeEvent", "FuzzReduce"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				if rest, ok := strings.CutPrefix(line, "[]byte("); ok {
					if s, err := strconv.Unquote(strings.TrimSuffix(rest, ")")); err == nil {
						out = append(out, bytes.Split([]byte(s), []byte("\n"))...)
					}
				}
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "reducer", "*.ndjson"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Split(b, []byte("\n"))...)
	}
	return out
}

// FuzzParseEventDifferential holds ParseEvent's one-pass path to the value-model oracle on
// arbitrary bytes: the same fault (message and kind), or the same event (encoding,
// fingerprint, envelope, payload, Value, CloneEvent's Event) and the same reducer step.
func FuzzParseEventDifferential(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add([]byte(s))
	}
	for _, s := range corpusSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDifferential(t, data) })
}

// TestMemberSlot checks the perfect hash of the looked-at member names: each finds itself, and
// names that differ from one of them in one byte, or by a byte more or less, find nothing.
func TestMemberSlot(t *testing.T) {
	for i, name := range memberNames {
		if got := memberSlot(name); got != i {
			t.Fatalf("memberSlot(%q) = %d, want %d", name, got, i)
		}
		variants := []string{name[1:], name[:len(name)-1], name + "s", "x" + name, strings.ToUpper(name[:1]) + name[1:]}
		for k := range len(name) {
			variants = append(variants, name[:k]+"_"+name[k+1:])
		}
		for _, v := range variants {
			if got := memberSlot(v); got >= 0 && memberNames[got] != v {
				t.Fatalf("memberSlot(%q) = %d (%q)", v, got, memberNames[got])
			}
		}
	}
	for k, name := range map[int]string{mProtocolVersion: "protocolVersion", mSequence: "sequence", mType: "type",
		mMessageID: "messageId", mToolCallID: "toolCallId", mInterruptID: "interruptId", mReason: "reason"} {
		if memberNames[k] != name {
			t.Fatalf("constant for %q names %q", name, memberNames[k])
		}
	}
	for _, v := range []string{"", "a", "__proto__", "protocolversion", "toString", "constructor"} {
		if got := memberSlot(v); got != -1 {
			t.Fatalf("memberSlot(%q) = %d", v, got)
		}
	}
}
