package dispatch_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
)

func strs[T ~string](xs []T) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return strings.Join(out, ",")
}

// TestConstants pins the shared lists of dispatch-tools.md §1 (and conformance case 71).
func TestConstants(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"ISSUE_STATUSES", strs(dispatch.IssueStatuses()), "triage,icebox,backlog,todo,in_progress,testing,needs_review,retro,done"},
		{"ASK_URGENCIES", strs(dispatch.AskUrgencies()), "low,med,high,blocking"},
		{"DOC_EDIT_OPS", strs(dispatch.DocEditOps()), "replace,delete,insert,retype,move,delete_row,delete_column"},
		{"SPEC_SECTIONS", strs(dispatch.SpecSections()), "Summary,New since we talked,Acceptance,Requirements,Design,Errors,Testing,Rejected"},
		{"ISSUE_COMPONENTS_MODES", strs(dispatch.IssueComponentsModes()), "inherit,explicit,none"},
		{"DELIVERY_CAPABILITIES", strs(dispatch.DeliveryCapabilities()), "aside,btw,steer"},
		{"ASK_TURNS", strs(dispatch.AskTurns()), "human,agent"},
		{"AskKind", strs(dispatch.AskKinds()), "question,approval"},
		{"resolution kinds", strs(dispatch.AskResolutionKinds()), "retracted,resolved"},
		{"GraphEdgeKind", strs(dispatch.GraphEdgeKinds()), "mentions,child_of,attached_to,anchored_to,owned_by,replies_to,followed_by,part_of,depends_on,affects"},
		{"SearchResultKind", strs(dispatch.SearchResultKinds()), "issue,document,comment,ask,message"},
		{"follow actions", strs(dispatch.FollowActions()), "follow,unfollow"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %s want %s", c.name, c.got, c.want)
		}
	}
	nums := []struct {
		name      string
		got, want int64
	}{
		{"ASK_QUESTION_MAX", dispatch.AskQuestionMax, 800},
		{"DISPATCH_BODY_MAX", dispatch.DispatchBodyMax, 2000},
		{"MAX_ISSUE_PAGE_LIMIT", dispatch.MaxIssuePageLimit, 250},
		{"DEFAULT_ISSUE_PAGE_LIMIT", dispatch.DefaultIssuePageLimit, 50},
		{"MAX_BROADCAST_RECIPIENTS", dispatch.MaxBroadcastRecipients, 100},
		{"DELIVERY_DUPLICATE_WINDOW_MS", dispatch.DeliveryDuplicateWindowMS, 259200000},
		{"artifact upload", dispatch.ArtifactUploadMax, 26214400},
		{"request deadline seconds", int64(dispatch.RequestDeadline.Seconds()), 60},
	}
	for _, c := range nums {
		if c.got != c.want {
			t.Errorf("%s = %d want %d", c.name, c.got, c.want)
		}
	}
	if dispatch.ReceiptTimeoutCause != "The listener didn't answer within the send window; the message may already have been delivered." {
		t.Error("RECEIPT_TIMEOUT_CAUSE")
	}
	for key, want := range map[string]bool{"CORE": true, "DSP": true, "A1": true, "core": false, "C": false, "ABCDEFGHIJK": false, "1AB": false} {
		if dispatch.ProjectKeyRE.MatchString(key) != want {
			t.Errorf("PROJECT_KEY_PATTERN %q", key)
		}
	}
	// The lists are copies: altering one does not alter the next.
	l := dispatch.IssueStatuses()
	l[0] = "closed"
	if dispatch.IssueStatuses()[0] != dispatch.StatusTriage {
		t.Error("IssueStatuses must return a copy")
	}
	for _, d := range []dispatch.DeliveryCapability{"aside", "btw", "steer"} {
		if !d.Valid() {
			t.Errorf("%s must be valid", d)
		}
	}
	if dispatch.DeliveryCapability("shout").Valid() {
		t.Error("shout is not a delivery capability")
	}
	if !slices.Contains(dispatch.IssueStatuses(), dispatch.IssueStatus("done")) || dispatch.IssueStatus("Done").Valid() {
		t.Error("IssueStatus.Valid")
	}
}

// TestEnumsUseConstants checks that every enum argument of the suite lists a constant list in
// its order (the single-spelling rule of §1); turn is the documented exception (agent, human).
func TestEnumsUseConstants(t *testing.T) {
	want := map[string]string{
		"dispatch_issue_update.status": strs(dispatch.IssueStatuses()),
		"dispatch_issues.status":       strs(dispatch.IssueStatuses()),
		"dispatch_ask.urgency":         strs(dispatch.AskUrgencies()),
		"dispatch_edit_ask.urgency":    strs(dispatch.AskUrgencies()),
		"dispatch_resolve_ask.kind":    strs(dispatch.AskResolutionKinds()),
		"dispatch_follow.action":       strs(dispatch.FollowActions()),
		"dispatch_comment.turn":        "agent,human",
	}
	for key, list := range want {
		tool, arg, _ := strings.Cut(key, ".")
		s, _ := dispatch.Lookup(tool)
		found := false
		for _, f := range s.Arguments() {
			if f.Key == arg {
				found = true
				if got := strings.Join(f.Node.Values(), ","); got != list {
					t.Errorf("%s enum %s want %s", key, got, list)
				}
			}
		}
		if !found {
			t.Errorf("%s not declared", key)
		}
	}
}
