package dispatch_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The differential test of the must-show list: for many generated argument objects per
// tool — valid ones built from the emitted JSON Schema, then mutated (wrong types, missing
// required keys, extra keys, strings too long or too short, numbers out of range or not
// integral, too many or too few items, enum mismatches, nulls) — our verdict on the
// schema-expressible rules must equal the verdict of santhosh-tekuri/jsonschema/v6 on the
// emitted schema.
//
// Comparison rules (dispatch-tools.md §2.3.1):
//   - ours is the lenient parse, with a refusal made only of the cross-field problem counted as
//     an acceptance (class 1: cross-field rules are not expressible in the schema), and unknown
//     top-level keys of non-strict tools dropped (class 4);
//   - a second pass compares our strict parse with the schema closed at the root
//     (`additionalProperties:false`), which is exactly what the strict mode adds;
//   - disagreements are classified: (2) a bounded string whose UTF-16 length and code-point count
//     fall on different sides of a bound; (3) an int node without an explicit bound given a value
//     beyond ±9007199254740991. Any other disagreement fails the test. Class (5) cannot occur
//     (both sides see the same IEEE-754 doubles) and class (6) is out of scope (generated values
//     are always valid JSON text).

const (
	validPerTool   = 150
	mutantsPerTool = 600
)

type diffStats struct {
	compared, agreeAccept, agreeReject int
	classUTF16, classSafeInt           int
	crossFieldOnly                     int
}

func TestDifferentialAgainstJSONSchema(t *testing.T) {
	total := diffStats{}
	for i, spec := range dispatch.Specs() {
		rng := rand.New(rand.NewPCG(uint64(i)+1, 0x5eed))
		schema := spec.Schema()
		open, err := compileSchema(spec)
		if err != nil {
			t.Fatal(err)
		}
		closed, err := compileClosed(spec)
		if err != nil {
			t.Fatal(err)
		}
		var st diffStats
		g := &generator{rng: rng}
		for n := 0; n < validPerTool+mutantsPerTool; n++ {
			v := g.value(schema, 0)
			if n >= validPerTool {
				g.mutate(v, schema)
			}
			compare(t, spec, v, schema, open, ts.Lenient, &st)
			compare(t, spec, v, schema, closed, ts.Strict, &st)
		}
		t.Logf("%-27s compared %5d: agree accept %4d, agree reject %4d, cross-field-only %3d, class(2) utf16 %3d, class(3) safe-int %3d",
			spec.Name(), st.compared, st.agreeAccept, st.agreeReject, st.crossFieldOnly, st.classUTF16, st.classSafeInt)
		total.compared += st.compared
		total.agreeAccept += st.agreeAccept
		total.agreeReject += st.agreeReject
		total.classUTF16 += st.classUTF16
		total.classSafeInt += st.classSafeInt
		total.crossFieldOnly += st.crossFieldOnly
	}
	t.Logf("total compared %d: agree %d, classified class(2) %d, class(3) %d; cross-field-only refusals %d",
		total.compared, total.agreeAccept+total.agreeReject, total.classUTF16, total.classSafeInt, total.crossFieldOnly)
	if total.agreeReject < total.compared/4 || total.agreeAccept < total.compared/10 {
		t.Errorf("generator too one-sided: %+v", total)
	}
	if total.classUTF16 == 0 || total.classSafeInt == 0 {
		t.Errorf("the generator must reach the known difference classes: %+v", total)
	}
}

