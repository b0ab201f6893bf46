package mcp

import (
	"log/slog"
	"mime"
	"net/http"
	"strconv"

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
	if !h.allowRemote && !localnet.HostIsLoopback(r.Host) {
		writeError(w, http.StatusForbidden, "forbidden", "host "+strconv.Quote(r.Host)+" is not a loopback name; this server answers localhost, 127.0.0.0/8 and [::1] only")
		return
	}
	if origin, present := r.Header["Origin"]; present && (len(origin) != 1 || !localnet.OriginIsLoopback(origin[0])) {
		shown := ""
		if len(origin) > 0 {
			shown = origin[0]
		}
		writeError(w, http.StatusForbidden, "forbidden", "origin "+strconv.Quote(shown)+" is not a loopback origin; pages of other sites may not call this server")
		return
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "a request body must be application/json")
			return
		}
	}
	h.next.ServeHTTP(w, r)
}

// writeError writes the relay's error body `{"error":{"code":…,"message":…}}`.
func writeError(w http.ResponseWriter, status int, code, message string) {
	body, _ := jsonvalue.Marshal(jsonvalue.ObjectOf("error", jsonvalue.ObjectOf("code", code, "message", message)))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
