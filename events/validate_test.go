package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Error kinds as the tables name them.
const (
	kindNone = ""
	kindJSON = "JSONValidationError"
	kindVal  = "ValidationError"
)

// valPayloads holds a valid payload for each event type (events.md §4.3).
var valPayloads = map[string]string{
	"run.started":        `{}`,
	"message.started":    `{"messageId":"m-1","role":"assistant"}`,
	"message.part.delta": `{"messageId":"m-1","part":{"type":"text","text":"Hel"}}`,
	"message.completed":  `{"messageId":"m-1","role":"assistant","content":[{"type":"text","text":"Hello"}]}`,
	"tool.called":        `{"toolCall":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"}}}`,
	"tool.progress":      `{"toolCallId":"c-1","content":[{"type":"text","text":"fetching"}]}`,
	"tool.completed":     `{"result":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"output":{"temp":3},"isError":false}}`,
	"tool.failed":        `{"error":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"error":"boom","code":"tool_execution_failed"}}`,
	"interrupt.required": `{"interrupt":{"kind":"tool-approval","interruptId":"i-1","prompt":"Tool execution requires approval.","actions":[{"id":"a-1","name":"weather","input":{"city":"Oslo"}}],"payload":null}}`,
	"interrupt.resolved": `{"interruptId":"i-1","decisions":[{"approvalId":"a-1","approved":true}]}`,
	"usage.updated":      `{"usage":{"inputTokens":5,"outputTokens":2,"model":"m","provider":"p"}}`,
	"run.completed":      `{"finishReason":"stop","content":[],"usage":{"totalTokens":7},"limit":{"kind":"steps","limit":10,"used":3}}`,
	"run.failed":         `{"code":"agent_execution_failed","message":"failed","limit":{"kind":"tokens"}}`,
	"run.cancelled":      `{"reason":"user"}`,
}

const valEnvelope = `{"protocolVersion":1,"eventId":"run-1:2","runId":"run-1","sessionId":"s-1","phaseId":"p-1","timestamp":"2025-01-01T00:00:00.100Z","logicalSequence":2,"sequence":2}`

// valDelete marks a member to remove in valEvent's modifications.
const valDelete = "<delete>"

func valParse(t testing.TB, text string) any {
	t.Helper()
	v, err := jsonvalue.Parse([]byte(text), "test")
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", text, err)
	}
	return v
}

// valEvent builds a valid event of type typ and applies mods: pairs of member name and JSON text
// (or valDelete). An existing member is replaced in place, a new one appended.
func valEvent(t testing.TB, typ string, mods ...string) *events.Object {
	t.Helper()
	o := valParse(t, valEnvelope).(*events.Object)
	o.Set("type", typ)
	if p, ok := valPayloads[typ]; ok {
		for _, m := range valParse(t, p).(*events.Object).Members() {
			o.Set(m.Name, m.Value)
		}
	}
	for i := 0; i < len(mods); i += 2 {
		if mods[i+1] == valDelete {
			o.Delete(mods[i])
			continue
		}
		o.Set(mods[i], valParse(t, mods[i+1]))
	}
	return o
}

