package toolspec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Validation is the optional cross-field rule of a spec (dispatch-tools.md §2.1 `validation`):
// one predicate over the normalized argument object and its literal failure message (P12).
type Validation struct {
	Check   func(args *jsonvalue.Object) bool
	Message string
}

// Definition is the input of [New]: the members of a tool specification (§2.1).
type Definition struct {
	// Name is the tool name, unique in its suite.
	Name string
	// Description is the model-facing text (§2.5).
	Description string
	// Arguments is the ordered argument shape; declaration order is significant.
	Arguments []Field
	// Validation is the optional cross-field rule.
	Validation *Validation
	// Strict refuses unknown top-level keys in every parse mode.
	Strict bool
	// Example is the JSON text of a call the strict parse accepts. Its member order is kept
	// for the `Example:` refusal line.
	Example string
}

// Spec is an immutable tool specification (§2.1) together with everything derived from it: its
// tool schema, JSON Schema and the fixed lines of its refusal text.
type Spec struct {
	name        string
	description string
	root        *Node // object(arguments, {strict}) or refineObject(…)
	strict      bool
	example     *jsonvalue.Object
	exampleLine string // "- Example: <tool>(<compact JSON>)"
	allowedLine string // "- Allowed keys: <keys>"
}

// New builds a spec from its definition. It fails when the name or description is empty, the
// example is not a JSON object, or the example is refused by the strict parse (§2.5: every
// example MUST be accepted by the strict parse).
func New(d Definition) (*Spec, error) {
	if d.Name == "" {
		return nil, errors.New("toolspec: a spec needs a name")
	}
	if d.Description == "" {
		return nil, fmt.Errorf("toolspec: %s needs a description", d.Name)
	}
	var root *Node
	if d.Validation != nil {
		root = RefineObject(d.Arguments, d.Validation.Check, d.Validation.Message)
	} else {
		root = Object(d.Arguments...)
	}
	if d.Strict {
		root = root.Strict()
	}
	ex, err := jsonvalue.ParseObject([]byte(d.Example), "example")
	if err != nil {
		return nil, fmt.Errorf("toolspec: %s example: %w", d.Name, err)
	}
	s := &Spec{name: d.Name, description: d.Description, root: root, strict: d.Strict, example: ex}
	s.allowedLine = "- Allowed keys: " + root.allowed
	s.exampleLine = "- Example: " + d.Name + "(" + string(jsonvalue.AppendEncoded(nil, ex)) + ")"
	if _, problems := s.Parse(ex, Strict); len(problems) > 0 {
		return nil, fmt.Errorf("toolspec: %s example is refused by the strict parse: %s", d.Name, problems.Error())
	}
	return s, nil
}

// MustNew is [New] that panics on error; it is meant for package-level suites whose
// definitions are constants of the program.
func MustNew(d Definition) *Spec {
	s, err := New(d)
	if err != nil {
		panic(err)
	}
	return s
}

// Name returns the tool name.
func (s *Spec) Name() string { return s.name }

// Description returns the model-facing description.
func (s *Spec) Description() string { return s.description }

// Arguments returns a copy of the argument shape in declaration order.
func (s *Spec) Arguments() []Field { return s.root.Fields() }

// Root returns the tool schema node: object(arguments, {strict}) or refineObject(arguments,
// check, message, {strict}) when the spec has a validation.
func (s *Spec) Root() *Node { return s.root }

// Validation returns the cross-field rule, or nil.
func (s *Spec) Validation() *Validation {
	if s.root.check == nil {
		return nil
	}
	return &Validation{Check: s.root.check, Message: s.root.message}
}

// Strict reports whether unknown top-level keys are refused in every parse mode.
func (s *Spec) Strict() bool { return s.strict }

// Example returns a copy of the example call.
func (s *Spec) Example() *jsonvalue.Object {
	c, _ := jsonvalue.CloneObject(s.example, "example")
	return c
}

// ExampleLine returns the `- Example: <tool>(<compact JSON>)` refusal line (§4).
func (s *Spec) ExampleLine() string { return s.exampleLine }

// AllowedKeysLine returns the `- Allowed keys: <keys>` refusal line (§4).
func (s *Spec) AllowedKeysLine() string { return s.allowedLine }

// Parse runs the parse of §2.3 on an argument value of the jsonvalue model. It returns the
// normalized argument object (declared keys only, input order kept; the input itself when
// nothing was dropped) or, when the call is refused, a nil object and every problem in the
// order of §2.3. A root that is not an object gives exactly one problem,
// `arguments must be an object, not <I>`; pass an empty object for an absent payload.
func (s *Spec) Parse(args any, mode Mode) (*jsonvalue.Object, Problems) {
	o, ok := args.(*jsonvalue.Object)
	if !ok || o == nil {
		b := []byte("arguments must be an object, not ")
		b = appendDescribe(b, args)
		return nil, Problems{{Type: ProblemNotObject, Message: string(b)}}
	}
	p := getParser()
	out, _ := p.object(s.root, o, s.strict || mode == Strict)
	problems := p.problems()
	putParser(p)
	if problems != nil {
		return nil, problems
	}
	return out, nil
}

