package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/relay"
)

func init() { register(newNotifyCmd) }

func newNotifyCmd() *cobra.Command {
	cmd := groupCmd("notify", "Notification lane clients: publish envelopes, stream them")
	cmd.AddCommand(newNotifyPublishCmd(), newNotifyStreamCmd())
	return cmd
}

func newNotifyPublishCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "publish [FILE|-] [--url U]",
		Short: "Publish envelopes (one per non-blank line) with POST /v1/notifications",
		Long: `Publish each non-blank line of FILE (or standard input) as one Envoy envelope to
a relay. For each published envelope the relay's answer is printed as one line:
{"duplicate":false,"seq":N}, or {"duplicate":true,"seq":N} with the original's seq when its
dedupe key names its event and it was published within 72 h. A refused envelope prints one
'line N: <message>' per problem (the envelope's checks in order, then the relay's subject checks); the
other lines are still published, and the exit code is 1.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			ctx := cmdContext(cmd)
			out := cmd.OutOrStdout()
			refused := false
			err = forEachLine(in, func(n int, line []byte) error {
				res, err := c.PublishEnvelope(ctx, line)
				if err != nil {
					var e *relay.Error
					if errors.As(err, &e) && e.Code == relay.CodeInvalidRequest {
						refused = true
						if len(e.Problems) == 0 {
							fmt.Fprintf(out, "line %d: %s\n", n, e.Message)
						}
						for _, p := range e.Problems {
							fmt.Fprintf(out, "line %d: %s\n", n, p.Message)
						}
						return nil
					}
					return relayFailure(err)
				}
				fmt.Fprintf(out, "%s", res.AppendJSON(nil))
				return nil
			})
			if err != nil {
				return err
			}
			if refused {
				return errRefused
			}
			return nil
		},
	}
	cf.add(cmd)
	return cmd
}

func newNotifyStreamCmd() *cobra.Command {
	var cf clientFlags
	var subjects []string
	var session, lastEventID string
	var count int
	var ids bool
	cmd := &cobra.Command{
		Use:   "stream --subject P [--subject P2…] [--url U]",
		Short: "Stream stored envelopes whose topic matches any pattern (SSE)",
		Long: `Open GET /v1/notifications/stream and print each envelope as one JSON line, in store
order: every stored envelope matching any --subject pattern (NATS wildcards: '*' one token,
'>' one or more trailing tokens) within the 72 h retention, then live ones. Each envelope
is printed once even when several patterns match. --session S skips envelopes whose
dedupe_key session S already got. --last-event-id N resumes after store sequence N. --ids
prefixes each line with its store sequence and a space (none for role-lane envelopes, which
are never stored). --count N exits after N envelopes; otherwise it runs until interrupted or
the relay ends the stream (the relay's closing note goes to stderr).`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(subjects) == 0 {
				return usageError("--subject is required")
			}
			if err := nonEmpty(cmd, "session", "last-event-id"); err != nil {
				return err
			}
			for _, s := range subjects {
				if err := envelope.ValidSubscribeSubject(s); err != nil {
					return usageError("--subject %q: %v", s, err)
				}
			}
			if count < 0 {
				return usageError("--count must not be negative")
			}
			if lastEventID != "" {
				if n, err := strconv.ParseInt(lastEventID, 10, 64); err != nil || n < 0 {
					return usageError("--last-event-id must be a non-negative integer, got %q", lastEventID)
				}
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			printed := 0
			errEnough := errors.New("enough")
			err = c.StreamNotifications(ctx, relay.NotifyStreamOptions{Subjects: subjects, Session: session, LastEventID: lastEventID},
				func(f relay.SSEFrame) error {
					if f.Comment != "" {
						if f.Comment != "heartbeat" {
							fmt.Fprintf(errw, "agentwire: relay: %s\n", strings.TrimPrefix(f.Comment, "agentwire: "))
						}
						return nil
					}
					if ids && f.ID != "" {
						fmt.Fprintf(out, "%s ", f.ID)
					}
					fmt.Fprintf(out, "%s\n", f.Data)
					printed++
					if count > 0 && printed >= count {
						return errEnough
					}
					return nil
				})
			switch {
			case err == nil, errors.Is(err, errEnough):
				return nil
			case ctx.Err() != nil:
				return nil // interrupted
			}
			return relayFailure(err)
		},
	}
	cf.add(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&subjects, "subject", nil, "subscription pattern (repeatable)")
	f.StringVar(&session, "session", "", "session whose delivered dedupe keys are skipped")
	f.StringVar(&lastEventID, "last-event-id", "", "resume after this store sequence")
	f.IntVar(&count, "count", 0, "exit after this many envelopes (0: until interrupted)")
	f.BoolVar(&ids, "ids", false, "prefix each line with its store sequence")
	return cmd
}