func valText(t testing.TB, o *events.Object) []byte {
	t.Helper()
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// valToGo converts a value-model value to plain Go maps and slices.
func valToGo(v any) any {
	switch x := v.(type) {
	case *events.Object:
		m := make(map[string]any, x.Len())
		for _, mem := range x.Members() {
			m[mem.Name] = valToGo(mem.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = valToGo(e)
		}
		return out
	}
	return v
}

// valCheckErr checks an error's message and kind; want "" means no error.
func valCheckErr(t *testing.T, route string, err error, want, kind string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("%s: unexpected error %T %q", route, err, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: accepted, want %q", route, want)
	}
	if err.Error() != want {
		t.Fatalf("%s: error\n got %q\nwant %q", route, err.Error(), want)
	}
	valCheckKind(t, route, err, kind)
}

func valCheckKind(t *testing.T, route string, err error, kind string) {
	t.Helper()
	var je *events.JSONValidationError
	var ve *events.ValidationError
	var re *events.ReduceError
	isJ, isV, isR := errors.As(err, &je), errors.As(err, &ve), errors.As(err, &re)
	switch {
	case isR:
		t.Fatalf("%s: %q is a ReduceError", route, err)
	case kind == kindJSON && (!isJ || isV):
		t.Fatalf("%s: %q is %T, want *JSONValidationError", route, err, err)
	case kind == kindVal && (!isV || isJ):
		t.Fatalf("%s: %q is %T, want *ValidationError", route, err, err)
	}
	if errors.Unwrap(err) != nil {
		t.Fatalf("%s: %q wraps another error", route, err)
	}
}

func valKind(err error) string {
	var je *events.JSONValidationError
	var ve *events.ValidationError
	switch {
	case err == nil:
		return kindNone
	case errors.As(err, &je):
		return kindJSON
	case errors.As(err, &ve):
		return kindVal
	}
	return "other"
}

type valCase struct {
	name string
	typ  string
	mods []string
	want string
	kind string
}

func valBad(name, typ, want, kind string, mods ...string) valCase {
	return valCase{name: name, typ: typ, mods: mods, want: want, kind: kind}
}

func valOK(name, typ string, mods ...string) valCase { return valBad(name, typ, "", kindNone, mods...) }

// valEventCases are events built from valid ones by modification; each is checked through
// ParseEvent (text), CloneEvent on the ordered object and CloneEvent on plain Go maps.
var valEventCases = []valCase{
	// §14 case 1, 25 and every type's valid form.
	valOK("1 run.started", "run.started"),
	valOK("valid message.started", "message.started"),
	valOK("valid message.part.delta", "message.part.delta"),
	valOK("valid message.completed", "message.completed"),
	valOK("valid tool.called", "tool.called"),
	valOK("valid tool.progress", "tool.progress"),
	valOK("valid tool.completed", "tool.completed"),
	valOK("valid tool.failed", "tool.failed"),
	valOK("valid interrupt.required", "interrupt.required"),
	valOK("valid interrupt.resolved", "interrupt.resolved"),
	valOK("valid usage.updated", "usage.updated"),
	valOK("valid run.completed", "run.completed"),
	valOK("valid run.failed", "run.failed"),
	valOK("valid run.cancelled", "run.cancelled"),

	// §4.1 protocol version display (cases 2, 3, 4 and §12(h)).
	valBad("2 protocolVersion absent", "run.started", "Unsupported Agent event protocol version: undefined.", kindVal, "protocolVersion", valDelete),
	valBad("3 protocolVersion string", "run.started", "Unsupported Agent event protocol version: 1.", kindVal, "protocolVersion", `"1"`),
	valBad("3 protocolVersion 2", "run.started", "Unsupported Agent event protocol version: 2.", kindVal, "protocolVersion", `2`),
	valBad("3 protocolVersion null", "run.started", "Unsupported Agent event protocol version: null.", kindVal, "protocolVersion", `null`),
	valBad("13 protocolVersion 3", "run.started", "Unsupported Agent event protocol version: 3.", kindVal, "protocolVersion", `3`),
	valOK("4 protocolVersion 1.0", "run.started", "protocolVersion", `1.0`),
	valOK("protocolVersion 1e0", "run.started", "protocolVersion", `10e-1`),
	valBad("protocolVersion true", "run.started", "Unsupported Agent event protocol version: true.", kindVal, "protocolVersion", `true`),
	valBad("protocolVersion false", "run.started", "Unsupported Agent event protocol version: false.", kindVal, "protocolVersion", `false`),
	valBad("protocolVersion 1.5", "run.started", "Unsupported Agent event protocol version: 1.5.", kindVal, "protocolVersion", `1.5`),
	valBad("protocolVersion -0", "run.started", "Unsupported Agent event protocol version: 0.", kindVal, "protocolVersion", `-0`),
	valBad("protocolVersion 1e21", "run.started", "Unsupported Agent event protocol version: 1e+21.", kindVal, "protocolVersion", `1e21`),
	valBad("protocolVersion 1e-7", "run.started", "Unsupported Agent event protocol version: 1e-7.", kindVal, "protocolVersion", `0.0000001`),
	valBad("protocolVersion empty string", "run.started", "Unsupported Agent event protocol version: .", kindVal, "protocolVersion", `""`),
	valBad("protocolVersion array", "run.started", "Unsupported Agent event protocol version: 1,2.", kindVal, "protocolVersion", `[1,2]`),
	valBad("protocolVersion [1]", "run.started", "Unsupported Agent event protocol version: 1.", kindVal, "protocolVersion", `[1]`),
	valBad("protocolVersion empty array", "run.started", "Unsupported Agent event protocol version: .", kindVal, "protocolVersion", `[]`),
	valBad("protocolVersion nested array with nulls", "run.started", "Unsupported Agent event protocol version: ,1,,a,true,[object Object].", kindVal, "protocolVersion", `[null,[1,null],"a",true,{"b":1}]`),
	valBad("protocolVersion object", "run.started", "Unsupported Agent event protocol version: [object Object].", kindVal, "protocolVersion", `{}`),
	valBad("protocolVersion object with toString", "run.started", "Unsupported Agent event protocol version: [object Object].", kindVal, "protocolVersion", `{"toString":"1"}`),
	valBad("protocolVersion array holding toString object", "run.started", "Unsupported Agent event protocol version: [object Object].", kindVal, "protocolVersion", `[{"toString":1}]`),

	// §4.2 envelope, in order (cases 6, 7, 71).
	valBad("6 eventId number", "run.started", "Agent event.eventId must be a string.", kindVal, "eventId", `5`),
	valOK("6 eventId empty", "run.started", "eventId", `""`),
	valBad("eventId absent", "run.started", "Agent event.eventId must be a string.", kindVal, "eventId", valDelete),
	valBad("runId null", "run.started", "Agent event.runId must be a string.", kindVal, "runId", `null`),
	valBad("runId absent", "run.started", "Agent event.runId must be a string.", kindVal, "runId", valDelete),
	valBad("sessionId array", "run.started", "Agent event.sessionId must be a string.", kindVal, "sessionId", `[]`),
	valBad("phaseId object", "run.started", "Agent event.phaseId must be a string.", kindVal, "phaseId", `{}`),
	valBad("timestamp number", "run.started", "Agent event.timestamp must be a string.", kindVal, "timestamp", `0`),
	valOK("timestamp free-form", "run.started", "timestamp", `"yesterday"`),
	valBad("7 logicalSequence -1", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", `-1`),
	valBad("7 logicalSequence 0.5", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", `0.5`),
	valBad("7 logicalSequence 2^53", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", `9007199254740992`),
	valBad("7 logicalSequence string", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", `"1"`),
	valBad("7 logicalSequence null", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", `null`),
	valBad("logicalSequence absent", "run.started", "Agent event.logicalSequence must be a non-negative safe integer.", kindVal, "logicalSequence", valDelete),
	valOK("7 logicalSequence max safe", "run.started", "logicalSequence", `9007199254740991`),
	valOK("logicalSequence -0", "run.started", "logicalSequence", `-0`),
	valOK("logicalSequence 0", "run.started", "logicalSequence", `0`),
	valOK("logicalSequence 3.0", "run.started", "logicalSequence", `3.0`),
	valBad("sequence 1e300", "run.started", "Agent event.sequence must be a non-negative safe integer.", kindVal, "sequence", `1e300`),
	valBad("sequence -0.5", "run.started", "Agent event.sequence must be a non-negative safe integer.", kindVal, "sequence", `-0.5`),
	valBad("sequence absent", "run.started", "Agent event.sequence must be a non-negative safe integer.", kindVal, "sequence", valDelete),
	valOK("sequence -0", "run.started", "sequence", `-0`),
	valBad("71 timestamp before logicalSequence", "run.started", "Agent event.timestamp must be a string.", kindVal, "timestamp", valDelete, "logicalSequence", `-1`),
	valBad("order: protocolVersion before eventId", "run.started", "Unsupported Agent event protocol version: 2.", kindVal, "protocolVersion", `2`, "eventId", `5`),
	valBad("order: eventId before type", "run.started", "Agent event.eventId must be a string.", kindVal, "eventId", `5`, "type", `7`),
	valBad("order: sequence before type", "run.started", "Agent event.sequence must be a non-negative safe integer.", kindVal, "sequence", `-1`, "type", `"run.paused"`),

	// §5.3 type (case 8).
	valBad("8 type number", "run.started", "Agent event.type must be a string.", kindVal, "type", `7`),
	valBad("type absent", "run.started", "Agent event.type must be a string.", kindVal, "type", valDelete),
	valBad("type null", "run.started", "Agent event.type must be a string.", kindVal, "type", `null`),
	valBad("8 type run.paused", "run.started", "Unknown Agent event type: run.paused.", kindVal, "type", `"run.paused"`),
	valBad("8 type __proto__", "run.started", "Unknown Agent event type: __proto__.", kindVal, "type", `"__proto__"`),
	valBad("type empty", "run.started", "Unknown Agent event type: .", kindVal, "type", `""`),
	valBad("type wrong case", "run.started", "Unknown Agent event type: Run.Started.", kindVal, "type", `"Run.Started"`),

	// §5.1 run.started unsupported fields and retained unknown members (cases 9, 10).
	valBad("9 run.started with foo", "run.started", "Agent event contains unsupported fields.", kindVal, "foo", `1`),
	valBad("run.started with null member", "run.started", "Agent event contains unsupported fields.", kindVal, "namespace", `null`),
	valBad("run.started with messageId", "run.started", "Agent event contains unsupported fields.", kindVal, "messageId", `"m"`),
	valOK("10 message.started with foo", "message.started", "foo", `{"bar":[1,2]}`),
	valOK("13 namespace is an unknown member", "message.started", "namespace", `["a","b"]`),
	valOK("unknown members everywhere", "tool.completed", "result", `{"toolCallId":"c","name":"n","input":{},"output":1,"extra":{"x":1}}`, "recoverable", `true`),
	valOK("__proto__ and constructor members", "message.started", "__proto__", `1`, "constructor", `2`, "toString", `3`),

	// Payload string members and role (cases 11, 12).
	valBad("11 reason null", "run.cancelled", "Agent event.reason must be a string.", kindVal, "reason", `null`),
	valOK("11 reason absent", "run.cancelled", "reason", valDelete),
	valBad("reason number", "run.cancelled", "Agent event.reason must be a string.", kindVal, "reason", `1`),
	valBad("12 role system", "message.started", "Agent event role is unsupported.", kindVal, "role", `"system"`),
	valBad("role absent", "message.started", "Agent event role is unsupported.", kindVal, "role", valDelete),
	valBad("role number", "message.started", "Agent event role is unsupported.", kindVal, "role", `1`),
	valOK("role user", "message.started", "role", `"user"`),
	valOK("role tool", "message.started", "role", `"tool"`),
	valBad("message.started messageId absent", "message.started", "Agent event.messageId must be a string.", kindVal, "messageId", valDelete),
	valBad("message.started messageId before role", "message.started", "Agent event.messageId must be a string.", kindVal, "messageId", `1`, "role", `"x"`),
	valBad("delta messageId", "message.part.delta", "Agent event.messageId must be a string.", kindVal, "messageId", `null`),
	valBad("23 delta part 5", "message.part.delta", "Agent event.part must be a content part.", kindVal, "part", `5`),
	valBad("delta part absent", "message.part.delta", "Agent event.part must be a content part.", kindVal, "part", valDelete),
	valBad("delta part array", "message.part.delta", "Agent event.part must be a content part.", kindVal, "part", `[]`),
	valBad("delta part without type", "message.part.delta", "Agent event.part must be a content part.", kindVal, "part", `{"text":"x"}`),
	valBad("delta part type number", "message.part.delta", "Agent event.part must be a content part.", kindVal, "part", `{"type":1}`),
	valBad("delta part type unsupported", "message.part.delta", "Agent event.part.type is unsupported.", kindVal, "part", `{"type":"sticker"}`),
	valBad("completed messageId", "message.completed", "Agent event.messageId must be a string.", kindVal, "messageId", `{}`),
	valBad("completed role", "message.completed", "Agent event role is unsupported.", kindVal, "role", `"system"`),
	valBad("completed content absent", "message.completed", "Agent event.content must be an array.", kindVal, "content", valDelete),
	valBad("completed content object", "message.completed", "Agent event.content must be an array.", kindVal, "content", `{"0":{"type":"text","text":"x"}}`),
	valBad("completed content[1] null", "message.completed", "Agent event.content[1] must be a content part.", kindVal, "content", `[{"type":"text","text":"x"},null]`),
	valBad("completed role before content", "message.completed", "Agent event role is unsupported.", kindVal, "role", valDelete, "content", `5`),
	valBad("progress toolCallId", "tool.progress", "Agent event.toolCallId must be a string.", kindVal, "toolCallId", valDelete),
	valBad("progress content", "tool.progress", "Agent event.content must be an array.", kindVal, "content", `null`),
	valBad("progress content part", "tool.progress", "Agent event.content[0].text must be a string.", kindVal, "content", `[{"type":"text"}]`),
	valBad("resolved interruptId", "interrupt.resolved", "Agent event.interruptId must be a string.", kindVal, "interruptId", `null`),
	valBad("18 decisions object", "interrupt.resolved", "Agent event.decisions must be an array.", kindVal, "decisions", `{}`),
	valBad("decisions absent", "interrupt.resolved", "Agent event.decisions must be an array.", kindVal, "decisions", valDelete),
	valOK("decisions of any values", "interrupt.resolved", "decisions", `[null,1,"x",[],{"a":{}}]`),
	valOK("interruptId empty", "interrupt.resolved", "interruptId", `""`),
	valBad("finishReason", "run.completed", "Agent event.finishReason must be a string.", kindVal, "finishReason", valDelete),
	valBad("run.completed content", "run.completed", "Agent event.content must be an array.", kindVal, "content", valDelete),
	valOK("run.completed without usage and limit", "run.completed", "usage", valDelete, "limit", valDelete),
	valBad("run.completed usage null", "run.completed", "Agent event.usage must be an object.", kindVal, "usage", `null`),
	valBad("run.completed usage before limit", "run.completed", "Agent event.usage.model must be a string.", kindVal, "usage", `{"model":1}`, "limit", `1`),
	valBad("run.completed limit null", "run.completed", "Agent event.limit must be an object.", kindVal, "limit", `null`),
	valBad("run.failed code", "run.failed", "Agent event.code must be a string.", kindVal, "code", valDelete),
	valBad("run.failed message", "run.failed", "Agent event.message must be a string.", kindVal, "message", `false`),
	valBad("run.failed limit", "run.failed", "Agent event.limit.kind must be a string.", kindVal, "limit", `{}`),
	valOK("run.failed without limit", "run.failed", "limit", valDelete),
	valBad("run.cancelled limit", "run.cancelled", "Agent event.limit must be an object.", kindVal, "limit", `[]`),
	valBad("run.cancelled reason before limit", "run.cancelled", "Agent event.reason must be a string.", kindVal, "reason", `1`, "limit", `[]`),

	// §7.1 records (cases 13–16).
	valBad("13 input array", "tool.called", "Agent event.toolCall.input must be a JSON object.", kindJSON, "toolCall", `{"toolCallId":"c","name":"n","input":[]}`),
	valBad("input null", "tool.called", "Agent event.toolCall.input must be a JSON object.", kindJSON, "toolCall", `{"toolCallId":"c","name":"n","input":null}`),
	valBad("input string", "tool.called", "Agent event.toolCall.input must be a JSON object.", kindJSON, "toolCall", `{"toolCallId":"c","name":"n","input":"{}"}`),
	valBad("input absent", "tool.called", "Agent event.toolCall.input must be a JSON object.", kindJSON, "toolCall", `{"toolCallId":"c","name":"n"}`),
	valBad("toolCall absent", "tool.called", "Agent event.toolCall must be an object.", kindVal, "toolCall", valDelete),
	valBad("toolCall array", "tool.called", "Agent event.toolCall must be an object.", kindVal, "toolCall", `[]`),
	valBad("toolCallId", "tool.called", "Agent event.toolCall.toolCallId must be a string.", kindVal, "toolCall", `{"name":"n","input":{}}`),
	valBad("record name", "tool.called", "Agent event.toolCall.name must be a string.", kindVal, "toolCall", `{"toolCallId":"c","name":null,"input":{}}`),
	valBad("record order toolCallId first", "tool.called", "Agent event.toolCall.toolCallId must be a string.", kindVal, "toolCall", `{"input":1,"name":1,"toolCallId":1}`),
	valBad("14 output absent", "tool.completed", "Agent event.result.output is not JSON-serializable.", kindJSON, "result", `{"toolCallId":"c","name":"n","input":{}}`),
	valOK("14 output null", "tool.completed", "result", `{"toolCallId":"c","name":"n","input":{},"output":null}`),
	valBad("15 isError string", "tool.completed", "Agent event.result.isError must be a boolean.", kindVal, "result", `{"toolCallId":"c","name":"n","input":{},"output":1,"isError":"yes"}`),
	valBad("isError null", "tool.completed", "Agent event.result.isError must be a boolean.", kindVal, "result", `{"toolCallId":"c","name":"n","input":{},"output":1,"isError":null}`),
	valBad("result not object", "tool.completed", "Agent event.result must be an object.", kindVal, "result", `"x"`),
	valBad("result input before output", "tool.completed", "Agent event.result.input must be a JSON object.", kindJSON, "result", `{"toolCallId":"c","name":"n"}`),
	valBad("16 code number", "tool.failed", "Agent event.error.code must be a string.", kindVal, "error", `{"toolCallId":"c","name":"n","input":{},"error":"e","code":3}`),
	valBad("error message absent", "tool.failed", "Agent event.error.error must be a string.", kindVal, "error", `{"toolCallId":"c","name":"n","input":{},"code":3}`),
	valBad("error record not object", "tool.failed", "Agent event.error must be an object.", kindVal, "error", `"boom"`),
	valOK("error record without code", "tool.failed", "error", `{"toolCallId":"c","name":"n","input":{},"error":"e"}`),

	// §7.2 interrupts (case 17).
	valBad("17 kind approval", "interrupt.required", "Agent event.interrupt.kind is unsupported.", kindVal, "interrupt", `{"kind":"approval","interruptId":"i","prompt":"p","actions":[]}`),
	valBad("kind absent", "interrupt.required", "Agent event.interrupt.kind is unsupported.", kindVal, "interrupt", `{"interruptId":"i","prompt":"p","actions":[]}`),
	valOK("kind custom", "interrupt.required", "interrupt", `{"kind":"custom","interruptId":"","prompt":"p","actions":[]}`),
	valBad("interrupt not object", "interrupt.required", "Agent event.interrupt must be an object.", kindVal, "interrupt", `null`),
	valBad("interruptId", "interrupt.required", "Agent event.interrupt.interruptId must be a string.", kindVal, "interrupt", `{"kind":"custom","prompt":"p","actions":[]}`),
	valBad("prompt", "interrupt.required", "Agent event.interrupt.prompt must be a string.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":1,"actions":[]}`),
	valBad("actions", "interrupt.required", "Agent event.interrupt.actions must be an array.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p"}`),
	valBad("17 actions [1]", "interrupt.required", "Agent event.interrupt.actions[0] must be an object.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[1]}`),
	valBad("action id", "interrupt.required", "Agent event.interrupt.actions[1].id must be a string.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"n","input":null},{"name":"n","input":1}]}`),
	valBad("action name", "interrupt.required", "Agent event.interrupt.actions[0].name must be a string.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[{"id":"a","input":1}]}`),
	valBad("action input absent", "interrupt.required", "Agent event.interrupt.actions[0].input is not JSON-serializable.", kindJSON, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"n"}]}`),
	valOK("action input null, payload any", "interrupt.required", "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[{"id":"a","name":"n","input":null,"x":1}],"payload":[{"k":1}],"extra":2}`),
	valBad("actions element before payload", "interrupt.required", "Agent event.interrupt.actions[0] must be an object.", kindVal, "interrupt", `{"kind":"custom","interruptId":"i","prompt":"p","actions":[[]],"payload":1}`),

	// §7.3 usage (case 19).
	valBad("19 inputTokens -1", "usage.updated", "Agent event.usage.inputTokens must be non-negative.", kindVal, "usage", `{"inputTokens":-1}`),
	valBad("19 outputTokens string", "usage.updated", "Agent event.usage.outputTokens must be a finite number.", kindVal, "usage", `{"outputTokens":"3"}`),
	valOK("19 usage empty", "usage.updated", "usage", `{}`),
	valBad("usage absent", "usage.updated", "Agent event.usage must be an object.", kindVal, "usage", valDelete),
	valBad("usage array", "usage.updated", "Agent event.usage must be an object.", kindVal, "usage", `[]`),
	valBad("cachedInputTokens null", "usage.updated", "Agent event.usage.cachedInputTokens must be a finite number.", kindVal, "usage", `{"cachedInputTokens":null}`),
	valBad("reasoningTokens negative", "usage.updated", "Agent event.usage.reasoningTokens must be non-negative.", kindVal, "usage", `{"reasoningTokens":-0.5}`),
	valBad("totalTokens bool", "usage.updated", "Agent event.usage.totalTokens must be a finite number.", kindVal, "usage", `{"totalTokens":true}`),
	valBad("costUsd negative", "usage.updated", "Agent event.usage.costUsd must be non-negative.", kindVal, "usage", `{"costUsd":-1e-9}`),
	valOK("costUsd fractional, -0 tokens", "usage.updated", "usage", `{"costUsd":0.0125,"inputTokens":-0,"outputTokens":1.5}`),
	valBad("model", "usage.updated", "Agent event.usage.model must be a string.", kindVal, "usage", `{"model":null}`),
	valBad("provider", "usage.updated", "Agent event.usage.provider must be a string.", kindVal, "usage", `{"provider":1}`),
	valBad("usage order: numbers before model", "usage.updated", "Agent event.usage.costUsd must be a finite number.", kindVal, "usage", `{"model":1,"costUsd":"1"}`),
	valBad("usage order: inputTokens before outputTokens", "usage.updated", "Agent event.usage.inputTokens must be non-negative.", kindVal, "usage", `{"outputTokens":-1,"inputTokens":-1}`),
	valBad("usage order: model before provider", "usage.updated", "Agent event.usage.model must be a string.", kindVal, "usage", `{"provider":1,"model":1}`),

	// §7.4 limit (case 20).
	valBad("20 used -2", "run.completed", "Agent event.limit.used must be non-negative.", kindVal, "limit", `{"kind":"steps","used":-2}`),
	valBad("limit kind absent", "run.completed", "Agent event.limit.kind must be a string.", kindVal, "limit", `{"limit":1}`),
	valBad("limit limit string", "run.completed", "Agent event.limit.limit must be a finite number.", kindVal, "limit", `{"kind":"steps","limit":"1"}`),
	valBad("limit limit negative", "run.completed", "Agent event.limit.limit must be non-negative.", kindVal, "limit", `{"kind":"steps","limit":-1}`),
	valBad("limit used null", "run.completed", "Agent event.limit.used must be a finite number.", kindVal, "limit", `{"kind":"steps","used":null}`),
	valBad("limit order", "run.completed", "Agent event.limit.limit must be non-negative.", kindVal, "limit", `{"used":-1,"limit":-1,"kind":"x"}`),
	valOK("limit free kind", "run.cancelled", "limit", `{"kind":"model_calls","limit":0,"used":0,"extra":null}`),

	// §6 content parts (cases 21–25).
	valBad("21 image no source", "message.completed", "Agent event.content[0] must contain exactly one media source.", kindVal, "content", `[{"type":"image"}]`),
	valBad("21 file url and fileId", "message.completed", "Agent event.content[0] must contain exactly one media source.", kindVal, "content", `[{"type":"file","url":"u","fileId":"f"}]`),
	valBad("22 image url null and fileId", "message.completed", "Agent event.content[0] must contain exactly one media source.", kindVal, "content", `[{"type":"image","url":null,"fileId":"f"}]`),
	valBad("22 image url null", "message.completed", "Agent event.content[0].url must be a string.", kindVal, "content", `[{"type":"image","url":null}]`),
	valBad("audio data number", "message.completed", "Agent event.content[0].data must be a string.", kindVal, "content", `[{"type":"audio","data":1}]`),
	valBad("video fileId", "message.completed", "Agent event.content[0].fileId must be a string.", kindVal, "content", `[{"type":"video","fileId":{}}]`),
	valBad("all three sources", "message.completed", "Agent event.content[0] must contain exactly one media source.", kindVal, "content", `[{"type":"video","url":"u","data":"d","fileId":"f"}]`),
	valBad("media source before mimeType", "message.completed", "Agent event.content[0] must contain exactly one media source.", kindVal, "content", `[{"type":"image","mimeType":1}]`),
	valBad("mimeType", "message.completed", "Agent event.content[0].mimeType must be a string.", kindVal, "content", `[{"type":"image","data":"SGk=","mimeType":null}]`),
	valBad("file name", "message.completed", "Agent event.content[0].name must be a string.", kindVal, "content", `[{"type":"file","fileId":"f","name":1}]`),
	valBad("file mimeType before name", "message.completed", "Agent event.content[0].mimeType must be a string.", kindVal, "content", `[{"type":"file","fileId":"f","name":1,"mimeType":1}]`),
	valOK("image name is unknown", "message.completed", "content", `[{"type":"image","url":"u","name":1}]`),
	valBad("23 sticker", "message.completed", "Agent event.content[0].type is unsupported.", kindVal, "content", `[{"type":"sticker"}]`),
	valBad("text text", "message.completed", "Agent event.content[0].text must be a string.", kindVal, "content", `[{"type":"text","text":null}]`),
	valBad("reasoning text", "message.completed", "Agent event.content[2].text must be a string.", kindVal, "content", `[{"type":"text","text":""},{"type":"reasoning","text":""},{"type":"reasoning"}]`),
	valBad("citation url", "message.completed", "Agent event.content[0].url must be a string.", kindVal, "content", `[{"type":"citation","title":"t"}]`),
	valBad("citation title", "message.completed", "Agent event.content[0].title must be a string.", kindVal, "content", `[{"type":"citation","url":"u","title":null}]`),
	valBad("tool-call part toolCall", "message.completed", "Agent event.content[0].toolCall must be an object.", kindVal, "content", `[{"type":"tool-call"}]`),
	valBad("tool-call part name", "message.completed", "Agent event.content[0].toolCall.name must be a string.", kindVal, "content", `[{"type":"tool-call","toolCall":{"toolCallId":"c","input":{}}}]`),
	valBad("tool-call part input", "message.completed", "Agent event.content[0].toolCall.input must be a JSON object.", kindJSON, "content", `[{"type":"tool-call","toolCall":{"toolCallId":"c","name":"n","input":[1]}}]`),
	valBad("tool-result part result", "message.completed", "Agent event.content[0].result must be an object.", kindVal, "content", `[{"type":"tool-result","result":1}]`),
	valBad("§3.2 example path", "message.completed", "Agent event.content[2].result.output is not JSON-serializable.", kindJSON, "content", `[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"tool-result","result":{"toolCallId":"c","name":"n","input":{}}}]`),
	valBad("tool-result part isError", "tool.progress", "Agent event.content[0].result.isError must be a boolean.", kindVal, "content", `[{"type":"tool-result","result":{"toolCallId":"c","name":"n","input":{},"output":[],"isError":0}}]`),
	valBad("24 custom without data", "message.completed", "Agent event.content[0].data is not JSON-serializable.", kindJSON, "content", `[{"type":"custom","name":"n"}]`),
	valOK("24 custom data null", "message.completed", "content", `[{"type":"custom","name":"n","data":null}]`),
	valBad("custom name", "message.completed", "Agent event.content[0].name must be a string.", kindVal, "content", `[{"type":"custom","data":1}]`),
	valBad("custom name before data", "message.completed", "Agent event.content[0].name must be a string.", kindVal, "content", `[{"type":"custom"}]`),
	valOK("25 one part of each of the ten types", "message.completed", "content", valAllParts),
	valOK("§6 example", "run.completed", "content", `[{"type":"text","text":"See attached."},{"type":"image","url":"https://example.test/a.png"},{"type":"audio","fileId":"file-9"},{"type":"file","data":"SGVsbG8=","name":"a.txt"},{"type":"custom","name":"chart","data":null}]`),
	valBad("first part fault wins", "message.completed", "Agent event.content[0].type is unsupported.", kindVal, "content", `[{"type":"x"},{"type":"y"}]`),
}

// valAllParts holds one content part of each of the ten types (§14 case 25).
const valAllParts = `[{"type":"text","text":"Hi"},{"type":"reasoning","text":"thinking"},` +
	`{"type":"image","url":"https://example.test/a.png","mimeType":"image/png"},` +
	`{"type":"audio","data":"UklGRg=="},{"type":"video","fileId":"file-1"},` +
	`{"type":"file","fileId":"file-2","name":"a.txt","mimeType":"text/plain"},` +
	`{"type":"citation","url":"https://example.test","title":"Example"},` +
	`{"type":"tool-call","toolCall":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"}}},` +
	`{"type":"tool-result","result":{"toolCallId":"c-1","name":"weather","input":{"city":"Oslo"},"output":{"temp":-0.5},"isError":false}},` +
	`{"type":"custom","name":"chart","data":{"points":[1,2,3]}}]`

func TestEventValidationTable(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range valEventCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			o := valEvent(t, tc.typ, tc.mods...)
			text := valText(t, o)

			ev, err := events.ParseEvent(text)
			valCheckErr(t, "ParseEvent", err, tc.want, tc.kind)
			_, err = events.CloneEvent(o)
			valCheckErr(t, "CloneEvent(Object)", err, tc.want, tc.kind)
			_, err = events.CloneEvent(valToGo(o))
			valCheckErr(t, "CloneEvent(map)", err, tc.want, tc.kind)
			if tc.want != "" {
				if ev.Valid() {
					t.Fatal("a failed ParseEvent returned a valid Event")
				}
				return
			}
			valCheckRoundTrip(t, ev, text)
		})
	}
}

// valCheckRoundTrip checks that a valid event re-encodes to its input text (which the tests
// write in encoder form) and that marshal → ParseEvent gives an equal event.
func valCheckRoundTrip(t *testing.T, ev events.Event, text []byte) {
	t.Helper()
	if !ev.Valid() {
		t.Fatal("accepted event is not Valid")
	}
	out, err := ev.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, text) {
		t.Fatalf("re-encoding differs\n got %s\nwant %s", out, text)
	}
	again, err := events.ParseEvent(out)
	if err != nil {
		t.Fatalf("re-parse: %v", err)
	}
	if again.Fingerprint() != ev.Fingerprint() {
		t.Fatal("round trip changed the fingerprint")
	}
	if !jsonvalue.Equal(again.Value(), ev.Value()) {
		t.Fatal("round trip changed the value")
	}
	fp, err := events.Fingerprint(ev.Value())
	if err != nil || fp != ev.Fingerprint() {
		t.Fatalf("Fingerprint(Value()) = %q, %v; event fingerprint %q", fp, err, ev.Fingerprint())
	}
	// encoding/json agrees through MarshalJSON.
	viaStd, err := json.Marshal(ev)
	if err != nil || !bytes.Equal(viaStd, out) {
		t.Fatalf("json.Marshal(Event) = %s, %v", viaStd, err)
	}
}

// valTextCases are raw texts: strict-JSON faults come before every other fault.
var valTextCases = []struct {
	name, text, want, kind string
}{
	{"5 top-level array", `[]`, "Agent event must be a JSON object.", kindJSON},
	{"5 top-level string", `"x"`, "Agent event must be a JSON object.", kindJSON},
	{"top-level null", `null`, "Agent event must be a JSON object.", kindJSON},
	{"top-level number", `1`, "Agent event must be a JSON object.", kindJSON},
	{"26 duplicate eventId", `{"eventId":"a","eventId":"b","protocolVersion":1}`, `Agent event contains duplicate member name "eventId".`, kindJSON},
	{"26 duplicate after unescaping", `{"a":1,"\u0061":2}`, `Agent event contains duplicate member name "a".`, kindJSON},
	{"duplicate nested", `{"protocolVersion":1,"part":{"x":1,"x":2}}`, `Agent event.part contains duplicate member name "x".`, kindJSON},
	{"duplicate name escaped in message", `{"a\n\"":1,"a\u000a\"":2}`, `Agent event contains duplicate member name "a\n\"".`, kindJSON},
	{"27 invalid UTF-8 in runId", "{\"runId\":\"a\xffb\"}", "Agent event.runId contains invalid UTF-8.", kindJSON},
	{"invalid UTF-8 in a member name", "{\"protocolVersion\":2,\"part\":{\"\xff\":1}}", "Agent event.part contains invalid UTF-8.", kindJSON},
	{"27 unpaired surrogate", `{"runId":"\ud800"}`, "Agent event.runId contains an unpaired surrogate.", kindJSON},
	{"unpaired low surrogate in array", `{"x":["a","\udc00"]}`, "Agent event.x[1] contains an unpaired surrogate.", kindJSON},
	{"28 costUsd 1e400", `{"protocolVersion":1,"usage":{"costUsd":1e400}}`, "Agent event.usage.costUsd must contain only finite JSON numbers.", kindJSON},
	{"-1e400", `{"x":-1e400}`, "Agent event.x must contain only finite JSON numbers.", kindJSON},
	{"30 trailing comma", `{"protocolVersion":1,}`, "Agent event is not valid JSON text at byte offset 21.", kindJSON},
	{"30 NaN", `{"protocolVersion":NaN}`, "Agent event is not valid JSON text at byte offset 19.", kindJSON},
	{"30 leading BOM", "\xef\xbb\xbf{}", "Agent event is not valid JSON text at byte offset 0.", kindJSON},
	{"30 trailing text", `{} x`, "Agent event is not valid JSON text at byte offset 3.", kindJSON},
	{"empty input", ``, "Agent event is not valid JSON text at byte offset 0.", kindJSON},
	{"truncated", `{"protocolVersion":1`, "Agent event is not valid JSON text at byte offset 20.", kindJSON},
	{"comment", `{/**/}`, "Agent event is not valid JSON text at byte offset 1.", kindJSON},
	{"single quotes", `{'a':1}`, "Agent event is not valid JSON text at byte offset 1.", kindJSON},
	{"leading zero", `{"a":01}`, "Agent event is not valid JSON text at byte offset 6.", kindJSON},
	{"leading plus", `{"a":+1}`, "Agent event is not valid JSON text at byte offset 5.", kindJSON},
	{"control character", "{\"a\":\"\x01\"}", "Agent event is not valid JSON text at byte offset 6.", kindJSON},
	{"bad escape", `{"a":"\x"}`, "Agent event is not valid JSON text at byte offset 7.", kindJSON},
	{"Infinity", `{"a":Infinity}`, "Agent event is not valid JSON text at byte offset 5.", kindJSON},
	{"text fault before version fault", `{"protocolVersion":2,"x":[1,]}`, "Agent event is not valid JSON text at byte offset 28.", kindJSON},
	{"JSON fault before version fault", `{"protocolVersion":2,"x":1e999}`, "Agent event.x must contain only finite JSON numbers.", kindJSON},
	{"38 __proto__ and constructor", `{"__proto__":1,"constructor":2}`, "Unsupported Agent event protocol version: undefined.", kindVal},
	{"28 costUsd 1e-400 is 0", `{"type":"usage.updated","usage":{"costUsd":1e-400},"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","timestamp":"t","logicalSequence":1,"sequence":1}`, "", kindNone},
	{"38 proto names are ordinary", `{"type":"message.started","messageId":"m","role":"user","__proto__":1,"constructor":2,"protocolVersion":1,"eventId":"e","runId":"r","sessionId":"s","phaseId":"p","timestamp":"t","logicalSequence":1,"sequence":1}`, "", kindNone},
	{"white space everywhere", " \t\r\n{ \"protocolVersion\" : 2 } \n", "Unsupported Agent event protocol version: 2.", kindVal},
}

func TestParseEventText(t *testing.T) {
	for _, tc := range valTextCases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := events.ParseEvent([]byte(tc.text))
			valCheckErr(t, "ParseEvent", err, tc.want, tc.kind)
			if tc.name == "38 proto names are ordinary" {
				// §14 case 38: ordinary members, re-encoded identically.
				if out, _ := ev.MarshalJSON(); string(out) != tc.text {
					t.Fatalf("re-encoded %s", out)
				}
			}
			if tc.name == "28 costUsd 1e-400 is 0" {
				u := ev.Payload().(events.UsageUpdated).Usage
				if c, _ := u.Raw.Get("costUsd"); c != 0.0 {
					t.Fatalf("costUsd = %v", c)
				}
			}
		})
	}
}

