package events

import (
	"strconv"

	"github.com/agentwire/agentwire/jsonvalue"
)

// This file holds the record rules of events.md §7: tool call, result and error records (§7.1),
// interrupts (§7.2), usage (§7.3) and limit info (§7.4). Members are checked in the order the
// spec lists them and the first fault is returned.

// Interrupt kinds of events.md §7.2.
const (
	InterruptKindToolApproval = "tool-approval"
	InterruptKindCustom       = "custom"
)

// usageNumberKeys are the numeric AgentUsage members in checking order (events.md §7.3).
// numberKey is a member that must be a non-negative finite number, with its two messages.
type numberKey struct{ name, notFinite, negative string }

var usageNumberKeys = [...]numberKey{
	{"inputTokens", ".inputTokens must be a finite number.", ".inputTokens must be non-negative."},
	{"cachedInputTokens", ".cachedInputTokens must be a finite number.", ".cachedInputTokens must be non-negative."},
	{"outputTokens", ".outputTokens must be a finite number.", ".outputTokens must be non-negative."},
	{"reasoningTokens", ".reasoningTokens must be a finite number.", ".reasoningTokens must be non-negative."},
	{"totalTokens", ".totalTokens must be a finite number.", ".totalTokens must be non-negative."},
	{"costUsd", ".costUsd must be a finite number.", ".costUsd must be non-negative."},
}

// limitNumberKeys are the numeric AgentLimitInfo members in checking order (events.md §7.4).
var limitNumberKeys = [...]numberKey{
	{"limit", ".limit must be a finite number.", ".limit must be non-negative."},
	{"used", ".used must be a finite number.", ".used must be non-negative."},
}

// callBase checks the members every tool record starts with: toolCallId, name, input.
func (c *checker) callBase(v any, p path) (ToolCallRecord, objView, error) {
	o, ok := c.object(v)
	if !ok {
		return ToolCallRecord{}, o, vErr(p, " must be an object.")
	}
	id, ok := c.str(o.get("toolCallId").v)
	if !ok {
		return ToolCallRecord{}, o, vErr(p, ".toolCallId must be a string.")
	}
	name, ok := c.str(o.get("name").v)
	if !ok {
		return ToolCallRecord{}, o, vErr(p, ".name must be a string.")
	}
	input, err := c.jsonObject(o.get("input"), p, ".input")
	if err != nil {
		return ToolCallRecord{}, o, err
	}
	return ToolCallRecord{ToolCallID: id, Name: name, Input: input, Raw: o.o}, o, nil
}

// toolCall validates a ToolCallRecord at p.
func (c *checker) toolCall(v any, p path) (ToolCallRecord, error) {
	r, _, err := c.callBase(v, p)
	return r, err
}

// toolResult validates a ToolResultRecord at p: the call members, then `output` (any JSON value,
// required, null allowed), then `isError`?.
func (c *checker) toolResult(v any, p path) (ToolResultRecord, error) {
	base, o, err := c.callBase(v, p)
	if err != nil {
		return ToolResultRecord{}, err
	}
	out := o.get("output")
	if !out.ok {
		return ToolResultRecord{}, jErr(p, ".output", jsonvalue.SuffixNotSerializable)
	}
	if err := c.jsonValue(out.v, p, ".output"); err != nil {
		return ToolResultRecord{}, err
	}
	r := ToolResultRecord{ToolCallID: base.ToolCallID, Name: base.Name, Input: base.Input, Output: out.v, Raw: base.Raw}
	if s := o.get("isError"); s.ok {
		if !c.boolean(s.v) {
			return ToolResultRecord{}, vErr(p, ".isError must be a boolean.")
		}
		if b, ok := s.v.(bool); ok && !c.raw {
			r.IsError = &b
		}
	}
	if c.raw {
		r.Output = nil
	}
	return r, nil
}

// toolError validates a ToolErrorRecord at p: the call members, then `error`, then `code`?.
func (c *checker) toolError(v any, p path) (ToolErrorRecord, error) {
	base, o, err := c.callBase(v, p)
	if err != nil {
		return ToolErrorRecord{}, err
	}
	msg, ok := c.str(o.get("error").v)
	if !ok {
		return ToolErrorRecord{}, vErr(p, ".error must be a string.")
	}
	r := ToolErrorRecord{ToolCallID: base.ToolCallID, Name: base.Name, Input: base.Input, Error: msg, Raw: base.Raw}
	if s := o.get("code"); s.ok {
		code, ok := c.str(s.v)
		if !ok {
			return ToolErrorRecord{}, vErr(p, ".code must be a string.")
		}
		r.Code = &code
	}
	return r, nil
}

