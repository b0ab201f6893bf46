package gen

import (
	"fmt"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// dispatchContract renders the Dispatch tool suite (dispatch-tools.md): one parameter schema per
// tool, exactly as toolspec emits it (§2.4) with the generated-file header members added
// (schema/dispatch/<tool>.schema.json); the suite schema schema/dispatch.schema.json, which
// validates a call {name, arguments} to any tool of the suite (a `oneOf` discriminated by the
// `name` `const`, the parameter schemas under `$defs`); and ts/dispatch.gen.ts.
var dispatchContract = Contract{Name: "dispatch", Render: renderDispatch}

// DispatchToolSchema returns schema/dispatch/<tool>.schema.json as a value: `$comment`,
// `$schema`, `$id`, `title` (the tool name), then the members toolspec emits.
func DispatchToolSchema(tool string) (*jsonvalue.Object, error) {
	spec, ok := dispatch.Lookup(tool)
	if !ok {
		return nil, fmt.Errorf("no Dispatch tool %q", tool)
	}
	return SchemaDocument("dispatch/"+tool, tool, spec.Schema()), nil
}

// DispatchSchema returns schema/dispatch.schema.json as a value, with the TypeScript names and
// doc comments of its definitions.
func DispatchSchema() (*jsonvalue.Object, map[string]TSName, map[string]string) {
	docs := map[string]string{}
	specs := dispatch.Specs()
	names := map[string]TSName{
		"/$defs/DispatchToolName": {Name: "DispatchToolName", Tuple: "DISPATCH_TOOL_NAMES"},
	}
	toolNames := make([]any, len(specs))
	variants := make([]any, len(specs))
	defs := jsonvalue.NewObject(len(specs) + 1)
	defs.Set("DispatchToolName", jsonvalue.ObjectOf(
		"description", "The name of a Dispatch tool, in suite order (dispatch-tools.md §6).",
		"type", "string", "enum", toolNames))
	for i, s := range specs {
		toolNames[i] = s.Name()
		params := s.Schema()
		params.Delete("$schema")
		defs.Set(s.Name(), params)
		variants[i] = jsonvalue.ObjectOf(
			"description", s.Description(),
			"type", "object",
			"required", []any{"name", "arguments"},
			"properties", jsonvalue.ObjectOf(
				"name", jsonvalue.ObjectOf("const", s.Name()),
				"arguments", jsonvalue.ObjectOf("$ref", "#/$defs/"+s.Name()),
			),
			"additionalProperties", false,
		)
		docs[pointer("/$defs", s.Name())] = "The arguments of " + s.Name() + "."
		base := pascal(s.Name())
		names[pointer("/$defs", s.Name())] = TSName{Name: base + "Args"}
		names[fmt.Sprintf("/oneOf/%d", i)] = TSName{Name: base + "Call"}
	}
	body := jsonvalue.ObjectOf(
		"description", "A call to one tool of the Dispatch suite: its name and its arguments, which must "+
			"satisfy that tool's parameter schema (dispatch-tools.md §2.4). The per-tool schemas are "+
			"also published alone as schema/dispatch/<tool>.schema.json.",
		"oneOf", variants,
		"$defs", defs,
	)
	return SchemaDocument("dispatch", "DispatchToolCall", body), names, docs
}

// pascal turns a snake_case tool name into a PascalCase TypeScript name.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

func renderDispatch() ([]File, error) {
	doc, names, docs := DispatchSchema()
	names[""] = TSName{Name: "DispatchToolCall"}
	files, err := Files("dispatch", doc, TSOptions{
		Doc: "The Dispatch tool suite (dispatch-tools.md): the arguments of each tool and the union of " +
			"calls. Rendered from the toolspec definitions of package " +
			"github.com/agentwire/agentwire/dispatch; the JSON Schemas are schema/dispatch.schema.json " +
			"and schema/dispatch/<tool>.schema.json.",
		Names: names,
		Docs:  docs,
	})
	if err != nil {
		return nil, err
	}
	for _, name := range dispatch.Names() {
		d, err := DispatchToolSchema(name)
		if err != nil {
			return nil, err
		}
		f, err := SchemaFile("dispatch/"+name, d)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