// valNest returns n nested arrays.
func valNest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestParseEventDepth(t *testing.T) {
	// §14 case 29. The event object is depth 1, so member x may hold 127 nested arrays.
	base := valText(t, valEvent(t, "message.started"))
	withX := func(n int) []byte {
		return append(base[:len(base)-1:len(base)-1], `,"x":`+valNest(n)+`}`...)
	}
	if _, err := events.ParseEvent(withX(127)); err != nil {
		t.Fatalf("128 levels: %v", err)
	}
	want := "Agent event.x" + strings.Repeat("[0]", 127) + " exceeds the maximum nesting depth of 128."
	_, err := events.ParseEvent(withX(128))
	valCheckErr(t, "ParseEvent 129 levels", err, want, kindJSON)

	// Top-level nesting: 129 arrays fail at depth, 128 parse but are no object.
	_, err = events.ParseEvent([]byte(valNest(129)))
	valCheckErr(t, "129 arrays", err, "Agent event"+strings.Repeat("[0]", 128)+" exceeds the maximum nesting depth of 128.", kindJSON)
	_, err = events.ParseEvent([]byte(valNest(128)))
	valCheckErr(t, "128 arrays", err, "Agent event must be a JSON object.", kindJSON)

	// The same limits for Go values through CloneEvent.
	o := valEvent(t, "message.started")
	var deep any = []any{}
	for i := 1; i < 127; i++ {
		deep = []any{deep}
	}
	o.Set("x", deep)
	if _, err := events.CloneEvent(o); err != nil {
		t.Fatalf("CloneEvent 128 levels: %v", err)
	}
	o.Set("x", []any{deep})
	_, err = events.CloneEvent(valToGo(o))
	valCheckErr(t, "CloneEvent 129 levels", err, want, kindJSON)
}

