package dispatch_test

import (
	"fmt"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/toolspec"
)

// The executor parses every call strictly and refuses it once with every problem listed.
func Example() {
	spec, _ := dispatch.Lookup(dispatch.ToolComment)
	_, problems, _ := spec.ParseJSON([]byte(`{"issue":"DSP-1","body":"Ship it?","turn":"agent"}`), toolspec.Strict)
	fmt.Println(spec.Refusal(problems))

	_, problems, _ = spec.ParseJSON([]byte(`{"issue":"DSP-1","body":"On it.","reply_to_ask":"01234567-0000-4000-8000-000000000001","turn":"agent"}`), toolspec.Strict)
	fmt.Println(len(problems) == 0)
	// Output:
	// dispatch_comment was not called: 1 problem
	// - Exactly one of issue and project is required; with project, artifact names the document. turn requires reply_to_ask.
	// - Allowed keys: issue, project, artifact, ref, quote, occurrence, body, reply_to, reply_to_ask, turn
	// - Example: dispatch_comment({"issue":"DSP-1","body":"Looks good."})
	// true
}

// Write inputs tell an absent member from a null one (dispatch-tools.md §8.7).
func ExampleOpt() {
	body, _ := dispatch.Encode(dispatch.UpdateIssueInput{
		Parent: dispatch.Null[string](),
		Labels: dispatch.Some([]string{}),
	})
	fmt.Println(string(body))
	// Output:
	// {"labels":[],"parent":null}
}
