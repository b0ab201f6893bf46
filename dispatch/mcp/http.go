package mcp

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwire/agentwire/internal/localnet"
	"github.com/agentwire/agentwire/jsonvalue"
)

// HTTPOptions configures [Server.HTTPHandler].
type HTTPOptions struct {
	// AllowRemote drops the Host rule, for a server deliberately bound to a non-loopback
	// address and reached by another name. The Origin and media-type rules still apply. The
	// server has no authentication of its own: whoever reaches it acts with DISPATCH_TOKEN.
	AllowRemote bool
	// Logger receives the SDK's HTTP log records; nil discards them.
	Logger *slog.Logger
}

// HTTPHandler serves the server over the SDK's streamable HTTP transport, one MCP session per
// client (Mcp-Session-Id), behind the relay's local-mode rules (relay.md §1): the `Host` must
// be a loopback name (unless AllowRemote), a present `Origin` must be a loopback origin, and a
// POST body must be `application/json`. A refused request gets 403 or 415 with the relay's
// error body and never reaches the SDK.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp },
		&sdk.StreamableHTTPOptions{Logger: opts.Logger, MaxRequestBodyBytes: MaxMessageBytes})
	return &localHandler{next: inner, allowRemote: opts.AllowRemote}
}

// localHandler applies the local-mode rules before the SDK's handler.
type localHandler struct {
	next        http.Handler
	allowRemote bool
}

func (h *localHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, code, field, msg := h.screen(r); status != 0 {
		writeError(w, status, code, field, msg)
		return
	}
	h.next.ServeHTTP(w, r)
}

// screen returns the refusal of a request the local-mode rules keep from the SDK (status 0:
// none), in the relay's wording.
func (h *localHandler) screen(r *http.Request) (status int, code, field, msg string) {
	if !h.allowRemote && !localnet.HostIsLoopback(r.Host) {
		return http.StatusForbidden, "forbidden", "Host", fmt.Sprintf("Host %q is not a loopback name or address: agentwire dispatch mcp answers only localhost, 127.0.0.0/8 and [::1].", clip(r.Host))
	}
	if origin, ok := r.Header["Origin"]; ok {
		if len(origin) != 1 {
			return http.StatusForbidden, "forbidden", "Origin", "Origin must be given once."
		}
		if !localnet.OriginIsLoopback(origin[0]) {
			return http.StatusForbidden, "forbidden", "Origin", fmt.Sprintf("Origin %q is not allowed: agentwire dispatch mcp answers only pages served from a loopback address.", clip(origin[0]))
		}
	}
	if r.Method != http.MethodPost {
		return 0, "", "", ""
	}
	const unsupported = http.StatusUnsupportedMediaType
	cts := r.Header.Values("Content-Type")
	switch {
	case len(cts) == 0:
		return unsupported, "unsupported_media_type", "Content-Type", "Content-Type must be application/json."
	case len(cts) > 1:
		return unsupported, "unsupported_media_type", "Content-Type", "Content-Type must be given once."
	}
	mt, params, err := mime.ParseMediaType(cts[0])
	switch {
	case err != nil:
		return unsupported, "unsupported_media_type", "Content-Type", fmt.Sprintf("Content-Type %q is malformed.", clip(cts[0]))
	case mt != "application/json":
		return unsupported, "unsupported_media_type", "Content-Type", fmt.Sprintf("Content-Type must be application/json, got %q.", clip(mt))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return unsupported, "unsupported_media_type", "Content-Type", fmt.Sprintf("Content-Type charset must be utf-8, got %q.", clip(cs))
	}
	return 0, "", "", ""
}

// clipLen bounds a client value quoted in a refusal, as the relay does.
const clipLen = 64

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

// writeError writes the relay's error body `{"error":{"code":…,"message":…,"field":…}}`.
func writeError(w http.ResponseWriter, status int, code, field, message string) {
	body, _ := jsonvalue.Marshal(jsonvalue.ObjectOf("error", jsonvalue.ObjectOf("code", code, "message", message, "field", field)))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