func TestUnknownMembersRetainedAndFingerprinted(t *testing.T) {
	// §14 case 10: unknown members are kept, re-encoded and fingerprinted.
	plain, err := events.ParseEvent(valText(t, valEvent(t, "message.started")))
	if err != nil {
		t.Fatal(err)
	}
	text := valText(t, valEvent(t, "message.started", "foo", `{"bar":[1,2]}`, "namespace", `["a"]`))
	ev, err := events.ParseEvent(text)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Fingerprint() == plain.Fingerprint() {
		t.Fatal("unknown members do not change the fingerprint")
	}
	got, ok := ev.Value().Get("foo")
	if !ok || !jsonvalue.Equal(got, valParse(t, `{"bar":[1,2]}`)) {
		t.Fatalf("foo = %v, %v", got, ok)
	}
	out, _ := ev.MarshalJSON()
	if !bytes.Contains(out, []byte(`"foo":{"bar":[1,2]},"namespace":["a"]`)) {
		t.Fatalf("unknown members not re-encoded in order: %s", out)
	}
	// Nested unknown members too.
	text = valText(t, valEvent(t, "tool.completed", "result", `{"toolCallId":"c","name":"n","input":{},"output":1,"extra":{"x":1}}`))
	ev, err = events.ParseEvent(text)
	if err != nil {
		t.Fatal(err)
	}
	res := ev.Payload().(events.ToolCompleted).Result
	if x, ok := res.Raw.Get("extra"); !ok || !jsonvalue.Equal(x, valParse(t, `{"x":1}`)) {
		t.Fatalf("nested unknown member lost: %v", x)
	}
	// Member order does not change the fingerprint (§3.7).
	reordered := valEvent(t, "message.started", "foo", `{"bar":[1,2]}`, "namespace", `["a"]`)
	ms := reordered.Members()
	rev := jsonvalue.NewObject(len(ms))
	for i := len(ms) - 1; i >= 0; i-- {
		rev.Set(ms[i].Name, ms[i].Value)
	}
	ev2, err := events.CloneEvent(rev)
	if err != nil {
		t.Fatal(err)
	}
	ev1, _ := events.ParseEvent(valText(t, reordered))
	if ev1.Fingerprint() != ev2.Fingerprint() {
		t.Fatal("member order changed the fingerprint")
	}
}