// interrupt validates an AgentInterrupt at p (events.md §7.2).
func (c *checker) interrupt(v any, p path) (Interrupt, error) {
	o, ok := c.object(v)
	if !ok {
		return Interrupt{}, vErr(p, " must be an object.")
	}
	kind, _ := c.str(o.get("kind").v)
	switch kind {
	case InterruptKindToolApproval, InterruptKindCustom:
	default:
		return Interrupt{}, vErr(p, ".kind is unsupported.")
	}
	id, ok := c.str(o.get("interruptId").v)
	if !ok {
		return Interrupt{}, vErr(p, ".interruptId must be a string.")
	}
	prompt, ok := c.str(o.get("prompt").v)
	if !ok {
		return Interrupt{}, vErr(p, ".prompt must be a string.")
	}
	actions, ok := c.array(o.get("actions").v)
	if !ok {
		return Interrupt{}, vErr(p, ".actions must be an array.")
	}
	for i, a := range actions {
		if err := c.action(a, p, i); err != nil {
			return Interrupt{}, err
		}
	}
	if s := o.get("payload"); s.ok {
		if err := c.jsonValue(s.v, p, ".payload"); err != nil {
			return Interrupt{}, err
		}
	}
	return Interrupt{Kind: kind, InterruptID: id, Prompt: prompt, Raw: o.o}, nil
}

// action validates actions[i] of the interrupt at p: an object with string id and name and a
// required `input` of any JSON type.
func (c *checker) action(v any, p path, i int) error {
	at := func() path { return path{base: p.String() + ".actions", idx: i} }
	o, ok := c.object(v)
	if !ok {
		return vErr(at(), " must be an object.")
	}
	if _, ok := c.str(o.get("id").v); !ok {
		return vErr(at(), ".id must be a string.")
	}
	if _, ok := c.str(o.get("name").v); !ok {
		return vErr(at(), ".name must be a string.")
	}
	in := o.get("input")
	if !in.ok {
		return jErr(at(), ".input", jsonvalue.SuffixNotSerializable)
	}
	if c.raw {
		return jsonvalue.AssertValue(in.v, p.String()+".actions["+strconv.Itoa(i)+"].input")
	}
	return nil
}

// usage validates an AgentUsage at p (events.md §7.3); `{}` is valid.
func (c *checker) usage(v any, p path) (Usage, error) {
	o, ok := c.object(v)
	if !ok {
		return Usage{}, vErr(p, " must be an object.")
	}
	for _, k := range usageNumberKeys {
		s := o.get(k.name)
		if !s.ok {
			continue
		}
		f, ok := c.finite(s.v)
		if !ok {
			return Usage{}, vErr(p, k.notFinite)
		}
		if f < 0 {
			return Usage{}, vErr(p, k.negative)
		}
	}
	if err := c.optString(o, "model", p, ".model must be a string."); err != nil {
		return Usage{}, err
	}
	if err := c.optString(o, "provider", p, ".provider must be a string."); err != nil {
		return Usage{}, err
	}
	return Usage{Raw: o.o}, nil
}

// limit validates an AgentLimitInfo at p (events.md §7.4): `kind` string, then `limit`? and
// `used`? finite non-negative numbers.
func (c *checker) limit(v any, p path) (LimitInfo, error) {
	o, ok := c.object(v)
	if !ok {
		return LimitInfo{}, vErr(p, " must be an object.")
	}
	kind, ok := c.str(o.get("kind").v)
	if !ok {
		return LimitInfo{}, vErr(p, ".kind must be a string.")
	}
	for _, k := range limitNumberKeys {
		s := o.get(k.name)
		if !s.ok {
			continue
		}
		f, ok := c.finite(s.v)
		if !ok {
			return LimitInfo{}, vErr(p, k.notFinite)
		}
		if f < 0 {
			return LimitInfo{}, vErr(p, k.negative)
		}
	}
	return LimitInfo{Kind: kind, Raw: o.o}, nil
}

// The check* functions validate one value-model record at a plain path; the reducer state
// decoder uses them for records nested under `Agent reducer state.<member>` (events.md §8.6).

func checkToolCallRecord(v any, at string) (ToolCallRecord, error) {
	ck := checker{}
	return ck.toolCall(v, pathAt(at))
}

func checkToolResultRecord(v any, at string) (ToolResultRecord, error) {
	ck := checker{}
	return ck.toolResult(v, pathAt(at))
}

func checkToolErrorRecord(v any, at string) (ToolErrorRecord, error) {
	ck := checker{}
	return ck.toolError(v, pathAt(at))
}

func checkInterrupt(v any, at string) (Interrupt, error) {
	ck := checker{}
	return ck.interrupt(v, pathAt(at))
}

func checkUsage(v any, at string) (Usage, error) {
	ck := checker{}
	return ck.usage(v, pathAt(at))
}

func checkLimit(v any, at string) (LimitInfo, error) {
	ck := checker{}
	return ck.limit(v, pathAt(at))
}
