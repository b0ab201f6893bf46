package toolspec

import (
	"strconv"
	"strings"
)

// ProblemType classifies a [Problem] by the problem-line format of dispatch-tools.md §3.2 that
// renders it.
type ProblemType uint8

// The problem-line formats of §3.2 (P1–P12) and the root rule of §2.3.
const (
	// ProblemNotObject: `arguments must be an object, not <I>` (§2.3, root only).
	ProblemNotObject ProblemType = iota + 1
	// ProblemRequired (P1): `<path> is required (<token>)`.
	ProblemRequired
	// ProblemWrongType (P2): `<path> must be <E>, not <I>`.
	ProblemWrongType
	// ProblemNotInteger (P3): `<path> must be an integer, not <value>`.
	ProblemNotInteger
	// ProblemUnknownField (P4): `unknown field "<key>"[ in <path>]; allowed: <keys>`.
	ProblemUnknownField
	// ProblemEnum (P5): `<path> must be one of <v1>|<v2>|…; got <json>`.
	ProblemEnum
	// ProblemTooManyItems (P6): `<path> has <n> items; the limit is <max>`.
	ProblemTooManyItems
	// ProblemTooFewItems (P7): `<path> must have at least <min> items`.
	ProblemTooFewItems
	// ProblemTooLong (P8): `<path> is <L-M> characters over the <M>-character limit (<L>/<M>)`.
	ProblemTooLong
	// ProblemTooShort (P9): `<path> must be at least <min> characters`.
	ProblemTooShort
	// ProblemTooLarge (P10): `<path> must be at most <max>`.
	ProblemTooLarge
	// ProblemTooSmall (P11): `<path> must be at least <min>`.
	ProblemTooSmall
	// ProblemCrossField (P12): the validation's message verbatim, with no path.
	ProblemCrossField
	// ProblemExecutor: a problem an executor finds outside the parse (dispatch-tools.md §8.3
	// owner resolution, §8.4 argument checks), its message verbatim.
	ProblemExecutor
)

var problemTypeNames = [...]string{"", "NotObject", "Required", "WrongType", "NotInteger",
	"UnknownField", "Enum", "TooManyItems", "TooFewItems", "TooLong", "TooShort", "TooLarge",
	"TooSmall", "CrossField", "Executor"}

// String returns the type's name (e.g. "Required").
func (t ProblemType) String() string {
	if int(t) < len(problemTypeNames) && t != 0 {
		return problemTypeNames[t]
	}
	return "ProblemType(" + strconv.Itoa(int(t)) + ")"
}

// Problem is one problem of a parse (dispatch-tools.md §3): the value's path (§3.1: object keys
// and decimal array indexes joined by "."; "" for the argument root) and the exact problem line.
// For [ProblemUnknownField] Path is the path of the unknown member itself (the object's path
// followed by the key); for [ProblemCrossField] it is the path of the refined object.
type Problem struct {
	Type    ProblemType
	Path    string
	Message string
}

// Error returns the problem line.
func (p Problem) Error() string { return p.Message }

// Problems is the ordered problem list of one parse (§2.3 "Problem order").
type Problems []Problem

// Lines returns the problem lines in order.
func (ps Problems) Lines() []string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Message
	}
	return lines
}

// Error joins the problem lines with "\n".
func (ps Problems) Error() string { return strings.Join(ps.Lines(), "\n") }

// OverCapMessage is overCapMessage(L, M) of §3.2: the P8 text without its path,
// `is <L-M> characters over the <M>-character limit (<L>/<M>)`. The executor uses it for the
// composed ask question (§8.4).
func OverCapMessage(length, max int) string {
	return string(appendOverCap(nil, length, max))
}

func appendOverCap(dst []byte, length, max int) []byte {
	dst = append(dst, "is "...)
	dst = strconv.AppendInt(dst, int64(length-max), 10)
	dst = append(dst, " characters over the "...)
	dst = strconv.AppendInt(dst, int64(max), 10)
	dst = append(dst, "-character limit ("...)
	dst = strconv.AppendInt(dst, int64(length), 10)
	dst = append(dst, '/')
	dst = strconv.AppendInt(dst, int64(max), 10)
	return append(dst, ')')
}

// UTF16Len returns the length of s in UTF-16 code units, the measure of every string bound of
// §0: one unit per character of the Basic Multilingual Plane, two for any other. s must be
// valid UTF-8 (every string of the jsonvalue model is).
func UTF16Len(s string) int {
	n := 0
	i := 0
	// ASCII runs, eight bytes at a time: each byte is one unit.
	for ; i+8 <= len(s); i += 8 {
		if s[i]|s[i+1]|s[i+2]|s[i+3]|s[i+4]|s[i+5]|s[i+6]|s[i+7] >= 0x80 {
			break
		}
		n += 8
	}
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
			n++
		case c >= 0xF0:
			n += 2 // a 4-byte sequence encodes a supplementary character: a surrogate pair
		case c >= 0xC0:
			n++
		}
	}
	return n
}