func TestWorkedExampleFingerprints(t *testing.T) {
	// §3.7 worked example.
	delta := `{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hel"},
 "protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1",
 "phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`
	ev, err := events.ParseEvent([]byte(delta))
	if err != nil {
		t.Fatal(err)
	}
	const wantCanon = `{"eventId":"run-1:3","logicalSequence":3,"messageId":"m-1","part":{"text":"Hel","type":"text"},"phaseId":"p-1","protocolVersion":1,"runId":"run-1","sequence":3,"sessionId":"s-1","timestamp":"2025-01-01T00:00:00.200Z","type":"message.part.delta"}`
	canon, err := events.Canonicalize(ev.Value())
	if err != nil || string(canon) != wantCanon {
		t.Fatalf("canonical form %s, %v", canon, err)
	}
	if got := ev.Fingerprint(); got != "sha256:2dd49398fc79c44a811403fa8d36fc9516cb13e528e1aa8fe636717867aa684a" {
		t.Fatalf("delta fingerprint %s", got)
	}
	started := map[string]any{
		"type": "run.started", "protocolVersion": 1, "eventId": "run-1:1", "runId": "run-1",
		"sessionId": "s-1", "phaseId": "p-1", "logicalSequence": 1, "sequence": 1,
		"timestamp": "2025-01-01T00:00:00.000Z",
	}
	ev, err = events.CloneEvent(started)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.Fingerprint(); got != "sha256:5b0830f8bccf9e1202b0342e79b1d092e17a156ad09a598c9ba62150157f75d4" {
		t.Fatalf("run.started fingerprint %s", got)
	}
}

