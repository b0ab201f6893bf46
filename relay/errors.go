package relay

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentwire/agentwire/jsonvalue"
)

// Error codes of the relay's error body (relay.md §2). Each code has one HTTP status.
const (
	CodeInvalidRequest       = "invalid_request"        // 400
	CodeUnauthorized         = "unauthorized"           // 401
	CodeForbidden            = "forbidden"              // 403
	CodeNotFound             = "not_found"              // 404
	CodeConflict             = "conflict"               // 409
	CodePayloadTooLarge      = "payload_too_large"      // 413
	CodeUnsupportedMediaType = "unsupported_media_type" // 415
	CodeRateLimited          = "rate_limited"           // 429
	CodeInternal             = "internal"               // 500
	CodeUnavailable          = "unavailable"            // 503
)

// codeStatus maps an error code to its HTTP status (relay.md §2 "Codes").
var codeStatus = map[string]int{
	CodeInvalidRequest:       http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeForbidden:            http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeConflict:             http.StatusConflict,
	CodePayloadTooLarge:      http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeRateLimited:          http.StatusTooManyRequests,
	CodeInternal:             http.StatusInternalServerError,
	CodeUnavailable:          http.StatusServiceUnavailable,
}

// Error is the relay's one error body (relay.md §2):
// `{"error":{"code":"<snake_case>","message":"<text>","field"?,"index"?,"reason"?}}`.
// It is both what the server answers and what [ParseErrorBody] decodes on the client side.
type Error struct {
	// Status is the HTTP status the body travels with (not part of the body).
	Status int
	// Code is the body's `code` (one of the Code* constants).
	Code string
	// Message is the body's `message`: the contract's exact text where a contract rule
	// failed (for example `Agent event logical sequence must increase monotonically.`).
	Message string
	// Field is the optional `field`: the request member, query parameter or header at fault.
	Field string
	// Index is the optional `index`: the 0-based position of the failing event in a batch;
	// meaningful only when HasIndex is true.
	Index    int
	HasIndex bool
	// Reason is the optional `reason`: a machine-readable refinement of the code.
	Reason string
	// Problems is the optional `problems` list (project-defined): every problem of a contract
	// that reports them all, in order (POST /v1/notifications answers each envelope problem,
	// envelope.md §2). Message then holds the messages joined by "; " and Field the first
	// problem's field.
	Problems []ErrorProblem
}

// ErrorProblem is one entry of the error body's `problems`: `{"field"?: "…", "message": "…"}`.
type ErrorProblem struct {
	// Field is the JSON path of the offending member (`sender.session_id`); empty when the
	// problem concerns the whole document.
	Field string
	// Message is the contract's exact problem message.
	Message string
}

// Error returns "<code>: <message>" (the body's message alone is Message).
func (e *Error) Error() string {
	s := e.Code + ": " + e.Message
	if e.HasIndex {
		s += " (index " + strconv.Itoa(e.Index) + ")"
	}
	return s
}

// AppendJSON appends the error body, members in the spec's order.
func (e *Error) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = append(dst, jsonvalue.Quote(e.Code)...)
	dst = append(dst, `,"message":`...)
	dst = append(dst, jsonvalue.Quote(e.Message)...)
	if e.Field != "" {
		dst = append(dst, `,"field":`...)
		dst = append(dst, jsonvalue.Quote(e.Field)...)
	}
	if e.HasIndex {
		dst = append(dst, `,"index":`...)
		dst = strconv.AppendInt(dst, int64(e.Index), 10)
	}
	if e.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = append(dst, jsonvalue.Quote(e.Reason)...)
	}
	if len(e.Problems) > 0 {
		dst = append(dst, `,"problems":[`...)
		for i, p := range e.Problems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if p.Field != "" {
				dst = append(dst, `"field":`...)
				dst = jsonvalue.AppendQuote(dst, p.Field)
				dst = append(dst, ',')
			}
			dst = append(dst, `"message":`...)
			dst = jsonvalue.AppendQuote(dst, p.Message)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}\n"...)
}

// newError builds an error body whose status follows from code.
func newError(code, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Status: codeStatus[code], Code: code, Message: msg}
}

// withIndex sets the body's `index`.
func (e *Error) withIndex(i int) *Error {
	e.Index, e.HasIndex = i, true
	return e
}

// withStatus sets the HTTP status where a code travels with another one than its own (405,
// 426, 431 have no code of their own in relay.md §2: they carry invalid_request).
func (e *Error) withStatus(status int) *Error {
	e.Status = status
	return e
}

// withField sets the body's `field`.
func (e *Error) withField(f string) *Error {
	e.Field = f
	return e
}

// writeError answers e. For 401 it adds the bearer challenge of RFC 6750.
func writeError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="agentwire"`)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.AppendJSON(nil))
}

// ParseErrorBody decodes a relay error body (strict JSON, relay.md §2). status is the HTTP
// status it came with. A body that is not an error body yields an error describing why.
func ParseErrorBody(status int, body []byte) (*Error, error) {
	v, err := jsonvalue.Parse(body, "error body")
	if err != nil {
		return nil, err
	}
	root, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, errors.New("error body is not a JSON object")
	}
	inner, _ := root.Get("error")
	obj, ok := inner.(*jsonvalue.Object)
	if !ok {
		return nil, errors.New("error body has no \"error\" object")
	}
	e := &Error{Status: status}
	for _, m := range obj.Members() {
		switch m.Name {
		case "code", "message", "field", "reason":
			s, ok := m.Value.(string)
			if !ok {
				return nil, fmt.Errorf("error body member %q is not a string", m.Name)
			}
			switch m.Name {
			case "code":
				e.Code = s
			case "message":
				e.Message = s
			case "field":
				e.Field = s
			case "reason":
				e.Reason = s
			}
		case "index":
			f, ok := m.Value.(float64)
			if !ok || f < 0 || f != float64(int(f)) {
				return nil, errors.New("error body member \"index\" is not a non-negative integer")
			}
			e.Index, e.HasIndex = int(f), true
		case "problems":
			ps, err := parseProblems(m.Value)
			if err != nil {
				return nil, err
			}
			e.Problems = ps
		}
	}
	if e.Code == "" {
		return nil, errors.New("error body has no code")
	}
	return e, nil
}

// parseProblems decodes the error body's `problems` list.
func parseProblems(v any) ([]ErrorProblem, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("error body member \"problems\" is not an array")
	}
	out := make([]ErrorProblem, 0, len(list))
	for _, item := range list {
		obj, ok := item.(*jsonvalue.Object)
		if !ok {
			return nil, errors.New("error body problem is not an object")
		}
		var p ErrorProblem
		for _, m := range obj.Members() {
			s, isStr := m.Value.(string)
			switch m.Name {
			case "field":
				if !isStr {
					return nil, errors.New("error body problem field is not a string")
				}
				p.Field = s
			case "message":
				if !isStr {
					return nil, errors.New("error body problem message is not a string")
				}
				p.Message = s
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, nil // an empty list is not written (AppendJSON), so it decodes as absent
	}
	return out, nil
}
