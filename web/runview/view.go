package runview

import (
	"strconv"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// The JSON the page renders from. Records, parts, interrupts, usage and limits are the state's
// own values (events.md §8.1), re-encoded; the shapes around them are the viewer's:
//
//	head:    {"runId","sessionId","status","interrupt","interruptResolution","usage","limit",
//	          "finishReason","errorCode","cancellationReason","lastSequence",
//	          "lastLogicalSequence","lastPhaseId","eventCount","messageCount"}
//	message: {"index":i,"messageId","role","from":f,"content":[parts from position f on]}
//	         (f is 0 in a view; in a patch, the part count the page already has)
//	tool:    {"toolCallId","call":record,"progress":[parts]|null,"result":record|null,
//	          "error":record|null}
//	event:   {"eventId","type","logicalSequence","sequence","phaseId","timestamp"}
//	view:    {"head":head,"messages":[message…],"tools":[tool…]}
//	patch:   {"applied":n,"duplicates":d,"refusal":{"index","line","message","kind"}|null,
//	          "events":[event…],"messages":[message…],"tools":[tool…],"head":head}

// View appends the view of a state: its head, every message and every tool call with its
// progress, result and error (in `toolCalls` order).
func View(b []byte, st events.ReducerState) []byte {
	b = append(b, `{"head":`...)
	b = appendHead(b, st)
	b = append(b, `,"messages":[`...)
	for i, m := range st.Messages() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, i, 0, m)
	}
	b = append(b, `],"tools":[`...)
	for i, c := range st.ToolCalls() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTool(b, st, c.ToolCallID)
	}
	return append(b, "]}"...)
}