func TestEventAccessorsAndPayloads(t *testing.T) {
	parse := func(typ string, mods ...string) events.Event {
		t.Helper()
		ev, err := events.ParseEvent(valText(t, valEvent(t, typ, mods...)))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type() != events.EventType(typ) {
			t.Fatalf("Type() = %q", ev.Type())
		}
		return ev
	}
	ev := parse("run.started", "logicalSequence", `9007199254740991`, "sequence", `-0`)
	if ev.EventID() != "run-1:2" || ev.RunID() != "run-1" || ev.SessionID() != "s-1" || ev.PhaseID() != "p-1" ||
		ev.Timestamp() != "2025-01-01T00:00:00.100Z" || ev.LogicalSequence() != 9007199254740991 || ev.Sequence() != 0 ||
		ev.ProtocolVersion() != 1 {
		t.Fatalf("envelope accessors wrong: %+v", ev)
	}
	if _, ok := ev.Payload().(events.RunStarted); !ok {
		t.Fatalf("payload %T", ev.Payload())
	}

	ms := parse("message.started", "role", `"user"`).Payload().(events.MessageStarted)
	if ms.MessageID != "m-1" || ms.Role != events.RoleUser {
		t.Fatalf("%+v", ms)
	}
	d := parse("message.part.delta").Payload().(events.MessagePartDelta)
	if d.MessageID != "m-1" || d.Part.Type != "text" || d.Part.Raw == nil {
		t.Fatalf("%+v", d)
	}
	mc := parse("message.completed", "content", valAllParts).Payload().(events.MessageCompleted)
	if len(mc.Content) != 10 || len(mc.RawContent) != 10 || mc.Content[7].Type != "tool-call" || mc.Content[9].Type != "custom" || mc.Role != events.RoleAssistant {
		t.Fatalf("%+v", mc)
	}
	for i, p := range mc.Content {
		if p.Raw != mc.RawContent[i] {
			t.Fatalf("Content[%d].Raw is not RawContent[%d]", i, i)
		}
	}
	tc := parse("tool.called").Payload().(events.ToolCalled).ToolCall
	if tc.ToolCallID != "c-1" || tc.Name != "weather" || tc.Input.Len() != 1 || tc.Raw.Len() != 3 {
		t.Fatalf("%+v", tc)
	}
	tp := parse("tool.progress").Payload().(events.ToolProgress)
	if tp.ToolCallID != "c-1" || len(tp.Content) != 1 || len(tp.RawContent) != 1 {
		t.Fatalf("%+v", tp)
	}
	tr := parse("tool.completed").Payload().(events.ToolCompleted).Result
	if tr.ToolCallID != "c-1" || tr.IsError == nil || *tr.IsError || !jsonvalue.Equal(tr.Output, valParse(t, `{"temp":3}`)) {
		t.Fatalf("%+v", tr)
	}
	tr = parse("tool.completed", "result", `{"toolCallId":"c","name":"n","input":{},"output":null}`).Payload().(events.ToolCompleted).Result
	if tr.IsError != nil || tr.Output != nil {
		t.Fatalf("%+v", tr)
	}
	te := parse("tool.failed").Payload().(events.ToolFailed).Error
	if te.Error != "boom" || te.Code == nil || *te.Code != "tool_execution_failed" || te.Name != "weather" {
		t.Fatalf("%+v", te)
	}
	te = parse("tool.failed", "error", `{"toolCallId":"c","name":"n","input":{},"error":"e"}`).Payload().(events.ToolFailed).Error
	if te.Code != nil {
		t.Fatalf("%+v", te)
	}
	in := parse("interrupt.required").Payload().(events.InterruptRequired).Interrupt
	if in.Kind != events.InterruptKindToolApproval || in.InterruptID != "i-1" || in.Prompt != "Tool execution requires approval." || in.Raw == nil {
		t.Fatalf("%+v", in)
	}
	ir := parse("interrupt.resolved").Payload().(events.InterruptResolved)
	if ir.InterruptID != "i-1" || len(ir.Decisions) != 1 {
		t.Fatalf("%+v", ir)
	}
	u := parse("usage.updated").Payload().(events.UsageUpdated)
	if u.Usage.Raw.Len() != 4 {
		t.Fatalf("%+v", u)
	}
	rc := parse("run.completed").Payload().(events.RunCompleted)
	if rc.FinishReason != "stop" || rc.Usage == nil || rc.Limit == nil || rc.Limit.Kind != "steps" || len(rc.Content) != 0 || rc.RawContent == nil {
		t.Fatalf("%+v", rc)
	}
	rc = parse("run.completed", "usage", valDelete, "limit", valDelete).Payload().(events.RunCompleted)
	if rc.Usage != nil || rc.Limit != nil {
		t.Fatalf("%+v", rc)
	}
	rf := parse("run.failed").Payload().(events.RunFailed)
	if rf.Code != "agent_execution_failed" || rf.Message != "failed" || rf.Limit == nil || rf.Limit.Kind != "tokens" {
		t.Fatalf("%+v", rf)
	}
	cn := parse("run.cancelled").Payload().(events.RunCancelled)
	if cn.Reason == nil || *cn.Reason != "user" || cn.Limit != nil {
		t.Fatalf("%+v", cn)
	}
	cn = parse("run.cancelled", "reason", valDelete).Payload().(events.RunCancelled)
	if cn.Reason != nil {
		t.Fatalf("%+v", cn)
	}
}

func TestEventIsImmutable(t *testing.T) {
	o := valEvent(t, "tool.called")
	ev, err := events.CloneEvent(o)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := ev.MarshalJSON()
	// Changing the input after CloneEvent does not reach the event.
	o.Set("eventId", "changed")
	tcv, _ := o.Get("toolCall")
	tcv.(*events.Object).Set("name", "changed")
	// Changing Value() does not reach the event.
	val := ev.Value()
	val.Set("runId", "changed")
	after, _ := ev.MarshalJSON()
	if !bytes.Equal(before, after) || ev.EventID() != "run-1:2" {
		t.Fatalf("event changed:\n%s\n%s", before, after)
	}
	// The zero Event.
	var zero events.Event
	if zero.Valid() {
		t.Fatal("zero Event is valid")
	}
	_, err = zero.MarshalJSON()
	valCheckErr(t, "zero MarshalJSON", err, "Agent event must be a JSON object.", kindJSON)
}

