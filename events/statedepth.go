package events

import "github.com/agentwire/agentwire/jsonvalue"

// Depth of the reducer state (project-defined; events.md §3.3 and §8.6).
//
// An event nests at most MaxJSONDepth levels (§3.3). The state holds values the events carried
// (records, content parts, interrupts, decisions, usage and limits, with every free-JSON and
// unknown member inside them) at other depths than the events had them, so a state nests deeper
// than any event: a value at depth e in its event, holding containers down to depth
// MaxJSONDepth there, sits at depth s in the state and holds them down to
// MaxJSONDepth + (s - e). Depths count the top-level object as 1. The members of §8.1 that hold
// event data, with s and e:
//
//   - messages[i].content[j]: 5 (state, messages, [i], content, [j]); 2 in message.part.delta
//     (event, part), 3 in message.completed (event, content, [j]);
//   - toolProgress[i].content: 4 (state, toolProgress, [i], content); 2 in tool.progress
//     (event, content);
//   - toolCalls[i], toolResults[i], toolErrors[i]: 3 (state, list, [i]); 2 in tool.called,
//     tool.completed, tool.failed (event, toolCall|result|error);
//   - interruptResolution.decisions: 3 (state, interruptResolution, decisions); 2 in
//     interrupt.resolved (event, decisions);
//   - interrupt, usage, limit: 2 (state, member); 2 in the events that carry them.
//
// Every other member is a scalar, a list of strings or the fingerprint object (depth 2).
// Where a value can arrive from two events (a content part from a delta or a completed
// message), the shallower event position counts: it leaves the value more room.
const (
	partInState      = 5
	partInEvent      = 2
	progressInState  = 4
	progressInEvent  = 2
	recordInState    = 3
	recordInEvent    = 2
	decisionsInState = 3
	decisionsInEvent = 2
	topInState       = 2
	topInEvent       = 2
)

// The extra depth each member of the state adds to the event data it holds.
const (
	partShift      = partInState - partInEvent
	progressShift  = progressInState - progressInEvent
	recordShift    = recordInState - recordInEvent
	decisionsShift = decisionsInState - decisionsInEvent
	topShift       = topInState - topInEvent
)

// MaxStateDepth is the deepest nesting a reducer state reaches: MaxJSONDepth plus the largest
// extra depth of a member that holds event data (3, for a content part that arrived in a
// message.part.delta: the event holds it at depth 2, the state at depth 5).
// [DecodeReducerState], [ReducerState.MarshalIndent] and [ReducerState.Value] parse the state
// with this limit; a client that parses a state (or the relay's run snapshot, whose `meta`
// member is shallower) needs the same allowance, for example with jsonvalue.ParseDeep.
const MaxStateDepth = MaxJSONDepth + max(partShift, progressShift, recordShift, decisionsShift, topShift)

// checkHeldDepth refuses a value v that the state holds at path at and depth depth when it nests
// deeper than any event could have carried it: below depth MaxJSONDepth + shift, where shift is
// the extra depth of its member (see above). The fault is the §3.3 message at the first
// container (in visiting order, §3.2) that opens too deep, as the parser reports a document
// nested too deep. Without this check a decoded state could hold a value that its accessors
// cannot copy (they clone within MaxJSONDepth) and that no run could have produced.
func checkHeldDepth(v any, at string, depth, shift int) error {
	var rev []pathStep
	if !firstTooDeep(v, depth, MaxJSONDepth+shift, &rev) {
		return nil
	}
	path := at
	for i := len(rev) - 1; i >= 0; i-- {
		if s := rev[i]; s.index < 0 {
			path = jsonvalue.MemberPath(path, s.name)
		} else {
			path = jsonvalue.IndexPath(path, s.index)
		}
	}
	return &JSONValidationError{Path: path, Message: path + jsonvalue.SuffixTooDeep}
}

// pathStep is one step of a path: a member name, or (index ≥ 0) an array position.
type pathStep struct {
	name  string
	index int
}

// firstTooDeep reports whether v, at depth depth, holds a container deeper than limit (v
// itself included); if so, rev receives the steps from v to the first such container in
// visiting order, innermost first. The common case (it fits) allocates nothing.
func firstTooDeep(v any, depth, limit int, rev *[]pathStep) bool {
	switch x := v.(type) {
	case *Object:
		if depth > limit {
			return true
		}
		for _, m := range x.Members() {
			if firstTooDeep(m.Value, depth+1, limit, rev) {
				*rev = append(*rev, pathStep{name: m.Name, index: -1})
				return true
			}
		}
	case []any:
		if depth > limit {
			return true
		}
		for i, e := range x {
			if firstTooDeep(e, depth+1, limit, rev) {
				*rev = append(*rev, pathStep{index: i})
				return true
			}
		}
	}
	return false
}