// AppendJSON appends the patch's JSON; messages and tools are read from the state after the
// patch.
func (p *Patch) AppendJSON(b []byte) []byte {
	b = append(b, `{"applied":`...)
	b = strconv.AppendInt(b, int64(p.Applied), 10)
	b = append(b, `,"duplicates":`...)
	b = strconv.AppendInt(b, int64(p.Duplicates), 10)
	b = append(b, `,"refusal":`...)
	if r := p.Refusal; r != nil {
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(r.Index), 10)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(r.Line), 10)
		b = append(b, `,"message":`...)
		b = jsonvalue.AppendQuote(b, r.Message)
		b = append(b, `,"kind":`...)
		b = jsonvalue.AppendQuote(b, r.Kind)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"events":[`...)
	for i, e := range p.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendEventEntry(b, e)
	}
	b = append(b, `],"messages":[`...)
	n := 0
	for _, t := range p.Messages {
		i := p.state.MessageIndex(t.ID)
		m, ok := p.state.MessageFrom(t.ID, t.From)
		if i < 0 || !ok {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, i, t.From, m)
		n++
	}
	b = append(b, `],"tools":[`...)
	n = 0
	for _, id := range p.Tools {
		if _, ok := p.state.ToolCall(id); !ok {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendTool(b, p.state, id)
		n++
	}
	b = append(b, `],"head":`...)
	b = appendHead(b, p.state)
	return append(b, '}')
}

// AppendEventEntry appends an event's timeline entry.
func AppendEventEntry(b []byte, e events.Event) []byte {
	b = append(b, `{"eventId":`...)
	b = jsonvalue.AppendQuote(b, e.EventID())
	b = append(b, `,"type":`...)
	b = jsonvalue.AppendQuote(b, string(e.Type()))
	b = append(b, `,"logicalSequence":`...)
	b = strconv.AppendInt(b, e.LogicalSequence(), 10)
	b = append(b, `,"sequence":`...)
	b = strconv.AppendInt(b, e.Sequence(), 10)
	b = append(b, `,"phaseId":`...)
	b = jsonvalue.AppendQuote(b, e.PhaseID())
	b = append(b, `,"timestamp":`...)
	b = jsonvalue.AppendQuote(b, e.Timestamp())
	return append(b, '}')
}

func appendOptString(b []byte, s string, ok bool) []byte {
	if !ok {
		return append(b, "null"...)
	}
	return jsonvalue.AppendQuote(b, s)
}

func appendHead(b []byte, st events.ReducerState) []byte {
	b = append(b, `{"runId":`...)
	b = appendOpt(b, st.RunID)
	b = append(b, `,"sessionId":`...)
	b = appendOpt(b, st.SessionID)
	b = append(b, `,"status":`...)
	b = jsonvalue.AppendQuote(b, string(st.Status()))
	b = append(b, `,"interrupt":`...)
	if in, ok := st.Interrupt(); ok {
		b = jsonvalue.AppendEncoded(b, in.Raw)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"interruptResolution":`...)
	if r, ok := st.InterruptResolution(); ok {
		b = append(b, `{"interruptId":`...)
		b = jsonvalue.AppendQuote(b, r.InterruptID)
		b = append(b, `,"decisions":`...)
		b = jsonvalue.AppendEncoded(b, r.Decisions)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"usage":`...)
	if u, ok := st.Usage(); ok {
		b = jsonvalue.AppendEncoded(b, u.Raw)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"limit":`...)
	if l, ok := st.Limit(); ok {
		b = jsonvalue.AppendEncoded(b, l.Raw)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"finishReason":`...)
	b = appendOpt(b, st.FinishReason)
	b = append(b, `,"errorCode":`...)
	b = appendOpt(b, st.ErrorCode)
	b = append(b, `,"cancellationReason":`...)
	b = appendOpt(b, st.CancellationReason)
	b = append(b, `,"lastSequence":`...)
	b = jsonvalue.AppendNumber(b, st.LastSequence())
	b = append(b, `,"lastLogicalSequence":`...)
	b = jsonvalue.AppendNumber(b, st.LastLogicalSequence())
	b = append(b, `,"lastPhaseId":`...)
	b = appendOpt(b, st.LastPhaseID)
	b = append(b, `,"eventCount":`...)
	b = strconv.AppendInt(b, int64(st.EventCount()), 10)
	b = append(b, `,"messageCount":`...)
	b = strconv.AppendInt(b, int64(st.MessageCount()), 10)
	return append(b, '}')
}

// appendOpt appends a string-or-null member read by one of the state's (string, ok) accessors.
func appendOpt(b []byte, get func() (string, bool)) []byte {
	s, ok := get()
	return appendOptString(b, s, ok)
}

// appendMessage appends a message whose Content holds its parts from position from on.
func appendMessage(b []byte, i, from int, m events.StateMessage) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"messageId":`...)
	b = jsonvalue.AppendQuote(b, m.MessageID)
	b = append(b, `,"role":`...)
	b = jsonvalue.AppendQuote(b, string(m.Role))
	b = append(b, `,"from":`...)
	b = strconv.AppendInt(b, int64(from), 10)
	b = append(b, `,"content":`...)
	b = appendParts(b, m.Content)
	return append(b, '}')
}

func appendParts(b []byte, parts []events.ContentPart) []byte {
	b = append(b, '[')
	for j, p := range parts {
		if j > 0 {
			b = append(b, ',')
		}
		b = jsonvalue.AppendEncoded(b, p.Raw)
	}
	return append(b, ']')
}

func appendTool(b []byte, st events.ReducerState, id string) []byte {
	b = append(b, `{"toolCallId":`...)
	b = jsonvalue.AppendQuote(b, id)
	b = append(b, `,"call":`...)
	c, _ := st.ToolCall(id)
	b = jsonvalue.AppendEncoded(b, c.Raw)
	b = append(b, `,"progress":`...)
	if p, ok := st.ToolProgressOf(id); ok {
		b = appendParts(b, p.Content)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"result":`...)
	if r, ok := st.ToolResult(id); ok {
		b = jsonvalue.AppendEncoded(b, r.Raw)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"error":`...)
	if r, ok := st.ToolError(id); ok {
		b = jsonvalue.AppendEncoded(b, r.Raw)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}
