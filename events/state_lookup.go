package events

// Keyed accessors: one entry of a list by its key, in O(log n) through the state's key index
// rather than by copying the whole list. Viewers use them to re-render only what an event
// changed (the web viewer's reducer session).

// MessageIndex returns the position of messageID in `messages`, or −1.
func (s ReducerState) MessageIndex(messageID string) int { return s.get().findMessage(messageID) }

// MessagePartCount returns the number of content parts of messageID's entry, or −1 when there
// is none, without copying any part.
func (s ReducerState) MessagePartCount(messageID string) int {
	st := s.get()
	i := st.findMessage(messageID)
	if i < 0 {
		return -1
	}
	return st.messageAt(i).content.Len()
}

// MessageFrom returns a copy of messageID's entry whose Content holds only the parts from
// position from on (from ≤ 0: every part; from ≥ the part count: none). A viewer that already
// shows a streamed message's first parts reads only the new ones: the cost is that of the
// parts copied, not of the whole message.
func (s ReducerState) MessageFrom(messageID string, from int) (StateMessage, bool) {
	st := s.get()
	i := st.findMessage(messageID)
	if i < 0 {
		return StateMessage{}, false
	}
	m := st.messageAt(i)
	from = max(from, 0)
	parts := make([]ContentPart, 0, max(m.content.Len()-from, 0))
	for j := from; j < m.content.Len(); j++ {
		parts = append(parts, partCopy(m.content.Get(j)))
	}
	return StateMessage{MessageID: m.id, Role: m.role, Content: parts}, true
}

// ToolCall returns a copy of the `toolCalls` record of toolCallID, if present.
func (s ReducerState) ToolCall(toolCallID string) (ToolCallRecord, bool) {
	st := s.get()
	i := find(st.index, kindToolCall, toolCallID, keyHash(toolCallID), st.tools.calls, recordKey)
	if i < 0 {
		return ToolCallRecord{}, false
	}
	return toolCallCopy(st.tools.calls.Get(i).raw), true
}

// ToolProgressOf returns a copy of the `toolProgress` entry of toolCallID, if present.
func (s ReducerState) ToolProgressOf(toolCallID string) (ToolProgressEntry, bool) {
	st := s.get()
	i := find(st.index, kindProgress, toolCallID, keyHash(toolCallID), st.tools.progress, progressKey)
	if i < 0 {
		return ToolProgressEntry{}, false
	}
	p := st.tools.progress.Get(i)
	return ToolProgressEntry{ToolCallID: p.id, Content: partsCopy(p.content)}, true
}

// ToolResult returns a copy of the `toolResults` record of toolCallID, if present.
func (s ReducerState) ToolResult(toolCallID string) (ToolResultRecord, bool) {
	st := s.get()
	i := find(st.index, kindResult, toolCallID, keyHash(toolCallID), st.tools.results, recordKey)
	if i < 0 {
		return ToolResultRecord{}, false
	}
	return toolResultCopy(st.tools.results.Get(i)), true
}

// ToolError returns a copy of the `toolErrors` record of toolCallID, if present.
func (s ReducerState) ToolError(toolCallID string) (ToolErrorRecord, bool) {
	st := s.get()
	i := find(st.index, kindError, toolCallID, keyHash(toolCallID), st.tools.errors, recordKey)
	if i < 0 {
		return ToolErrorRecord{}, false
	}
	return toolErrorCopy(st.tools.errors.Get(i)), true
}
