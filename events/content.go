package events

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/agentwire/agentwire/jsonvalue"
)

// This file holds the shared machinery of payload validation (events.md §5–§7) and the content
// part rules (§6).
//
// One checker serves two kinds of input:
//
//   - validated values of the §3.1 value model (ParseEvent, CloneEvent, CloneEventInput,
//     CloneContentParts): only type assertions are needed, and the rules that "clone" a member
//     (record `input`, `output`, custom-part `data`, action `input`, interrupt `payload`,
//     `decisions`) have nothing left to check;
//   - raw Go values (ValidateEventInput, §5.2): members are classified as in §3.5 (a JSONValuer
//     resolved first, json.Number a number, kinds string/bool/ints/float64 scalars, []any an
//     array, map[string]any and Object objects) and only the cloned members are JSON-checked,
//     each at its position in the fixed order.
//
// Paths are carried as a small value and rendered only when an error is reported, so a valid
// event costs no path allocations.

// Content part types of events.md §6.
const (
	partText       = "text"
	partReasoning  = "reasoning"
	partImage      = "image"
	partAudio      = "audio"
	partVideo      = "video"
	partFile       = "file"
	partCitation   = "citation"
	partToolCall   = "tool-call"
	partToolResult = "tool-result"
	partCustom     = "custom"
)

// defaultContentLabel is CloneContentParts' label for an empty label argument (events.md §2).
const defaultContentLabel = "Content"

