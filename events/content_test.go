package events_test

import (
	"testing"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

func TestCloneContentParts(t *testing.T) {
	cases := []struct {
		name  string
		in    any
		label string
		want  string
		kind  string
	}{
		{"§6 example", valParseNoT(`[{"type":"text","text":"See attached."},{"type":"image","url":"https://example.test/a.png"},{"type":"audio","fileId":"file-9"},{"type":"file","data":"SGVsbG8=","name":"a.txt"},{"type":"custom","name":"chart","data":null}]`), "", "", kindNone},
		{"ten types", valParseNoT(valAllParts), "", "", kindNone},
		{"empty", []any{}, "", "", kindNone},
		{"default label, not an array", map[string]any{}, "", "Content must be an array.", kindVal},
		{"nil", nil, "msg.content", "msg.content must be an array.", kindVal},
		{"JSON fault first", []any{map[string]any{"type": "sticker"}, func() {}}, "", "Content[1] is not JSON-serializable.", kindJSON},
		{"typed slice", []string{"x"}, "", "Content must contain only JSON objects and arrays.", kindJSON},
		{"part fault", []any{map[string]any{"type": "text", "text": "x"}, "text"}, "", "Content[1] must be a content part.", kindVal},
		{"custom label", []any{map[string]any{"type": "sticker"}}, "Agent reducer state.messages[0].content", "Agent reducer state.messages[0].content[0].type is unsupported.", kindVal},
		{"media", []any{map[string]any{"type": "image", "url": "u", "data": "d"}}, "", "Content[0] must contain exactly one media source.", kindVal},
		{"tool-result record", []any{map[string]any{"type": "tool-result", "result": map[string]any{"toolCallId": "c", "name": "n", "input": map[string]any{}}}}, "", "Content[0].result.output is not JSON-serializable.", kindJSON},
		{"tool-call record input", []any{map[string]any{"type": "tool-call", "toolCall": map[string]any{"toolCallId": "c", "name": "n", "input": "x"}}}, "", "Content[0].toolCall.input must be a JSON object.", kindJSON},
		{"deep index", valParseNoT(`[{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"text","text":""},{"type":"citation","url":"u","title":5}]`), "", "Content[10].title must be a string.", kindVal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := events.CloneContentParts(tc.in, tc.label)
			valCheckErr(t, "CloneContentParts", err, tc.want, tc.kind)
			if err == nil {
				c, _ := events.CloneJSONValue(tc.in, "")
				if !jsonvalue.Equal(out, c) {
					t.Fatal("clone differs from input")
				}
			}
		})
	}
	// The result shares nothing with the input.
	in := []any{map[string]any{"type": "text", "text": "a"}}
	out, err := events.CloneContentParts(in, "")
	if err != nil {
		t.Fatal(err)
	}
	in[0].(map[string]any)["text"] = "b"
	if s, _ := out[0].(*events.Object).Get("text"); s != "a" {
		t.Fatal("clone shares the input")
	}
}

func valParseNoT(text string) any {
	v, err := jsonvalue.Parse([]byte(text), "")
	if err != nil {
		panic(err)
	}
	return v
}
