package client

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
)

// This file holds the error mapping of dispatch-tools.md §8.8 (and the transport failure of
// §8.1). Clients branch on Code, never on the HTTP status alone.

// DispatchServiceError is a non-2xx answer whose body is a JSON error object
// `{error?, code?, candidates?, current?, mismatches?}` (§8.8, §9.11). Its text is
// `<CODE>: <message>` followed by the clauses of §8.8.
type DispatchServiceError struct {
	// Code is the body's `code`, or `HTTP_<status>` when absent.
	Code string
	// Status is the HTTP status.
	Status int
	// Method and URL name the request.
	Method, URL string
	// Body is the decoded error body (candidates kept raw).
	Body dispatch.ErrorBody
	// linksPatch marks a PATCH carrying external_links (the clause of a 500 answer).
	linksPatch bool
}

// Error renders `<CODE>: <error>` (the body's `error` text, or `Dispatch answered HTTP
// <status>` when absent) and the clauses of §8.8: the current tokens of PRECONDITION_FAILED,
// the contexts of TargetCandidate candidates, and the external-link hint of a status-500
// answer (whatever its code) to a PATCH carrying external_links.
func (e *DispatchServiceError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	if e.Body.Error != "" {
		b.WriteString(e.Body.Error)
	} else {
		b.WriteString("Dispatch answered HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
	}
	if e.Code == dispatch.CodePreconditionFailed {
		if e.Body.Current != nil {
			b.WriteString("; current document token ")
			b.WriteString(e.Body.Current.Document)
		}
		for _, m := range e.Body.Mismatches {
			if m.Scope != dispatch.ScopeBlock {
				continue
			}
			b.WriteString("; block ")
			b.WriteString(m.BlockID)
			if m.Current == nil {
				b.WriteString(" is gone")
			} else {
				b.WriteString(" token is now ")
				b.WriteString(*m.Current)
			}
		}
	}
	if contexts := targetContexts(e.Body.Candidates); len(contexts) > 0 {
		b.WriteString("; candidates: ")
		for i, c := range contexts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonvalue.Quote(c))
		}
	}
	// Servers older than EXTERNAL_LINK_TAKEN answer a taken link with a 500 of any code (or
	// none); the status, not the code, marks the case.
	if e.linksPatch && e.Status == 500 {
		b.WriteString("; one of these URLs may already be linked to another issue")
	}
	return b.String()
}

// DuplicateCandidates returns the candidates of a POSSIBLE_DUPLICATE answer (nil when the
// candidates are not DuplicateCandidate rows).
func (e *DispatchServiceError) DuplicateCandidates() []dispatch.DuplicateCandidate {
	if len(e.Body.Candidates) == 0 {
		return nil
	}
	var out []dispatch.DuplicateCandidate
	if firstByte(e.Body.Candidates) != '[' || dispatch.Decode(e.Body.Candidates, &out) != nil {
		return nil
	}
	return out
}

