package envelope

// TSConstant is one constant the TypeScript declarations export as a literal-typed `const`
// (envelope.md §6.3): its TS name, its value (a string, an int64, or a []string rendered as a
// readonly tuple) and a one-line doc comment. Project-defined; consumed by the generator.
type TSConstant struct {
	Name  string
	Value any
	Doc   string
}

// TypeScriptConstants returns every constant of envelope.md §3.3, §3.4, §4.1, §4.5 and §5.4
// under its TS name, in spec order. The values are the Go constants themselves, so the TS
// output cannot drift from Go (§6.1).
func TypeScriptConstants() []TSConstant {
	replaced := make([]string, 0, len(SubjectSegmentReplaced))
	for _, c := range SubjectSegmentReplaced {
		replaced = append(replaced, string(c))
	}
	return []TSConstant{
		{"SUBJECT_SEGMENT_REPLACED", replaced, "Characters sanitizeSubjectSegment replaces with \"_\" (§3.3)."},
		{"AGENT_TOPIC_PREFIX", AgentTopicPrefix, "Direct agent lane prefix (§3.4)."},
		{"ROLE_TOPIC_PREFIX", RoleTopicPrefix, "Role lane prefix (§3.4)."},
		{"GHOSTWISPR_TOPIC_PREFIX", GhostWisprTopicPrefix, "GhostWispr subject prefix (§3.4)."},
		{"DISPATCH_TOPIC_PREFIX", DispatchTopicPrefix, "Dispatch subject prefix (§3.4)."},
		{"DISPATCH_ISSUE_TOPIC_PREFIX", DispatchIssueTopicPrefix, "Dispatch issue subject prefix (§3.4)."},
		{"DISPATCH_DOCUMENT_TOPIC_PREFIX", DispatchDocumentTopicPrefix, "Dispatch project-document subject prefix (§3.4)."},
		{"LEGION_NOTICE_TOPIC_PREFIX", LegionNoticeTopicPrefix, "Legion notice subject prefix (§3.4)."},
		{"EXCEPTION_TOPIC_PREFIX", ExceptionTopicPrefix, "Delivery-exception subject prefix (§3.4, §5.3)."},
		{"AGENT_STREAM_SUBJECT_PREFIX", AgentStreamSubjectPrefix, "Agent stream subject prefix, outside notifications. (§3.4, §5.4)."},
		{"MINTED_DEDUPE_KEY_PATTERN", MintedDedupeKeyPattern, "Shape of a minted dedupe key; use a full-match API (§4.1)."},
		{"DELIVERY_DUPLICATE_WINDOW_MS", DeliveryDuplicateWindowMS, "How long a repeat is recognised as a duplicate, in ms (§4.5)."},
		{"RECEIPT_TIMEOUT_CAUSE", ReceiptTimeoutCause, "Cause recorded on an attempt the listener never answered (§4.5)."},
		{"MAX_BROADCAST_RECIPIENTS", int64(MaxBroadcastRecipients), "Most sessions one broadcast sends to (§4.5)."},
		{"AGENT_STREAM_PROTOCOL", int64(AgentStreamProtocol), "Agent stream protocol number (§5.4)."},
	}
}

// TSEnum names the TypeScript declarations of one envelope enum (envelope.md §6.3): the
// string-literal union type and the readonly tuple of its values in §1.4 order.
type TSEnum struct {
	Union  string
	Tuple  string
	Values []string
}

// TypeScriptEnums returns the three envelope enums with their TS names (project-defined names:
// EnvelopeSource/ENVELOPE_SOURCES, EnvelopeUrgency/ENVELOPE_URGENCIES,
// EnvelopeExpectsReply/ENVELOPE_EXPECTS_REPLY).
func TypeScriptEnums() []TSEnum {
	strs := func(n int, at func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	return []TSEnum{
		{"EnvelopeSource", "ENVELOPE_SOURCES", strs(len(Sources), func(i int) string { return string(Sources[i]) })},
		{"EnvelopeUrgency", "ENVELOPE_URGENCIES", strs(len(Urgencies), func(i int) string { return string(Urgencies[i]) })},
		{"EnvelopeExpectsReply", "ENVELOPE_EXPECTS_REPLY", strs(len(ExpectsReplies), func(i int) string { return string(ExpectsReplies[i]) })},
	}
}