// TestCloneEventGoValues covers Go-value input: the whole value is cloned (and JSON-checked)
// before any envelope rule.
func TestCloneEventGoValues(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"type": "message.started", "messageId": "m", "role": "user",
			"protocolVersion": 1, "eventId": "e", "runId": "r", "sessionId": "s", "phaseId": "p",
			"timestamp": "t", "logicalSequence": int64(1), "sequence": uint8(1),
		}
	}
	cases := []struct {
		name string
		mod  func(m map[string]any)
		want string
		kind string
	}{
		{"ints accepted", func(map[string]any) {}, "", kindNone},
		{"json.Number version", func(m map[string]any) { m["protocolVersion"] = json.Number("1.0") }, "", kindNone},
		{"func anywhere comes first", func(m map[string]any) { m["protocolVersion"] = 2; m["x"] = func() {} }, "Agent event.x is not JSON-serializable.", kindJSON},
		{"NaN", func(m map[string]any) { m["protocolVersion"] = math.NaN() }, "Agent event.protocolVersion must contain only finite JSON numbers.", kindJSON},
		{"float32", func(m map[string]any) { m["sequence"] = float32(1) }, "Agent event.sequence is not JSON-serializable.", kindJSON},
		{"typed slice", func(m map[string]any) { m["content"] = []string{"x"} }, "Agent event.content must contain only JSON objects and arrays.", kindJSON},
		{"unsafe integer", func(m map[string]any) { m["logicalSequence"] = int64(1 << 53) }, "Agent event.logicalSequence is an integer outside the JSON safe integer range.", kindJSON},
		{"map order for faults: a before b", func(m map[string]any) { m["b"] = func() {}; m["a"] = make(chan int) }, "Agent event.a is not JSON-serializable.", kindJSON},
		{"version int 2", func(m map[string]any) { m["protocolVersion"] = 2 }, "Unsupported Agent event protocol version: 2.", kindVal},
		{"version nil map is null", func(m map[string]any) { m["protocolVersion"] = map[string]any(nil) }, "Unsupported Agent event protocol version: null.", kindVal},
		{"sequence -0.0", func(m map[string]any) { m["sequence"] = math.Copysign(0, -1) }, "", kindNone},
		{"named string role is a string", func(m map[string]any) { m["role"] = events.RoleTool }, "", kindNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.mod(m)
			_, err := events.CloneEvent(m)
			valCheckErr(t, "CloneEvent", err, tc.want, tc.kind)
		})
	}
	for _, bad := range []any{nil, []any{}, "x", map[string]any(nil), (*events.Object)(nil), 5, struct{}{}} {
		_, err := events.CloneEvent(bad)
		valCheckErr(t, "CloneEvent(non-object)", err, "Agent event must be a JSON object.", kindJSON)
	}
	// A shared sub-map is copied twice; the event holds no container of the input.
	shared := map[string]any{"k": []any{1.0}}
	m := base()
	m["a"], m["b"] = shared, shared
	ev, err := events.CloneEvent(m)
	if err != nil {
		t.Fatal(err)
	}
	shared["k"].([]any)[0] = 2.0
	out, _ := ev.MarshalJSON()
	if !bytes.Contains(out, []byte(`"a":{"k":[1]},"b":{"k":[1]}`)) {
		t.Fatalf("shared sub-map: %s", out)
	}
	// A cycle.
	m = base()
	m["self"] = m
	_, err = events.CloneEvent(m)
	valCheckErr(t, "cycle", err, "Agent event.self contains a circular reference.", kindJSON)
}

// TestValidateEventInput covers §5.2 on Go values (cases 77, 78 and more).
func TestValidateEventInput(t *testing.T) {
	nan := math.NaN()
	type named string
	cases := []struct {
		name string
		in   any
		want string
		kind string
	}{
		{"77 run.started with eventId", map[string]any{"type": "run.started", "eventId": "e"}, "Agent event contains unsupported fields.", kindVal},
		{"77 run.started alone", map[string]any{"type": "run.started"}, "", kindNone},
		{"run.started with func member", map[string]any{"type": "run.started", "x": func() {}}, "Agent event contains unsupported fields.", kindVal},
		{"78 messageId number, func member ignored", map[string]any{"type": "message.started", "messageId": 5, "x": func() {}}, "Agent event.messageId must be a string.", kindVal},
		{"78 accepted with unchecked func member", map[string]any{"type": "message.started", "messageId": "m", "role": "user", "x": func() {}}, "", kindNone},
		{"78 custom data func", map[string]any{"type": "message.part.delta", "messageId": "m", "part": map[string]any{"type": "custom", "name": "n", "data": func() {}}}, "Agent event.part.data is not JSON-serializable.", kindJSON},
		{"not an object: array", []any{}, "Agent event must be an object.", kindVal},
		{"not an object: nil", nil, "Agent event must be an object.", kindVal},
		{"not an object: nil map", map[string]any(nil), "Agent event must be an object.", kindVal},
		{"not an object: struct", struct{ Type string }{"run.started"}, "Agent event must be an object.", kindVal},
		{"envelope not checked", map[string]any{"type": "message.started", "messageId": "m", "role": "user", "protocolVersion": 99, "eventId": 5}, "", kindNone},
		{"type missing", map[string]any{}, "Agent event.type must be a string.", kindVal},
		{"type named string", map[string]any{"type": named("message.started"), "messageId": named("m"), "role": events.RoleAssistant}, "", kindNone},
		{"type json.Number", map[string]any{"type": json.Number("1")}, "Agent event.type must be a string.", kindVal},
		{"unknown type", map[string]any{"type": "run.paused"}, "Unknown Agent event type: run.paused.", kindVal},
		{"Object input", jsonvalue.ObjectOf("type", "message.started", "messageId", "m", "role", "system"), "Agent event role is unsupported.", kindVal},
		{"Object value input", *jsonvalue.ObjectOf("type", "run.started"), "", kindNone},
		{"strings not UTF-8-checked", map[string]any{"type": "message.started", "messageId": "\xff", "role": "user"}, "", kindNone},
		{"toolCall input with func", map[string]any{"type": "tool.called", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{"f": func() {}}}}, "Agent event.toolCall.input.f is not JSON-serializable.", kindJSON},
		{"toolCall input typed map", map[string]any{"type": "tool.called", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]string{}}}, "Agent event.toolCall.input must be a JSON object.", kindJSON},
		{"toolCall input nil map", map[string]any{"type": "tool.called", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any(nil)}}, "Agent event.toolCall.input must be a JSON object.", kindJSON},
		{"toolCall record typed map", map[string]any{"type": "tool.called", "toolCall": map[string]string{"toolCallId": "c"}}, "Agent event.toolCall must be an object.", kindVal},
		{"toolCall unknown member unchecked", map[string]any{"type": "tool.called", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}, "x": make(chan int)}}, "", kindNone},
		{"output NaN", map[string]any{"type": "tool.completed", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}, "output": []any{1, nan}}}, "Agent event.result.output[1] must contain only finite JSON numbers.", kindJSON},
		{"output absent", map[string]any{"type": "tool.completed", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}}}, "Agent event.result.output is not JSON-serializable.", kindJSON},
		{"output nil", map[string]any{"type": "tool.completed", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}, "output": nil}}, "", kindNone},
		{"output before isError", map[string]any{"type": "tool.completed", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}, "output": func() {}, "isError": 1}}, "Agent event.result.output is not JSON-serializable.", kindJSON},
		{"isError named bool", map[string]any{"type": "tool.completed", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}, "output": 1, "isError": 1}}, "Agent event.result.isError must be a boolean.", kindVal},
		{"action input func", map[string]any{"type": "interrupt.required", "interrupt": map[string]any{"kind": "custom", "interruptId": "i", "prompt": "p", "actions": []any{map[string]any{"id": "a", "name": "n", "input": []any{func() {}}}}}}, "Agent event.interrupt.actions[0].input[0] is not JSON-serializable.", kindJSON},
		{"interrupt payload checked", map[string]any{"type": "interrupt.required", "interrupt": map[string]any{"kind": "custom", "interruptId": "i", "prompt": "p", "actions": []any{}, "payload": map[string]any{"t": struct{}{}}}}, "Agent event.interrupt.payload.t must contain only JSON objects and arrays.", kindJSON},
		{"interrupt payload nil", map[string]any{"type": "interrupt.required", "interrupt": map[string]any{"kind": "custom", "interruptId": "i", "prompt": "p", "actions": []any{}, "payload": nil}}, "", kindNone},
		{"actions typed slice", map[string]any{"type": "interrupt.required", "interrupt": map[string]any{"kind": "custom", "interruptId": "i", "prompt": "p", "actions": []map[string]any{}}}, "Agent event.interrupt.actions must be an array.", kindVal},
		{"decisions checked", map[string]any{"type": "interrupt.resolved", "interruptId": "i", "decisions": []any{map[string]any{"approved": complex(1, 0)}}}, "Agent event.decisions[0].approved is not JSON-serializable.", kindJSON},
		{"decisions nil slice", map[string]any{"type": "interrupt.resolved", "interruptId": "i", "decisions": []any(nil)}, "Agent event.decisions must be an array.", kindVal},
		{"decisions array before content check", map[string]any{"type": "interrupt.resolved", "interruptId": "i", "decisions": map[string]any{"x": func() {}}}, "Agent event.decisions must be an array.", kindVal},
		{"usage ints", map[string]any{"type": "usage.updated", "usage": map[string]any{"inputTokens": 5, "outputTokens": uint64(2), "costUsd": json.Number("0.5")}}, "", kindNone},
		{"usage negative int", map[string]any{"type": "usage.updated", "usage": map[string]any{"inputTokens": int8(-1)}}, "Agent event.usage.inputTokens must be non-negative.", kindVal},
		{"usage NaN", map[string]any{"type": "usage.updated", "usage": map[string]any{"totalTokens": nan}}, "Agent event.usage.totalTokens must be a finite number.", kindVal},
		{"usage Inf", map[string]any{"type": "usage.updated", "usage": map[string]any{"costUsd": math.Inf(1)}}, "Agent event.usage.costUsd must be a finite number.", kindVal},
		{"usage float32", map[string]any{"type": "usage.updated", "usage": map[string]any{"costUsd": float32(1)}}, "Agent event.usage.costUsd must be a finite number.", kindVal},
		{"usage json.Number overflow", map[string]any{"type": "usage.updated", "usage": map[string]any{"costUsd": json.Number("1e400")}}, "Agent event.usage.costUsd must be a finite number.", kindVal},
		{"usage json.Number bad", map[string]any{"type": "usage.updated", "usage": map[string]any{"costUsd": json.Number("x")}}, "Agent event.usage.costUsd must be a finite number.", kindVal},
		{"usage huge int is a number", map[string]any{"type": "usage.updated", "usage": map[string]any{"inputTokens": int64(1 << 60)}}, "", kindNone},
		{"usage Object value", map[string]any{"type": "usage.updated", "usage": *jsonvalue.ObjectOf("model", 1)}, "Agent event.usage.model must be a string.", kindVal},
		{"content typed slice", map[string]any{"type": "tool.progress", "toolCallId": "c", "content": []map[string]any{}}, "Agent event.content must be an array.", kindVal},
		{"content part typed map", map[string]any{"type": "tool.progress", "toolCallId": "c", "content": []any{map[string]string{"type": "text", "text": "x"}}}, "Agent event.content[0] must be a content part.", kindVal},
		{"media present nil counts", map[string]any{"type": "message.part.delta", "messageId": "m", "part": map[string]any{"type": "image", "url": nil, "data": "x"}}, "Agent event.part must contain exactly one media source.", kindVal},
		{"JSONValuer resolved", map[string]any{"type": "message.part.delta", "messageId": "m", "part": valValuer{v: map[string]any{"type": "text", "text": valValuer{v: "x"}}}}, "", kindNone},
		{"JSONValuer failing", map[string]any{"type": "message.part.delta", "messageId": "m", "part": valValuer{err: errors.New("no")}}, "Agent event.part must be a content part.", kindVal},
		{"JSONValuer top level", valValuer{v: map[string]any{"type": "run.started"}}, "", kindNone},
		{"limit", map[string]any{"type": "run.failed", "code": "c", "message": "m", "limit": map[string]any{"kind": "steps", "used": -1}}, "Agent event.limit.used must be non-negative.", kindVal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := events.ValidateEventInput(tc.in)
			valCheckErr(t, "ValidateEventInput", err, tc.want, tc.kind)
		})
	}
}