// CloneContentParts validates a content-part array (events.md §6): v is first cloned as by
// [CloneJSONValue] with label (default `Content`); a value that is not an array gives
// `<label> must be an array.`; each element must then be a content part at `<label>[<i>]`
// (`… must be a content part.`, `….type is unsupported.`, the type-specific messages and the
// media-source rule). The returned array is the validated clone, unknown members included.
func CloneContentParts(v any, label string) ([]any, error) {
	if label == "" {
		label = defaultContentLabel
	}
	c, err := jsonvalue.CloneValue(v, label)
	if err != nil {
		return nil, err
	}
	arr, ok := c.([]any)
	if !ok {
		return nil, &ValidationError{Message: label + " must be an array."}
	}
	ck := checker{}
	base := pathAt(label)
	for i, e := range arr {
		if _, err := ck.part(e, base.elem(i)); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

// checkContentPart validates one value-model content part at path (used by the reducer state
// decoder for nested parts).
func checkContentPart(v any, path string) (ContentPart, error) {
	ck := checker{}
	return ck.part(v, pathAt(path))
}

// path is an error path rendered lazily: base, then `[idx]` when idx >= 0, then sub.
type path struct {
	base string
	idx  int
	sub  string
}

func pathAt(s string) path { return path{base: s, idx: -1} }

// String renders the path.
func (p path) String() string {
	if p.idx < 0 {
		return p.base + p.sub
	}
	return p.base + "[" + strconv.Itoa(p.idx) + "]" + p.sub
}

// elem is the path of element i of the array at p.
func (p path) elem(i int) path {
	if p.idx < 0 && p.sub == "" {
		return path{base: p.base, idx: i}
	}
	return path{base: p.String(), idx: i}
}

// with appends a constant member suffix such as `.toolCall`.
func (p path) with(sub string) path {
	if p.sub == "" {
		return path{base: p.base, idx: p.idx, sub: sub}
	}
	return path{base: p.String(), idx: -1, sub: sub}
}

// vErr is a *ValidationError whose message is the path followed by suffix.
func vErr(p path, suffix string) error { return &ValidationError{Message: p.String() + suffix} }

// jErr is a *JSONValidationError at p+member whose message ends with suffix.
func jErr(p path, member, suffix string) error {
	s := p.String() + member
	return &JSONValidationError{Path: s, Message: s + suffix}
}

// slot is one member looked up in an object: absent (ok false) or present with a value (which
// may be nil for a present null).
type slot struct {
	v  any
	ok bool
}

// objView is a JSON object seen through its Go representation: an *Object, or (raw mode only) a
// map[string]any.
type objView struct {
	o *Object
	m map[string]any
}

func (w objView) get(name string) slot {
	if w.m != nil {
		v, ok := w.m[name]
		return slot{v, ok}
	}
	v, ok := w.o.Get(name)
	return slot{v, ok}
}

// notJSON stands for a JSONValuer whose JSONValue method failed: it is of no JSON type.
type notJSON struct{}

// resolve returns the value a JSONValuer stands for (once, as IsJSONObject does).
func resolve(v any) any {
	if jv, ok := v.(JSONValuer); ok {
		r, err := jv.JSONValue()
		if err != nil {
			return notJSON{}
		}
		return r
	}
	return v
}

// checker validates payload members; raw selects the Go-value classification of ValidateEventInput.
type checker struct {
	raw bool
}

func (c *checker) object(v any) (objView, bool) {
	if o, ok := v.(*Object); ok {
		return objView{o: o}, o != nil
	}
	if !c.raw {
		return objView{}, false
	}
	return rawObject(v)
}

// rawObject classifies a Go value as a JSON object (events.md §3.6 IsJSONObject).
func rawObject(v any) (objView, bool) {
	switch x := resolve(v).(type) {
	case map[string]any:
		return objView{m: x}, x != nil
	case *Object:
		return objView{o: x}, x != nil
	case Object:
		return objView{o: &x}, true
	}
	return objView{}, false
}

func (c *checker) str(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if !c.raw {
		return "", false
	}
	return rawString(v)
}

// rawString classifies a Go value as a JSON string: kind string, except json.Number.
func rawString(v any) (string, bool) {
	v = resolve(v)
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number, nil:
		return "", false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

func (c *checker) boolean(v any) bool {
	if _, ok := v.(bool); ok {
		return true
	}
	if !c.raw {
		return false
	}
	v = resolve(v)
	return v != nil && reflect.ValueOf(v).Kind() == reflect.Bool
}

func (c *checker) array(v any) ([]any, bool) {
	if a, ok := v.([]any); ok {
		return a, a != nil
	}
	if !c.raw {
		return nil, false
	}
	a, ok := resolve(v).([]any)
	return a, ok && a != nil
}

// finite reports a JSON number that is finite, with its value.
func (c *checker) finite(v any) (float64, bool) {
	if f, ok := v.(float64); ok {
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	if !c.raw {
		return 0, false
	}
	return rawFinite(v)
}

// rawFinite classifies a Go value as a finite JSON number (float64, integer kinds, json.Number).
// A json.Number that overflows is a non-finite number; one that is not JSON number text is not a
// number. Both fail the same rule, so the distinction is not kept.
func rawFinite(v any) (float64, bool) {
	v = resolve(v)
	switch x := v.(type) {
	case nil:
		return 0, false
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		c, err := jsonvalue.CloneValue(x, "")
		if err != nil {
			return 0, false
		}
		f, ok := c.(float64)
		return f, ok
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float64:
		f := rv.Float()
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

// jsonValue applies a rule that clones a member of any JSON type (output, custom-part data,
// action input, interrupt payload, decisions) at p+member. Validated values need no check.
func (c *checker) jsonValue(v any, p path, member string) error {
	if !c.raw {
		return nil
	}
	return jsonvalue.AssertValue(v, p.String()+member)
}

// jsonObject applies the CloneJSONObject rule of record `input` at p+member.
func (c *checker) jsonObject(s slot, p path, member string) (*Object, error) {
	if !c.raw {
		if o, ok := s.v.(*Object); ok && o != nil {
			return o, nil
		}
		return nil, jErr(p, member, jsonvalue.SuffixNotObject)
	}
	if !s.ok || !jsonvalue.IsObject(s.v) {
		return nil, jErr(p, member, jsonvalue.SuffixNotObject)
	}
	return nil, jsonvalue.AssertValue(s.v, p.String()+member)
}

// optString checks an optional string member: absent is valid, anything present must be a
// string (a present null included, events.md §5.1).
func (c *checker) optString(o objView, name string, p path, suffix string) error {
	s := o.get(name)
	if !s.ok {
		return nil
	}
	if _, ok := c.str(s.v); !ok {
		return vErr(p, suffix)
	}
	return nil
}

// part validates one content part at p (events.md §6).
func (c *checker) part(v any, p path) (ContentPart, error) {
	o, ok := c.object(v)
	if !ok {
		return ContentPart{}, vErr(p, " must be a content part.")
	}
	t, ok := c.str(o.get("type").v)
	if !ok {
		return ContentPart{}, vErr(p, " must be a content part.")
	}
	switch t {
	case partText, partReasoning:
		if _, ok := c.str(o.get("text").v); !ok {
			return ContentPart{}, vErr(p, ".text must be a string.")
		}
	case partImage, partAudio, partVideo, partFile:
		if err := c.media(o, p); err != nil {
			return ContentPart{}, err
		}
		if t == partFile {
			if err := c.optString(o, "name", p, ".name must be a string."); err != nil {
				return ContentPart{}, err
			}
		}
	case partCitation:
		if _, ok := c.str(o.get("url").v); !ok {
			return ContentPart{}, vErr(p, ".url must be a string.")
		}
		if err := c.optString(o, "title", p, ".title must be a string."); err != nil {
			return ContentPart{}, err
		}
	case partToolCall:
		if _, err := c.toolCall(o.get("toolCall").v, p.with(".toolCall")); err != nil {
			return ContentPart{}, err
		}
	case partToolResult:
		if _, err := c.toolResult(o.get("result").v, p.with(".result")); err != nil {
			return ContentPart{}, err
		}
	case partCustom:
		if _, ok := c.str(o.get("name").v); !ok {
			return ContentPart{}, vErr(p, ".name must be a string.")
		}
		d := o.get("data")
		if !d.ok {
			return ContentPart{}, jErr(p, ".data", jsonvalue.SuffixNotSerializable)
		}
		if err := c.jsonValue(d.v, p, ".data"); err != nil {
			return ContentPart{}, err
		}
	default:
		return ContentPart{}, vErr(p, ".type is unsupported.")
	}
	return ContentPart{Type: t, Raw: o.o}, nil
}

// media applies the media-source rule and the member checks of image, audio, video and file
// parts (events.md §6): exactly one of url, data, fileId present (a present null counts), then
// the present source is type-checked, then mimeType.
func (c *checker) media(o objView, p path) error {
	url, data, fileID := o.get("url"), o.get("data"), o.get("fileId")
	n := 0
	for _, s := range [3]slot{url, data, fileID} {
		if s.ok {
			n++
		}
	}
	if n != 1 {
		return vErr(p, " must contain exactly one media source.")
	}
	switch {
	case url.ok:
		if _, ok := c.str(url.v); !ok {
			return vErr(p, ".url must be a string.")
		}
	case data.ok:
		if _, ok := c.str(data.v); !ok {
			return vErr(p, ".data must be a string.")
		}
	default:
		if _, ok := c.str(fileID.v); !ok {
			return vErr(p, ".fileId must be a string.")
		}
	}
	return c.optString(o, "mimeType", p, ".mimeType must be a string.")
}
