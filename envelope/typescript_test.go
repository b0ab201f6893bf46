package envelope

import (
	"slices"
	"testing"
)

func TestTypeScriptNames(t *testing.T) {
	var names []string
	for _, c := range TypeScriptConstants() {
		names = append(names, c.Name)
		switch c.Value.(type) {
		case string, int64, []string:
		default:
			t.Errorf("%s: value type %T", c.Name, c.Value)
		}
	}
	want := []string{"SUBJECT_SEGMENT_REPLACED", "AGENT_TOPIC_PREFIX", "ROLE_TOPIC_PREFIX", "GHOSTWISPR_TOPIC_PREFIX",
		"DISPATCH_TOPIC_PREFIX", "DISPATCH_ISSUE_TOPIC_PREFIX", "DISPATCH_DOCUMENT_TOPIC_PREFIX", "LEGION_NOTICE_TOPIC_PREFIX",
		"EXCEPTION_TOPIC_PREFIX", "AGENT_STREAM_SUBJECT_PREFIX", "MINTED_DEDUPE_KEY_PATTERN", "DELIVERY_DUPLICATE_WINDOW_MS",
		"RECEIPT_TIMEOUT_CAUSE", "MAX_BROADCAST_RECIPIENTS", "AGENT_STREAM_PROTOCOL"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %q", names)
	}
	// §7 case 48: the TS tuple.
	if got := TypeScriptConstants()[0].Value.([]string); !slices.Equal(got, []string{".", " ", "\t", "\r", "\n", "*", ">"}) {
		t.Fatalf("SUBJECT_SEGMENT_REPLACED %q", got)
	}
	enums := TypeScriptEnums()
	if len(enums) != 3 || enums[0].Values[7] != "dispatch" || enums[1].Values[3] != "blocking" || enums[2].Tuple != "ENVELOPE_EXPECTS_REPLY" {
		t.Fatalf("enums %+v", enums)
	}
}