type valValuer struct {
	v   any
	err error
}

func (x valValuer) JSONValue() (any, error) { return x.v, x.err }

func TestCloneEventInput(t *testing.T) {
	// §14 case 77.
	_, err := events.CloneEventInput(map[string]any{"type": "run.started", "protocolVersion": 1})
	valCheckErr(t, "run.started with envelope", err, "Agent event contains unsupported fields.", kindVal)
	// Strict-JSON faults are labelled `Agent event input`, payload faults `Agent event`.
	_, err = events.CloneEventInput(map[string]any{"type": "message.started", "messageId": "m", "role": "user", "x": func() {}})
	valCheckErr(t, "func member", err, "Agent event input.x is not JSON-serializable.", kindJSON)
	_, err = events.CloneEventInput([]any{})
	valCheckErr(t, "array", err, "Agent event input must be a JSON object.", kindJSON)
	_, err = events.CloneEventInput(map[string]any{"type": "tool.called", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": []any{}}})
	valCheckErr(t, "input array", err, "Agent event.toolCall.input must be a JSON object.", kindJSON)
	_, err = events.CloneEventInput(map[string]any{"type": "message.started", "messageId": 1})
	valCheckErr(t, "messageId", err, "Agent event.messageId must be a string.", kindVal)

	in := map[string]any{"type": "message.started", "messageId": "m", "role": "user", "eventId": 5, "z": []any{1}}
	o, err := events.CloneEventInput(in)
	if err != nil {
		t.Fatal(err)
	}
	in["z"].([]any)[0] = 2
	b, _ := o.MarshalJSON()
	if string(b) != `{"eventId":5,"messageId":"m","role":"user","type":"message.started","z":[1]}` {
		t.Fatalf("clone %s", b)
	}
}

// valGolden is one row of testdata/validate_events.golden.json.
type valGolden struct {
	Name  string  `json:"name"`
	Text  string  `json:"text"`
	Error *string `json:"error"`
	Kind  string  `json:"kind,omitempty"`
}

// TestValidateGolden pins every table case's text and verdict in a reviewable fixture; run
// with -update to rewrite it.
func TestValidateGolden(t *testing.T) {
	var rows []valGolden
	add := func(name string, text []byte) {
		_, err := events.ParseEvent(text)
		r := valGolden{Name: name, Text: string(text), Kind: valKind(err)}
		if err != nil {
			msg := err.Error()
			r.Error = &msg
		}
		rows = append(rows, r)
	}
	for _, tc := range valEventCases {
		add(tc.name, valText(t, valEvent(t, tc.typ, tc.mods...)))
	}
	for _, tc := range valTextCases {
		if !utf8.ValidString(tc.text) {
			continue // not representable as a JSON string in the fixture
		}
		add(tc.name, []byte(tc.text))
	}
	got, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join("testdata", "validate_events.golden.json")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -run TestValidateGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; run go test -run TestValidateGolden -update and review the diff", file)
	}
	// The fixture is self-checking: every row re-parses to its recorded verdict.
	var back []valGolden
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range back {
		_, err := events.ParseEvent([]byte(r.Text))
		if (err == nil) != (r.Error == nil) || (err != nil && err.Error() != *r.Error) || valKind(err) != r.Kind {
			t.Fatalf("%s: verdict %v, fixture %v", r.Name, err, r.Error)
		}
	}
}

// FuzzDecodeEvent: ParseEvent never panics, its errors are typed, and a valid event re-encodes
// to text that parses to an equal event (same fingerprint, same encoding). The Go-value entry
// points agree with it on the parsed value.
func FuzzDecodeEvent(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := events.ParseEvent(data)
		if err != nil {
			if k := valKind(err); k != kindJSON && k != kindVal {
				t.Fatalf("error of kind %T: %v", err, err)
			}
			if ev.Valid() {
				t.Fatal("failed parse returned a valid Event")
			}
		}
		parsed, perr := events.ParseJSON(data, "Agent event")
		if perr == nil {
			// CloneEvent on the parsed value gives the same verdict.
			ev2, err2 := events.CloneEvent(parsed)
			if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
				t.Fatalf("ParseEvent %v, CloneEvent %v", err, err2)
			}
			if err == nil && ev2.Fingerprint() != ev.Fingerprint() {
				t.Fatal("CloneEvent fingerprint differs")
			}
			// The payload-only entry points never panic and agree with each other.
			e1 := events.ValidateEventInput(parsed)
			_, e2 := events.CloneEventInput(parsed)
			if _, isObj := parsed.(*events.Object); !isObj {
				if e1 == nil || e1.Error() != "Agent event must be an object." || e2 == nil || e2.Error() != "Agent event input must be a JSON object." {
					t.Fatalf("non-object: ValidateEventInput %v, CloneEventInput %v", e1, e2)
				}
			} else if (e1 == nil) != (e2 == nil) || (e1 != nil && e1.Error() != e2.Error()) {
				t.Fatalf("ValidateEventInput %v, CloneEventInput %v", e1, e2)
			}
		} else if err == nil || err.Error() != perr.Error() {
			t.Fatalf("ParseJSON %v but ParseEvent %v", perr, err)
		}
		if err != nil {
			return
		}
		out, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := events.ParseEvent(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if again.Fingerprint() != ev.Fingerprint() {
			t.Fatalf("fingerprint changed: %s", out)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
		if again.Type() != ev.Type() || again.EventID() != ev.EventID() || again.LogicalSequence() != ev.LogicalSequence() {
			t.Fatal("envelope changed")
		}
	})
}

// valBenchEvents are representative events of a long run.
var valBenchEvents = []struct{ name, text string }{
	{"delta", `{"type":"message.part.delta","messageId":"m-1","part":{"type":"text","text":"Hello, wor"},"protocolVersion":1,"eventId":"run-1:3","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":3,"sequence":3,"timestamp":"2025-01-01T00:00:00.200Z"}`},
	{"started", `{"type":"message.started","messageId":"m-1","role":"assistant","protocolVersion":1,"eventId":"0b6f2a36-1f0e-4d53-9a57-8d1f0c2b7e11","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":2,"sequence":2,"timestamp":"2025-01-01T00:00:00.100Z"}`},
	{"tool.completed", `{"type":"tool.completed","result":{"toolCallId":"call_8f2","name":"weather","input":{"city":"Oslo","days":3},"output":{"forecast":[{"day":1,"temp":-2.5},{"day":2,"temp":0},{"day":3,"temp":1.25}]},"isError":false},"protocolVersion":1,"eventId":"run-1:9","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":9,"sequence":9,"timestamp":"2025-01-01T00:00:01.000Z"}`},
	{"run.completed", `{"type":"run.completed","finishReason":"stop","content":[{"type":"text","text":"It will be cold in Oslo."},{"type":"citation","url":"https://example.test/forecast","title":"Forecast"}],"usage":{"inputTokens":1200,"outputTokens":85,"totalTokens":1285,"costUsd":0.0042,"model":"m","provider":"p"},"protocolVersion":1,"eventId":"run-1:12","runId":"run-1","sessionId":"s-1","phaseId":"p-1","logicalSequence":12,"sequence":12,"timestamp":"2025-01-01T00:00:02.000Z"}`},
}

func BenchmarkParseEvent(b *testing.B) {
	for _, e := range valBenchEvents {
		data := []byte(e.text)
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := events.ParseEvent(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