// ParseJSON parses the argument text with the strict JSON layer and then runs [Spec.Parse].
// Text that is empty or only white space is an absent payload and parses as `{}` (§2.3). A
// strict-JSON fault (syntax, duplicate names, invalid UTF-8, depth, number range) is returned
// as a *jsonvalue.JSONValidationError labelled `arguments`, before any validation.
func (s *Spec) ParseJSON(text []byte, mode Mode) (*jsonvalue.Object, Problems, error) {
	if len(bytes.TrimLeft(text, " \t\r\n")) == 0 {
		o, problems := s.Parse(jsonvalue.NewObject(0), mode)
		return o, problems, nil
	}
	v, err := jsonvalue.Parse(text, "arguments")
	if err != nil {
		return nil, nil, err
	}
	o, problems := s.Parse(v, mode)
	return o, problems, nil
}

// ParseGo validates an arbitrary Go value with [jsonvalue.CloneValue] (maps, slices, numbers of
// any Go type, …) and runs [Spec.Parse] on the copy.
func (s *Spec) ParseGo(args any, mode Mode) (*jsonvalue.Object, Problems, error) {
	v, err := jsonvalue.CloneValue(args, "arguments")
	if err != nil {
		return nil, nil, err
	}
	o, problems := s.Parse(v, mode)
	return o, problems, nil
}

// Check parses args and returns nil when the call is accepted, or a *[ToolInputError] carrying
// every problem.
func (s *Spec) Check(args any, mode Mode) error {
	if _, problems := s.Parse(args, mode); len(problems) > 0 {
		return &ToolInputError{Tool: s.name, Problems: problems, Spec: s}
	}
	return nil
}

// Refusal renders the refusal text of §4 for the given problems: the header, one `- <problem>`
// line each, `- Allowed keys: …` and `- Example: …`, joined by "\n" with no trailing newline.
func (s *Spec) Refusal(problems Problems) string {
	return renderRefusal(s.name, problems, s)
}

// ToolInputError is the refusal of a call (§4): the tool name and its ordered problems. Error
// renders the refusal text; when Spec is set (every Dispatch tool) it ends with the allowed-keys
// and example lines, otherwise (tools of other families) it has only the header and the problem
// lines.
type ToolInputError struct {
	Tool     string
	Problems Problems
	Spec     *Spec
}

// Error renders the refusal text of §4.
func (e *ToolInputError) Error() string { return renderRefusal(e.Tool, e.Problems, e.Spec) }

func renderRefusal(tool string, problems Problems, s *Spec) string {
	var b strings.Builder
	b.WriteString(tool)
	b.WriteString(" was not called: ")
	fmt.Fprintf(&b, "%d", len(problems))
	if len(problems) == 1 {
		b.WriteString(" problem")
	} else {
		b.WriteString(" problems")
	}
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(p.Message)
	}
	if s != nil {
		b.WriteByte('\n')
		b.WriteString(s.allowedLine)
		b.WriteByte('\n')
		b.WriteString(s.exampleLine)
	}
	return b.String()
}

// Suite is an ordered registry of specs with unique names; lookup by name is exact (§2.1).
type Suite struct {
	specs  []*Spec
	byName map[string]*Spec
}

// NewSuite builds a suite; it fails on a nil spec or a repeated name.
func NewSuite(specs ...*Spec) (*Suite, error) {
	s := &Suite{specs: append([]*Spec(nil), specs...), byName: make(map[string]*Spec, len(specs))}
	for i, sp := range specs {
		if sp == nil {
			return nil, fmt.Errorf("toolspec: spec %d is nil", i)
		}
		if _, dup := s.byName[sp.name]; dup {
			return nil, fmt.Errorf("toolspec: duplicate tool name %s", sp.name)
		}
		s.byName[sp.name] = sp
	}
	return s, nil
}

// Specs returns the specs in suite order (a copy of the list; the specs are immutable).
func (s *Suite) Specs() []*Spec { return append([]*Spec(nil), s.specs...) }

// Names returns the tool names in suite order.
func (s *Suite) Names() []string {
	names := make([]string, len(s.specs))
	for i, sp := range s.specs {
		names[i] = sp.name
	}
	return names
}

// Len reports the number of specs.
func (s *Suite) Len() int { return len(s.specs) }

// Lookup returns the spec named exactly name.
func (s *Suite) Lookup(name string) (*Spec, bool) {
	sp, ok := s.byName[name]
	return sp, ok
}
