package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/dispatch/client"
	dmcp "github.com/agentwire/agentwire/dispatch/mcp"
	"github.com/agentwire/agentwire/internal/localnet"
)

// The `dispatch` command group: the Dispatch tools of dispatch-tools.md for agent hosts.

func init() { register(newDispatchCmd) }

func newDispatchCmd() *cobra.Command {
	cmd := groupCmd("dispatch", "Dispatch tools for agent hosts: serve the twenty tools over the Model Context Protocol")
	cmd.AddCommand(newDispatchMCPCmd())
	return cmd
}

// dispatchMCPOptions are the flags of `dispatch mcp`.
type dispatchMCPOptions struct {
	http         string
	allowRemote  bool
	sessionID    string
	sessionTitle string
	machine      string
	tmux         string
}

// dispatchMCPEnv maps the identity flags to their environment variables; a flag given on the
// command line wins.
var dispatchMCPEnv = map[string]string{
	"session-id":    "AGENTWIRE_SESSION_ID",
	"session-title": "AGENTWIRE_SESSION_TITLE",
	"machine":       "AGENTWIRE_MACHINE",
	"tmux":          "AGENTWIRE_TMUX",
}

func newDispatchMCPCmd() *cobra.Command {
	var o dispatchMCPOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the twenty Dispatch tools over MCP: stdio by default, streamable HTTP with --http",
		Long: `Serve the twenty Dispatch tools to an MCP host (desktop assistants, IDE agents, agent
frameworks). Calls run against the Dispatch server named by DISPATCH_URL with the bearer token
DISPATCH_TOKEN; with either blank the server still starts and lists its tools, and every call
answers that Dispatch is disabled. A refused call is a tool result listing every problem, the
allowed keys and an example.

Writes carry this session's identity: --session-id, --session-title, --machine and --tmux
(AGENTWIRE_SESSION_ID, AGENTWIRE_SESSION_TITLE, AGENTWIRE_MACHINE, AGENTWIRE_TMUX), the host
name, the working directory and TMUX_PANE. LEGION_ISSUE names the issue a call without an
owner falls back to.

With --http ADDR the server speaks the streamable HTTP transport on ADDR (e.g.
127.0.0.1:7421, path /), loopback only: requests must name a loopback Host, a present Origin
must be a loopback origin, and request bodies must be application/json. --allow-remote lets
ADDR be any address and drops the Host rule; the server has no authentication of its own, so
whoever reaches it acts with DISPATCH_TOKEN. SIGINT or SIGTERM stops it.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd.Flags(), dispatchMCPEnv); err != nil {
				return err
			}
			if cmd.Flags().Changed("allow-remote") && o.http == "" {
				return usageError("--allow-remote applies only with --http ADDR")
			}
			if o.http != "" && !o.allowRemote && !localnet.HostIsLoopback(o.http) {
				return usageError("--http %s is not a loopback address (localhost, 127.0.0.0/8 or [::1] with a port); --allow-remote serves other addresses", o.http)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDispatchMCP(ctx, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.http, "http", "", "serve the streamable HTTP transport on ADDR (host:port, loopback unless --allow-remote) instead of stdio")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "with --http: allow a non-loopback ADDR and requests naming any Host (no authentication: whoever reaches it acts with DISPATCH_TOKEN)")
	f.StringVar(&o.sessionID, "session-id", "", "host session id: the actor of every write, the follower of asks, the author of this session's open asks")
	f.StringVar(&o.sessionTitle, "session-title", "", "session title sent with every write")
	f.StringVar(&o.machine, "machine", "", "machine name sent with every write")
	f.StringVar(&o.tmux, "tmux", "", "tmux session name sent with every write")
	return cmd
}

// runDispatchMCP serves until the client ends the stdio session, or until ctx ends (HTTP).
func runDispatchMCP(ctx context.Context, o dispatchMCPOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg := client.ConfigFromEnv(nil)
	cfg.Host.SessionID = o.sessionID
	cfg.Host.SessionTitle = o.sessionTitle
	cfg.Host.Machine = o.machine
	cfg.Host.Tmux = o.tmux
	if err := dispatch.CheckConfig(cfg.URL, cfg.Token); err != nil {
		fmt.Fprintf(stderr, "agentwire dispatch mcp: %v; every call will say so\n", err)
	}
	srv := dmcp.New(client.New(cfg), dmcp.Options{})
	if o.http == "" {
		if err := srv.ServeIO(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("dispatch mcp: %w", err)
		}
		return nil
	}
	l, err := net.Listen("tcp", o.http)
	if err != nil {
		return usageError("cannot listen on %s: %v", o.http, err)
	}
	hs := &http.Server{Handler: srv.HTTPHandler(dmcp.HTTPOptions{AllowRemote: o.allowRemote}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "agentwire dispatch mcp: serving MCP (streamable HTTP) on http://%s/\n", l.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("dispatch mcp: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdown)
	return nil
}