// targetContexts returns the contexts of TargetCandidate candidates (`{from, to, context}`), or
// nil when the candidates are of another kind.
func targetContexts(raw []byte) []string {
	if len(raw) == 0 || firstByte(raw) != '[' {
		return nil
	}
	v, err := jsonvalue.Parse(raw, "candidates")
	if err != nil {
		return nil
	}
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		o, ok := item.(*jsonvalue.Object)
		if !ok {
			return nil
		}
		ctx, ok := o.Get("context")
		s, isStr := ctx.(string)
		if !ok || !isStr {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// DispatchGatewayError is a non-2xx answer whose body is not a JSON error object, or a 2xx
// answer whose body is not the expected JSON (§8.8). Its text is `Dispatch gateway error:
// <METHOD> <URL> answered HTTP <status>: <excerpt>. <advice>`.
type DispatchGatewayError struct {
	// Code is `HTTP_<status>`.
	Code string
	// Status is the HTTP status.
	Status int
	// Method and URL name the request.
	Method, URL string
	// Excerpt is the body with the bearer token replaced by `[redacted]`, white space collapsed
	// and cut to 200 characters (UTF-16 code units).
	Excerpt string
}

// Error renders the gateway message with its advice: 5xx — transient, but the request may have
// reached Dispatch; 408 and 429 — retry after a short wait; anything else — retrying will not
// help.
func (e *DispatchGatewayError) Error() string {
	return "Dispatch gateway error: " + e.Method + " " + e.URL + " answered HTTP " + strconv.Itoa(e.Status) +
		": " + e.Excerpt + ". " + GatewayAdvice(e.Status)
}

// GatewayAdvice is the advice of a gateway error for an HTTP status (§8.8).
func GatewayAdvice(status int) string {
	switch {
	case status >= 500 && status <= 599:
		return "This is usually transient, but the request may have reached Dispatch: check the current state before retrying a write."
	case status == 408 || status == 429:
		return "This is transient; retry after a short wait."
	}
	return "Retrying will not help."
}

// excerptMax is the longest body excerpt of a gateway error, in UTF-16 code units.
const excerptMax = 200

// Excerpt renders a body for a gateway error: the token replaced by `[redacted]`, invalid UTF-8
// replaced, white space runs collapsed to one space, trimmed, and cut to 200 characters (UTF-16
// code units, never splitting a surrogate pair) with `…` when cut; `(empty body)` when nothing
// is left.
func Excerpt(body []byte, token string) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	if token != "" {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(empty body)"
	}
	cut, ok := cutUTF16(s, excerptMax)
	if !ok {
		return cut + "…"
	}
	return cut
}

// cutUTF16 returns the longest prefix of s at most max UTF-16 code units long, and whether it is
// all of s.
func cutUTF16(s string, max int) (string, bool) {
	n := 0
	for i, r := range s {
		w := 1
		if utf16.RuneLen(r) == 2 {
			w = 2
		}
		if n+w > max {
			return s[:i], false
		}
		n += w
	}
	return s, true
}

func newGatewayError(method, target string, status int, body []byte, token string) *DispatchGatewayError {
	return &DispatchGatewayError{
		Code: dispatch.CodeHTTPPrefix + strconv.Itoa(status), Status: status,
		Method: method, URL: target, Excerpt: Excerpt(body, token),
	}
}

// DecodeErrorAnswer maps a non-2xx answer to its error (§8.8): a JSON object body of the error
// shape becomes a *DispatchServiceError, anything else a *DispatchGatewayError. It never panics
// on any body.
func DecodeErrorAnswer(method, target string, status int, body []byte, token string) error {
	return decodeErrorAnswer(method, target, status, body, token, false)
}

func (c *Client) answerError(r *request, target string, status int, body []byte) error {
	return decodeErrorAnswer(r.method, target, status, body, c.token, r.linksPatch)
}

func decodeErrorAnswer(method, target string, status int, body []byte, token string, linksPatch bool) error {
	if len(body) <= maxAnswer && firstByte(body) == '{' {
		var eb dispatch.ErrorBody
		if dispatch.Decode(body, &eb) == nil {
			code := eb.Code
			if code == "" {
				code = dispatch.CodeHTTPPrefix + strconv.Itoa(status)
			}
			return &DispatchServiceError{Code: code, Status: status, Method: method, URL: target, Body: eb, linksPatch: linksPatch}
		}
	}
	return newGatewayError(method, target, status, body, token)
}

// UnreachableError is a transport failure (connection refused, DNS, TLS, deadline; §8.1).
type UnreachableError struct {
	// URL is the configured DISPATCH_URL.
	URL string
	// Err is the transport error.
	Err error
}

// Error renders `Dispatch at <DISPATCH_URL> is unreachable: <error text>. If the Dispatch URL
// changed, restart this agent process so it picks up the new configuration.`
func (e *UnreachableError) Error() string {
	return "Dispatch at " + e.URL + " is unreachable: " + transportText(e.Err) +
		". If the Dispatch URL changed, restart this agent process so it picks up the new configuration."
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// transportText is the text of a transport error without net/http's `<Method> "<url>": ` prefix
// (the message already names DISPATCH_URL).
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// CallError is a call that failed during execution for a reason of its own rather than an
// answer of the server: an id or document resolution failure (§8.5), a missing host session id,
// an open ask block an edit would remove (§8.6), an upload over the size limit. Its text is the
// message.
type CallError struct {
	// Message is the failure text (§8.5 wordings where the spec gives them).
	Message string
}

// Error returns the message.
func (e *CallError) Error() string { return e.Message }

// ErrorCode returns the Dispatch code of a service or gateway error ("" for other errors), the
// value clients branch on (§8.8).
func ErrorCode(err error) string {
	switch e := err.(type) {
	case *DispatchServiceError:
		return e.Code
	case *DispatchGatewayError:
		return e.Code
	}
	return ""
}