// compileClosed compiles the emitted schema with `additionalProperties:false` at the root.
func compileClosed(spec *ts.Spec) (*jsonschema.Schema, error) {
	s := spec.Schema()
	s.Set("additionalProperties", false)
	doc := toSanthosh(s)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "https://agentwire.test/closed/" + spec.Name() + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

func compare(t *testing.T, spec *ts.Spec, v *jsonvalue.Object, schema *jsonvalue.Object, sch *jsonschema.Schema, mode ts.Mode, st *diffStats) {
	t.Helper()
	st.compared++
	_, problems := spec.Parse(v, mode)
	ours := len(problems) == 0
	if len(problems) == 1 && problems[0].Type == ts.ProblemCrossField {
		ours = true // class (1): not expressible in the schema
		st.crossFieldOnly++
	}
	theirs := sch.Validate(toSanthosh(v)) == nil
	if ours == theirs {
		if ours {
			st.agreeAccept++
		} else {
			st.agreeReject++
		}
		return
	}
	// A disagreement is classified only when the deciding problems are all of the class: our
	// problems (when we refuse) or jsonschema's leaf errors (when it refuses).
	theirErr := sch.Validate(toSanthosh(v))
	switch {
	case hasUTF16Difference(v, schema) && explained(problems, theirErr, ts.ProblemTooLong, ts.ProblemTooShort):
		st.classUTF16++
	case hasUnsafeInteger(v, schema) && theirs && explained(problems, nil, ts.ProblemTooLarge, ts.ProblemTooSmall) &&
		allMention(problems, "9007199254740991"):
		st.classSafeInt++
	default:
		text, _ := jsonvalue.Marshal(v)
		var serr string
		if err := sch.Validate(toSanthosh(v)); err != nil {
			serr = err.Error()
		}
		t.Errorf("%s (%s): ours accept=%v, jsonschema accept=%v\nargs %s\nour problems %q\njsonschema: %s",
			spec.Name(), mode, ours, theirs, text, problems.Lines(), serr)
	}
}

// explained reports whether every problem on the refusing side is of the given types (ours) or
// is a minLength/maxLength error (jsonschema's leaf errors).
func explained(problems ts.Problems, theirErr error, types ...ts.ProblemType) bool {
	for _, p := range problems {
		if !slices.Contains(types, p.Type) {
			return false
		}
	}
	if theirErr == nil {
		return true
	}
	verr, ok := theirErr.(*jsonschema.ValidationError)
	if !ok {
		return false
	}
	var leaves func(e *jsonschema.ValidationError) bool
	leaves = func(e *jsonschema.ValidationError) bool {
		if len(e.Causes) == 0 {
			switch e.ErrorKind.(type) {
			case *kind.MinLength, *kind.MaxLength:
				return true
			}
			return false
		}
		for _, c := range e.Causes {
			if !leaves(c) {
				return false
			}
		}
		return true
	}
	return leaves(verr)
}

func allMention(problems ts.Problems, text string) bool {
	for _, p := range problems {
		if !strings.Contains(p.Message, text) {
			return false
		}
	}
	return len(problems) > 0
}

// toSanthosh converts a jsonvalue value to the map/slice form jsonschema/v6 validates.
func toSanthosh(v any) any {
	switch x := v.(type) {
	case *jsonvalue.Object:
		m := make(map[string]any, x.Len())
		for _, mem := range x.Members() {
			m[mem.Name] = toSanthosh(mem.Value)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toSanthosh(e)
		}
		return out
	}
	return v
}

// walkSchema calls fn for every value of v together with the schema node that governs it.
func walkSchema(v any, schema *jsonvalue.Object, fn func(v any, schema *jsonvalue.Object) bool) bool {
	if schema == nil {
		return false
	}
	if alt, ok := schema.Get("anyOf"); ok {
		if v == nil {
			return false
		}
		schema = alt.([]any)[0].(*jsonvalue.Object)
	}
	if fn(v, schema) {
		return true
	}
	switch x := v.(type) {
	case *jsonvalue.Object:
		props, _ := schema.Get("properties")
		po, _ := props.(*jsonvalue.Object)
		for _, m := range x.Members() {
			if ps, ok := po.Get(m.Name); ok {
				if walkSchema(m.Value, ps.(*jsonvalue.Object), fn) {
					return true
				}
			}
		}
	case []any:
		items, _ := schema.Get("items")
		io, _ := items.(*jsonvalue.Object)
		for _, e := range x {
			if walkSchema(e, io, fn) {
				return true
			}
		}
	}
	return false
}

func num(o *jsonvalue.Object, key string) (float64, bool) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

// hasUTF16Difference reports a bounded string whose UTF-16 length and code-point count are on
// different sides of one of its bounds (class 2).
func hasUTF16Difference(v *jsonvalue.Object, schema *jsonvalue.Object) bool {
	return walkSchema(v, schema, func(x any, s *jsonvalue.Object) bool {
		str, ok := x.(string)
		if !ok {
			return false
		}
		u, r := float64(ts.UTF16Len(str)), float64(utf8.RuneCountInString(str))
		if min, ok := num(s, "minLength"); ok && (u < min) != (r < min) {
			return true
		}
		if max, ok := num(s, "maxLength"); ok && (u > max) != (r > max) {
			return true
		}
		return false
	})
}

// hasUnsafeInteger reports a number beyond ±2^53−1 in an integer node that leaves that bound
// implicit (class 3).
func hasUnsafeInteger(v *jsonvalue.Object, schema *jsonvalue.Object) bool {
	return walkSchema(v, schema, func(x any, s *jsonvalue.Object) bool {
		f, ok := x.(float64)
		if typ, _ := s.Get("type"); !ok || typ != "integer" {
			return false
		}
		_, hasMin := s.Get("minimum")
		_, hasMax := s.Get("maximum")
		return (!hasMax && f > jsonvalue.MaxSafeInteger) || (!hasMin && f < -jsonvalue.MaxSafeInteger)
	})
}

// generator builds argument values from an emitted JSON Schema and mutates them.
type generator struct {
	rng *rand.Rand
}

var alphabet = []string{"a", "b", "Z", "0", " ", "-", "é", "€", "漢", "😀", "\u2028", "\"", "\\", "\n"}

// str returns a string of exactly n UTF-16 units; astral decides whether astral characters may
// be used (they make the code-point count differ from the UTF-16 length).
func (g *generator) str(n int, astral bool) string {
	var b strings.Builder
	for n > 0 {
		c := alphabet[g.rng.IntN(len(alphabet))]
		if c == "😀" && (!astral || n < 2) {
			continue
		}
		b.WriteString(c)
		n -= ts.UTF16Len(c)
	}
	return b.String()
}

func (g *generator) value(schema *jsonvalue.Object, depth int) *jsonvalue.Object {
	return g.gen(schema, depth).(*jsonvalue.Object)
}

func (g *generator) gen(schema *jsonvalue.Object, depth int) any {
	if alt, ok := schema.Get("anyOf"); ok {
		if g.rng.IntN(3) == 0 {
			return nil
		}
		return g.gen(alt.([]any)[0].(*jsonvalue.Object), depth)
	}
	typ, _ := schema.Get("type")
	if enum, ok := schema.Get("enum"); ok {
		vs := enum.([]any)
		return vs[g.rng.IntN(len(vs))]
	}
	switch typ {
	case "string":
		min, hasMin := num(schema, "minLength")
		max, hasMax := num(schema, "maxLength")
		lo := 0
		if hasMin {
			lo = int(min)
		}
		hi := lo + 12
		if hasMax {
			hi = int(max)
		}
		if hasMax && g.rng.IntN(4) == 0 {
			return g.str(hi, false) // exactly at the bound
		}
		n := lo + g.rng.IntN(hi-lo+1)
		// Astral characters only where both measures stay inside the bounds.
		return g.str(n, !hasMax && !hasMin)
	case "integer", "number":
		min, hasMin := num(schema, "minimum")
		max, hasMax := num(schema, "maximum")
		if !hasMin {
			min = -1000
		}
		if !hasMax {
			max = min + 2000
		}
		f := min + float64(g.rng.IntN(int(max-min)+1))
		if typ == "number" && g.rng.IntN(2) == 0 {
			f += 0.5
		}
		return f
	case "boolean":
		return g.rng.IntN(2) == 0
	case "array":
		items, _ := schema.Get("items")
		min, hasMin := num(schema, "minItems")
		max, hasMax := num(schema, "maxItems")
		lo := 0
		if hasMin {
			lo = int(min)
		}
		hi := lo + 3
		if hasMax && int(max) < hi {
			hi = int(max)
		}
		n := lo + g.rng.IntN(hi-lo+1)
		out := make([]any, n)
		for i := range out {
			out[i] = g.gen(items.(*jsonvalue.Object), depth+1)
		}
		return out
	case "object":
		props, _ := schema.Get("properties")
		po := props.(*jsonvalue.Object)
		req := map[string]bool{}
		if r, ok := schema.Get("required"); ok {
			for _, k := range r.([]any) {
				req[k.(string)] = true
			}
		}
		o := jsonvalue.NewObject(po.Len())
		for _, m := range po.Members() {
			if req[m.Name] || g.rng.IntN(3) == 0 {
				o.Set(m.Name, g.gen(m.Value.(*jsonvalue.Object), depth+1))
			}
		}
		if g.rng.IntN(5) == 0 { // member order is not significant for either validator
			ms := o.Members()
			shuffled := jsonvalue.NewObject(len(ms))
			for _, i := range g.rng.Perm(len(ms)) {
				shuffled.Set(ms[i].Name, ms[i].Value)
			}
			return shuffled
		}
		return o
	default: // {}: any JSON value
		return g.anyValue(depth)
	}
}

func (g *generator) anyValue(depth int) any {
	switch k := g.rng.IntN(7); {
	case k == 0:
		return nil
	case k == 1:
		return g.rng.IntN(2) == 0
	case k == 2:
		return float64(g.rng.IntN(100)) - 50.25
	case k == 3 || depth > 3:
		return g.str(g.rng.IntN(6), true)
	case k == 4:
		return []any{g.anyValue(depth + 1), g.anyValue(depth + 1)}
	default:
		return jsonvalue.ObjectOf("k", g.anyValue(depth+1))
	}
}

// slot is a place in a generated value: the container, the key or index, and its schema.
type slot struct {
	obj    *jsonvalue.Object
	arr    []any
	key    string
	index  int
	schema *jsonvalue.Object // nil for an undeclared member
	parent *jsonvalue.Object // the schema of the containing object (for missing keys)
}

func (g *generator) slots(v any, schema *jsonvalue.Object, out []slot) []slot {
	if alt, ok := schema.Get("anyOf"); ok {
		schema = alt.([]any)[0].(*jsonvalue.Object)
	}
	switch x := v.(type) {
	case *jsonvalue.Object:
		props, _ := schema.Get("properties")
		po, _ := props.(*jsonvalue.Object)
		for _, m := range x.Members() {
			ps, _ := po.Get(m.Name)
			s, _ := ps.(*jsonvalue.Object)
			out = append(out, slot{obj: x, key: m.Name, schema: s, parent: schema})
			if s != nil {
				out = g.slots(m.Value, s, out)
			}
		}
	case []any:
		items, _ := schema.Get("items")
		is, _ := items.(*jsonvalue.Object)
		for i, e := range x {
			out = append(out, slot{arr: x, index: i, schema: is})
			out = g.slots(e, is, out)
		}
	}
	return out
}

func (s slot) set(v any) {
	if s.obj != nil {
		s.obj.Set(s.key, v)
	} else {
		s.arr[s.index] = v
	}
}

func (s slot) get() any {
	if s.obj != nil {
		v, _ := s.obj.Get(s.key)
		return v
	}
	return s.arr[s.index]
}

// objects returns every object in v with its schema (the root included).
func (g *generator) objects(v any, schema *jsonvalue.Object, out []slot) []slot {
	if alt, ok := schema.Get("anyOf"); ok {
		schema = alt.([]any)[0].(*jsonvalue.Object)
	}
	switch x := v.(type) {
	case *jsonvalue.Object:
		out = append(out, slot{obj: x, schema: schema})
		props, _ := schema.Get("properties")
		po, _ := props.(*jsonvalue.Object)
		for _, m := range x.Members() {
			if ps, ok := po.Get(m.Name); ok {
				out = g.objects(m.Value, ps.(*jsonvalue.Object), out)
			}
		}
	case []any:
		items, _ := schema.Get("items")
		if is, ok := items.(*jsonvalue.Object); ok {
			for _, e := range x {
				out = g.objects(e, is, out)
			}
		}
	}
	return out
}

// mutate applies one to three mutations to v in place.
func (g *generator) mutate(v *jsonvalue.Object, schema *jsonvalue.Object) {
	for n := 1 + g.rng.IntN(3); n > 0; n-- {
		g.mutateOnce(v, schema)
	}
}

func (g *generator) mutateOnce(v *jsonvalue.Object, schema *jsonvalue.Object) {
	objs := g.objects(v, schema, nil)
	slots := g.slots(v, schema, nil)
	switch k := g.rng.IntN(10); {
	case k == 0 || len(slots) == 0: // extra key in some object
		o := objs[g.rng.IntN(len(objs))]
		o.obj.Set(fmt.Sprintf("extra_%d", g.rng.IntN(3)), g.anyValue(2))
	case k == 1: // missing key (required or not)
		o := objs[g.rng.IntN(len(objs))]
		if o.obj.Len() > 0 {
			o.obj.Delete(o.obj.Members()[g.rng.IntN(o.obj.Len())].Name)
		}
	case k == 2: // wrong type
		s := slots[g.rng.IntN(len(slots))]
		s.set(g.otherType(s.get()))
	default: // a targeted boundary mutation of a typed slot
		s := slots[g.rng.IntN(len(slots))]
		if s.schema == nil {
			s.set(nil)
			return
		}
		g.boundary(s)
	}
}

// otherType returns a value of a different JSON type than v.
func (g *generator) otherType(v any) any {
	for {
		c := g.anyValue(2)
		if jsonKind(c) != jsonKind(v) {
			return c
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// boundary mutates a slot right across one of its schema's bounds.
func (g *generator) boundary(s slot) {
	schema := s.schema
	if alt, ok := schema.Get("anyOf"); ok {
		schema = alt.([]any)[0].(*jsonvalue.Object)
	}
	typ, _ := schema.Get("type")
	if _, ok := schema.Get("enum"); ok {
		choices := []any{"Done", "", "urgent", strings.ToUpper(fmt.Sprint(s.get())), 1.0, nil}
		s.set(choices[g.rng.IntN(len(choices))])
		return
	}
	switch typ {
	case "string":
		min, hasMin := num(schema, "minLength")
		max, hasMax := num(schema, "maxLength")
		switch {
		case hasMax && g.rng.IntN(2) == 0:
			extra := g.rng.IntN(4) // 0 keeps it at the bound
			if g.rng.IntN(2) == 0 {
				// Astral characters: UTF-16 length and code points differ (class 2 territory).
				n := int(max) + extra
				s.set(strings.Repeat("😀", n/2) + strings.Repeat("a", n%2))
			} else {
				s.set(g.str(int(max)+extra, false))
			}
		case hasMin:
			if g.rng.IntN(2) == 0 {
				s.set(g.str(int(min)-1, false))
			} else {
				s.set(strings.Repeat("😀", int(min)/2))
			}
		default:
			s.set(g.str(g.rng.IntN(5), true))
		}
	case "integer", "number":
		min, hasMin := num(schema, "minimum")
		max, hasMax := num(schema, "maximum")
		choices := []float64{0.5, -0.5, 1e300, -1e300, 9007199254740992, -9007199254740992, 9007199254740991}
		if hasMin {
			choices = append(choices, min-1, min, min-0.5)
		}
		if hasMax {
			choices = append(choices, max+1, max, max+0.5)
		}
		s.set(choices[g.rng.IntN(len(choices))])
	case "boolean":
		s.set("true")
	case "array":
		items, _ := schema.Get("items")
		min, hasMin := num(schema, "minItems")
		max, hasMax := num(schema, "maxItems")
		n := 0
		switch {
		case hasMax && g.rng.IntN(2) == 0:
			n = int(max) + g.rng.IntN(2)
		case hasMin:
			n = int(min) - 1
		default:
			n = g.rng.IntN(3)
		}
		out := make([]any, max0(n))
		for i := range out {
			out[i] = g.gen(items.(*jsonvalue.Object), 2)
		}
		s.set(out)
	case "object":
		s.set(jsonvalue.NewObject(0))
	default:
		s.set(g.anyValue(1))
	}
}

func max0(n int) int { return int(math.Max(0, float64(n))) }
