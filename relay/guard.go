package relay

import (
	"encoding/base64"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/internal/localnet"
)

// What every request passes before a route sees it (relay.md §1 "Local mode trusts the machine,
// not the browser", §2 "one error body everywhere").
//
// A relay on loopback is reachable from every web page its user has open: a page can send
// "simple" cross-site requests (no preflight: a POST of text/plain, a GET, a WebSocket
// handshake) and, through DNS rebinding, make a foreign name resolve to 127.0.0.1 so that the
// browser treats the relay as that page's own origin. So the screen, in this order:
//
//  1. bounds the request head (Limits.MaxHeaderBytes → 431): values are never echoed back;
//  2. in local mode answers only a loopback `Host` (localhost, 127.0.0.0/8, [::1], any port),
//     403 forbidden otherwise — a rebinding page carries its own name in Host;
//  3. refuses a present `Origin` that is not loopback, not the relay's own origin (a viewer it
//     serves in auth mode) and not listed by Config.AllowOrigins (403 forbidden), for every
//     method: GETs have side effects too (a notification stream with `session` records what
//     it delivered), and a WebSocket handshake is a GET;
//  4. refuses a `Content-Encoding` other than identity (415);
//  5. answers a path that is not in clean form (`.`, `..`, `//`) with 404 instead of the
//     mux's redirect with an HTML body;
//  6. refuses a malformed query string and a query parameter given twice (400), except the
//     one parameter a route defines as a list (`subject` of the notification stream).
//
// After the mux has matched a route, its wrapper (handle, handleBus) authenticates (401 for a
// missing or unknown token, 403 for a token without the route's right, on every lane) and
// requires the route's JSON media type on every POST (mediaRule, 415), so no cross-site
// "simple" request reaches a handler. Refusals of bus routes are hive error bodies (relay.md
// §2: the bus lane's body is exactly hive.md's); every other answer is the relay body.

// DefaultMaxHeaderBytes is Limits.MaxHeaderBytes's default: the request line and headers of
// one request (relay.md §3 bounds every input). It leaves room for the longest query value
// a route takes, the 256 KiB cursor of GET /v1/bus/poll.
const DefaultMaxHeaderBytes = 512 << 10

// clipLen is the longest client-supplied value an error message quotes whole.
const clipLen = 64

