package dispatch_test

import (
	"slices"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

// FuzzValidateCall runs the executor's validation pass (§8.2–§8.4) on arbitrary argument text
// for every tool: no panic, deterministic problems, owner-resolution problems before the parse's,
// and an accepted call whose final arguments pass the strict parse. Seeds:
// testdata/fuzz/FuzzValidateCall.
func FuzzValidateCall(f *testing.F) {
	f.Add([]byte(`{"body":"b"}`), uint8(9), "DSP-7")
	f.Add([]byte(`{"ref":"https://dispatch.test/issues/DSP-4?ask=x","question":"Q"}`), uint8(2), "")
	specs := dispatch.Specs()
	f.Fuzz(func(t *testing.T, data []byte, tool uint8, legion string) {
		v, err := jsonvalue.Parse(data, "arguments")
		if err != nil {
			return
		}
		spec := specs[int(tool)%len(specs)]
		host := dispatch.HostContext{DispatchURL: "https://dispatch.test", LegionIssue: legion, GitHubRepo: "acme/widgets"}
		out, problems := dispatch.ValidateCall(spec, v, host)
		out2, problems2 := dispatch.ValidateCall(spec, v, host)
		if !slices.Equal(problems, problems2) || (out == nil) != (out2 == nil) {
			t.Fatalf("non-deterministic: %q / %q", problems.Lines(), problems2.Lines())
		}
		if len(problems) > 0 {
			if out != nil {
				t.Fatal("refused call returned arguments")
			}
			// Owner-resolution problems come first (§8.2).
			seenParse := false
			for _, p := range problems {
				if p.Type != ts.ProblemExecutor {
					seenParse = true
				} else if seenParse && isOwnerMessage(p.Message) {
					t.Fatalf("owner problem after a parse problem: %q", problems.Lines())
				}
			}
			return
		}
		if _, p := spec.Parse(out, ts.Strict); len(p) > 0 {
			t.Fatalf("accepted arguments refused by the strict parse: %q", p.Lines())
		}
	})
}

func isOwnerMessage(m string) bool {
	switch m {
	case dispatch.MsgAskRefForm, dispatch.MsgRefForm, dispatch.MsgIssueAndProject, dispatch.MsgProjectKey,
		dispatch.MsgIssueKey, dispatch.MsgProjectRefDocument, dispatch.MsgIssueRefIssue, dispatch.MsgIssueRequired,
		dispatch.MsgLegionIssueRepo, dispatch.MsgLegionIssueForm:
		return true
	}
	return false
}

// FuzzParseEvent feeds arbitrary frames to the inbound event parser (§9.10): no panic, the same
// verdict twice, and every accepted frame's payload decodes or fails with an *EventError.
// Seeds: testdata/fuzz/FuzzParseEvent.
func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"issue_key":null,"type":"child.added","actor":{"kind":"system"},"payload":{"child_key":"DSP-2"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := dispatch.ParseEvent(data)
		e2, err2 := dispatch.ParseEvent(data)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("non-deterministic: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if e.Type != e2.Type || e.Raw == nil {
			t.Fatal("envelope")
		}
		if _, err := e.DecodePayload(); err != nil {
			if _, ok := err.(*dispatch.EventError); !ok {
				t.Fatalf("payload error of type %T: %v", err, err)
			}
		}
	})
}
