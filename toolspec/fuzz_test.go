package toolspec_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

// FuzzParse feeds arbitrary JSON text to the parse of the demo spec and of every Dispatch tool,
// in both modes. It checks that the parse never panics, is deterministic, reports problems in
// the order of dispatch-tools.md §2.3 (checked by an independent ranking of each problem's
// path), reports the cross-field problem only alone, renders a refusal whose header counts the
// problems, and that an accepted call's normalized value is accepted again unchanged.
// Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"name":"ab","count":2}`), uint8(0), true)
	f.Add([]byte(`{"issue":"DSP-1","status":"closed","priority":1,"rank":"a"}`), uint8(2), true)
	specs := append([]*ts.Spec{demoSpec(f)}, dispatch.Specs()...)
	f.Fuzz(func(t *testing.T, data []byte, tool uint8, strict bool) {
		v, err := jsonvalue.Parse(data, "arguments")
		if err != nil {
			return
		}
		spec := specs[int(tool)%len(specs)]
		mode := ts.Lenient
		if strict {
			mode = ts.Strict
		}
		out, problems := spec.Parse(v, mode)
		out2, problems2 := spec.Parse(v, mode)
		if !slices.Equal(problems, problems2) || (out == nil) != (out2 == nil) {
			t.Fatalf("non-deterministic parse:\n%v\n%v", problems, problems2)
		}
		if len(problems) == 0 {
			if out == nil {
				t.Fatal("accepted without a value")
			}
			again, p := spec.Parse(out, mode)
			if len(p) > 0 || again != out {
				t.Fatalf("normalized value not stable: %v", p)
			}
			for _, m := range out.Members() {
				if !declared(spec.Root(), m.Name) {
					t.Fatalf("normalized value keeps undeclared key %q", m.Name)
				}
			}
			return
		}
		if out != nil {
			t.Fatal("refused call returned a value")
		}
		if err := checkOrder(spec.Root(), v, problems); err != nil {
			text, _ := jsonvalue.Marshal(v)
			t.Fatalf("%s %s: %v\nargs %s\nproblems %q", spec.Name(), mode, err, text, problems.Lines())
		}
		refusal := spec.Refusal(problems)
		header := fmt.Sprintf("%s was not called: %d problem", spec.Name(), len(problems))
		if !strings.HasPrefix(refusal, header) || strings.Count(refusal, "\n") < len(problems)+2 {
			t.Fatalf("refusal text %q", refusal)
		}
	})
}

func declared(n *ts.Node, key string) bool {
	for _, f := range n.Fields() {
		if f.Key == key {
			return true
		}
	}
	return false
}

const (
	rankCount = 1 << 30 // P6/P7: after every element of the array
	rankCheck = 1 << 31 // P12: after everything of the object
)

// checkOrder verifies §2.3's problem order independently of the parser: every problem gets a
// rank sequence from its path (declared keys by declaration index, unknown keys after them by
// input position, array elements by index, count problems after the elements, the cross-field
// problem last), and the sequences must be strictly increasing.
func checkOrder(root *ts.Node, v any, problems ts.Problems) error {
	if problems[0].Type == ts.ProblemNotObject {
		if len(problems) != 1 {
			return fmt.Errorf("a non-object root gives exactly one problem")
		}
		return nil
	}
	var prev []int
	for i, p := range problems {
		if p.Type == ts.ProblemCrossField && p.Path == "" && len(problems) != 1 {
			return fmt.Errorf("the root cross-field problem must be alone")
		}
		r, ok := rank(root, v, p)
		if !ok {
			continue // a path made ambiguous by keys containing '.': not checkable
		}
		if i > 0 && prev != nil && slices.Compare(prev, r) >= 0 {
			return fmt.Errorf("problem %d %q (rank %v) not after rank %v", i, p.Message, r, prev)
		}
		prev = r
	}
	return nil
}

func rank(n *ts.Node, v any, p ts.Problem) ([]int, bool) {
	path := p.Path
	var key string
	if p.Type == ts.ProblemUnknownField {
		// The unknown key comes from the message (its JSON-quoted form), since a raw key may
		// be empty or contain '.'; the path walked is the object's.
		k, ok := unknownKey(p.Message)
		if !ok {
			return nil, false
		}
		key = k
		switch {
		case path == key:
			path = ""
		case strings.HasSuffix(path, "."+key):
			path = strings.TrimSuffix(path, "."+key)
		default:
			return nil, false
		}
	}
	r, n, v, ok := walkPath(n, v, path)
	if !ok {
		return nil, false
	}
	switch p.Type {
	case ts.ProblemUnknownField:
		o, isObj := v.(*jsonvalue.Object)
		if !isObj || n == nil || declared(n, key) {
			return nil, false
		}
		r = append(r, len(n.Fields())+slices.Index(o.Keys(), key))
	case ts.ProblemTooManyItems, ts.ProblemTooFewItems:
		r = append(r, rankCount)
	case ts.ProblemCrossField:
		r = append(r, rankCheck)
	}
	return r, true
}

func unknownKey(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "unknown field ")
	if !ok || rest == "" || rest[0] != '"' {
		return "", false
	}
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			i++
		case '"':
			k, err := strconv.Unquote(rest[:i+1])
			return k, err == nil
		}
	}
	return "", false
}

// walkPath follows a problem path from the root and returns the rank sequence of its segments
// with the node and value reached.
func walkPath(n *ts.Node, v any, rest string) ([]int, *ts.Node, any, bool) {
	var r []int
	for rest != "" {
		if n == nil {
			return nil, nil, nil, false
		}
		switch x := v.(type) {
		case *jsonvalue.Object:
			var match []string
			for _, m := range x.Members() {
				if rest == m.Name || strings.HasPrefix(rest, m.Name+".") {
					match = append(match, m.Name)
				}
			}
			if len(match) != 1 {
				return nil, nil, nil, false
			}
			key := match[0]
			fields := n.Fields()
			idx := slices.IndexFunc(fields, func(f ts.Field) bool { return f.Key == key })
			if idx < 0 {
				return nil, nil, nil, false
			}
			r = append(r, idx)
			n = fields[idx].Node
			v, _ = x.Get(key)
			rest = strings.TrimPrefix(rest[len(key):], ".")
		case []any:
			seg, tail, _ := strings.Cut(rest, ".")
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, nil, nil, false
			}
			r = append(r, i)
			v, n, rest = x[i], n.Item(), tail
		default:
			return nil, nil, nil, false
		}
	}
	return r, n, v, true
}

// TestCheckOrderDetects makes sure the fuzz target's order check rejects a misordered list.
func TestCheckOrderDetects(t *testing.T) {
	s := demoSpec(t)
	v, _ := jsonvalue.Parse([]byte(`{"zz":1,"count":7,"name":"a","tags":["",3,"x"]}`), "")
	_, problems := s.Parse(v, ts.Strict)
	if err := checkOrder(s.Root(), v, problems); err != nil {
		t.Fatalf("correct order refused: %v", err)
	}
	for i := 0; i+1 < len(problems); i++ {
		swapped := slices.Clone(problems)
		swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
		if checkOrder(s.Root(), v, swapped) == nil {
			t.Errorf("swap of %d and %d not detected: %q", i, i+1, swapped.Lines())
		}
	}
}