// clip shortens a client-supplied value quoted in an error message: a message never echoes a
// header or parameter of unbounded length (a 100 KB Last-Event-ID) back.
func clip(s string) string {
	if len(s) <= clipLen {
		return s
	}
	cut := clipLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isBusPath reports whether a path belongs to the bus lane, whose refusals are hive bodies.
func isBusPath(p string) bool {
	return p == "/v1/bus" || strings.HasPrefix(p, "/v1/bus/") ||
		p == "/v1/messages" || strings.HasPrefix(p, "/v1/messages/")
}

// writeRefusal answers e in the body of the request's lane.
func writeRefusal(w http.ResponseWriter, r *http.Request, e *Error) {
	if isBusPath(r.URL.Path) {
		writeBusError(w, busFromRelay(e))
		return
	}
	writeError(w, e)
}

// busFromRelay turns a relay refusal into the hive body with the same HTTP status. The hive
// code list (hive.md §5.2) has no 413, 415 or 431: those travel as invalid_request ("never
// resend unchanged") with their own status, as the bus's 413 always has.
func busFromRelay(e *Error) *BusError {
	code := hive.HiveErrorCodeInvalidRequest
	switch e.Status {
	case http.StatusUnauthorized:
		code = hive.HiveErrorCodeUnauthorized
	case http.StatusForbidden:
		code = hive.HiveErrorCodeForbiddenRight
	case http.StatusNotFound:
		code = hive.HiveErrorCodeNotFound
	case http.StatusUpgradeRequired:
		code = hive.HiveErrorCodeUpgradeRequired
	case http.StatusInternalServerError, http.StatusServiceUnavailable:
		code = hive.HiveErrorCodeUnknown
	}
	be := newBusError(code, e.Field, e.Reason, e.Message)
	be.Status = e.Status
	return be
}

// screen runs the checks of steps 1–6 above; a refusal is answered and screen returns false.
// For an allowed cross-origin request (Config.AllowOrigins) it adds the CORS headers, and it
// answers that origin's preflight itself.
func (s *Server) screen(w http.ResponseWriter, r *http.Request) bool {
	if e := s.screenRequest(r); e != nil {
		s.metrics.request("screened", e.Status)
		writeRefusal(w, r, e)
		return false
	}
	origin, ok := r.Header["Origin"]
	if !ok || !s.listedOrigin(origin[0]) {
		return true
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin[0])
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		s.metrics.request("preflight", http.StatusNoContent)
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	return true
}

func (s *Server) screenRequest(r *http.Request) *Error {
	if headBytes(r) > s.limits.MaxHeaderBytes {
		return newError(CodeInvalidRequest, "The request line and headers exceed the limit of %d bytes.", s.limits.MaxHeaderBytes).withStatus(http.StatusRequestHeaderFieldsTooLarge)
	}
	if s.local && !localnet.HostIsLoopback(r.Host) {
		return newError(CodeForbidden, "Host %q is not a loopback name or address: without --auth the relay answers only localhost, 127.0.0.0/8 and [::1].", clip(r.Host)).withField("Host")
	}
	if origin, ok := r.Header["Origin"]; ok {
		if len(origin) != 1 {
			return newError(CodeForbidden, "Origin must be given once.").withField("Origin")
		}
		if !s.originAllowed(r, origin[0]) {
			if s.local {
				return newError(CodeForbidden, "Origin %q is not allowed: without --auth the relay answers only pages served from a loopback address.", clip(origin[0])).withField("Origin")
			}
			return newError(CodeForbidden, "Origin %q is not allowed: list it with --allow-origin.", clip(origin[0])).withField("Origin")
		}
	}
	for _, ce := range r.Header.Values("Content-Encoding") {
		for tok := range strings.SplitSeq(ce, ",") {
			if t := strings.TrimSpace(tok); !strings.EqualFold(t, "identity") {
				return newError(CodeUnsupportedMediaType, "Content-Encoding %q is not supported: send the body unencoded.", clip(t)).withField("Content-Encoding")
			}
		}
	}
	if p := r.URL.Path; p == "" || p[0] != '/' || cleanPath(p) != p {
		return newError(CodeNotFound, "No route for %s %s.", clip(r.Method), clip(p))
	}
	return checkQuery(r)
}

// headBytes is the size of the request head as it came on the wire, near enough: the request
// line and each header line (Host included, which net/http moves out of Header).
func headBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: ") + len(r.Host) + 2
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// cleanPath is path.Clean keeping a trailing slash, as net/http.ServeMux compares paths.
func cleanPath(p string) string {
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// listParams are the query parameters a route takes more than once.
var listParams = map[string]string{"/v1/notifications/stream": "subject"}

// checkQuery refuses a query string that does not parse and a parameter given twice (in the
// wording of the lane: hive messages end without a period).
func checkQuery(r *http.Request) *Error {
	if r.URL.RawQuery == "" {
		return nil
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return newError(CodeInvalidRequest, "The query string is malformed.")
	}
	list := listParams[r.URL.Path]
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		if len(vals[name]) > 1 && name != list {
			msg := clip(name) + " must be given once."
			if isBusPath(r.URL.Path) {
				msg = msg[:len(msg)-1]
			}
			return newError(CodeInvalidRequest, "%s", msg).withField(clip(name))
		}
	}
	return nil
}

// onlyParams refuses a query parameter the route does not define (in the lane's wording).
func onlyParams(r *http.Request, names []string, bus bool) *Error {
	if r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	for _, name := range slices.Sorted(maps.Keys(q)) { // the first fault reported is stable
		if !slices.Contains(names, name) {
			if bus {
				return newError(CodeInvalidRequest, "unknown query parameter %s", clip(name)).withField(clip(name))
			}
			return newError(CodeInvalidRequest, "Unknown query parameter %q.", clip(name)).withField(clip(name))
		}
	}
	return nil
}

// originAllowed applies the Origin rule: a loopback origin, the relay's own origin (the
// viewer it serves, relevant in auth mode where Host is any name; behind a trusted proxy also
// in the forwarded scheme), or a listed one.
func (s *Server) originAllowed(r *http.Request, origin string) bool {
	if localnet.OriginIsLoopback(origin) {
		return true
	}
	if !s.local && localnet.SameOrigin(origin, r.Host) {
		fwd := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")))
		if !s.cfg.TrustProxy || fwd == "" || strings.HasPrefix(strings.ToLower(origin), fwd+"://") {
			return true
		}
	}
	return s.listedOrigin(origin)
}

func (s *Server) listedOrigin(origin string) bool {
	if len(s.allowOrigins) == 0 {
		return false
	}
	norm, ok := localnet.NormalizeOrigin(origin)
	return ok && s.allowOrigins[norm]
}

// mediaRule is the media type a route's POST body must declare (relay.md §1: "every request
// body requires its JSON media type"). The check runs for every POST of the route, body or
// not, so a cross-site "simple" request (text/plain, form types, no type) never reaches the
// handler.
type mediaRule struct {
	ndjson bool   // application/x-ndjson is accepted too
	want   string // how the refusal names what is accepted
}

var (
	mediaEvents   = &mediaRule{ndjson: true, want: "application/json (one event) or application/x-ndjson (a batch)"}
	mediaEnvelope = &mediaRule{want: "application/json (one envelope)"}
	mediaJSONBody = &mediaRule{want: "application/json"}
)

// check returns whether the body is NDJSON; any other media type, a malformed Content-Type
// or a charset other than UTF-8 answers 415.
func (m *mediaRule) check(r *http.Request) (ndjson bool, e *Error) {
	cts := r.Header.Values("Content-Type")
	if len(cts) == 0 || cts[0] == "" {
		return false, newError(CodeUnsupportedMediaType, "Content-Type must be %s.", m.want).withField("Content-Type")
	}
	if len(cts) > 1 {
		return false, newError(CodeUnsupportedMediaType, "Content-Type must be given once.").withField("Content-Type")
	}
	mt, params, err := mime.ParseMediaType(cts[0])
	if err != nil {
		return false, newError(CodeUnsupportedMediaType, "Content-Type %q is malformed.", clip(cts[0])).withField("Content-Type")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false, newError(CodeUnsupportedMediaType, "Content-Type charset must be utf-8, got %q.", clip(cs)).withField("Content-Type")
	}
	switch {
	case mt == MediaJSON:
		return false, nil
	case mt == MediaNDJSON && m.ndjson:
		return true, nil
	}
	return false, newError(CodeUnsupportedMediaType, "Content-Type must be %s, got %q.", m.want, clip(mt)).withField("Content-Type")
}

// checkUpgrade refuses a GET /v1/bus that is not a WebSocket handshake the socket library
// will accept, in the hive body (the library would answer in plain text).
func checkUpgrade(w http.ResponseWriter, r *http.Request) *Error {
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") || !r.ProtoAtLeast(1, 1) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		return newError(CodeInvalidRequest, "GET /v1/bus is a WebSocket endpoint: send an HTTP/1.1 Upgrade: websocket handshake.").withStatus(http.StatusUpgradeRequired)
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return newError(CodeInvalidRequest, "Sec-WebSocket-Version must be 13.").withField("Sec-WebSocket-Version").withStatus(http.StatusUpgradeRequired)
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return newError(CodeInvalidRequest, "Sec-WebSocket-Key must be given once.").withField("Sec-WebSocket-Key")
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return newError(CodeInvalidRequest, "Sec-WebSocket-Key must be 16 bytes in base64.").withField("Sec-WebSocket-Key")
	}
	return nil
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), token) {
				return true
			}
		}
	}
	return false
}
