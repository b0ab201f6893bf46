package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/relay"
)

func init() {
	eventsSubcommands = append(eventsSubcommands, newEventsSendCmd, newEventsTailCmd)
}

// defaultRelayURL is `agentwire serve`'s default address (relay.md §1).
const defaultRelayURL = "http://127.0.0.1:7420"

// clientFlags are the relay-client flags shared by send and tail.
type clientFlags struct {
	url   string
	token string
	ca    string
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.url, "url", "", "relay URL, http:// or https:// (default $AGENTWIRE_URL or "+defaultRelayURL+")")
	cmd.Flags().StringVar(&c.token, "token", "", "bearer token (default $AGENTWIRE_TOKEN)")
	cmd.Flags().StringVar(&c.ca, "ca", "", "PEM file of the certificate authority that signed the relay's TLS certificate, when it is not one the system trusts (default $AGENTWIRE_CA)")
}

// Reaching the relay. A relay that refuses connections, or whose address swallows them, must not
// leave the user waiting in silence:
//   - one connection attempt gives up after connectTimeout (the system's own limit is minutes);
//   - on a terminal, an attempt that has not connected after slowConnect says so on stderr, and
//     so does every retry;
//   - `events send` makes at most relayAttempts attempts per batch (backoff from 100 ms,
//     doubling), then exits 1 naming them: delivering a file is its job, and a relay that is
//     restarting should not cost a re-run, but one that is down is reported within seconds;
//   - `events tail` does the same until it has reached the relay once. From then on following
//     the run is its job: it reconnects through outages, with backoff up to maxTailBackoff,
//     until the run ends or it is interrupted.
const (
	connectTimeout = 10 * time.Second
	slowConnect    = time.Second
	relayAttempts  = 6
	firstBackoff   = 100 * time.Millisecond
	maxTailBackoff = 5 * time.Second
)

func (c *clientFlags) client() (*relay.Client, error) { return c.clientWithNotes(nil) }

// clientWithNotes is client with slow connection attempts reported through prog (nil: never).
func (c *clientFlags) clientWithNotes(prog *progress) (*relay.Client, error) {
	u := c.url
	if u == "" {
		u = os.Getenv("AGENTWIRE_URL")
	}
	if u == "" {
		u = defaultRelayURL
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, usageError("--url must be an http:// or https:// URL, got %q", u)
	}
	tok := c.token
	if tok == "" {
		tok = os.Getenv("AGENTWIRE_TOKEN")
	}
	// A 64 KiB write buffer sends a batch of up to megabytes in 64 KiB writes instead of the
	// default 4 KiB ones.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.WriteBufferSize = 64 << 10
	ca := c.ca
	if ca == "" {
		ca = os.Getenv("AGENTWIRE_CA")
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, usageError("cannot read --ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageError("--ca %s holds no PEM certificate", ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if prog == nil || !prog.enabled {
			return dialer.DialContext(ctx, network, addr)
		}
		slow := time.AfterFunc(slowConnect, func() {
			prog.note("connecting to the relay at %s: no answer after %s", addr, slowConnect)
		})
		defer slow.Stop()
		return dialer.DialContext(ctx, network, addr)
	}
	return &relay.Client{BaseURL: u, Token: tok, HTTP: &http.Client{Transport: tr}}, nil
}

// tlsRefused reports whether err is a TLS failure a retry cannot change: a certificate the
// client does not trust (see --ca) or that names another host, or a relay that answers in
// plain HTTP on an https:// URL.
func tlsRefused(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &host) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// gaveUp marks the error of the last of relayAttempts failed attempts.
func gaveUp(err error) error { return fmt.Errorf("%w (gave up after %d attempts)", err, relayAttempts) }

// transportCause drops the method and URL net/http wraps a transport error in (the notices
// name the relay already).
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryDelay waits d or until ctx ends (false).
func retryDelay(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// relayFailure reports an error that is neither a usage error nor a per-line refusal: the relay
// could not be reached, or refused the whole request (exit 1).
func relayFailure(err error) error {
	var e *relay.Error
	if errors.As(err, &e) {
		return &exitError{code: 1, msg: fmt.Sprintf("relay refused the request (%d %s): %s", e.Status, e.Code, e.Message)}
	}
	return &exitError{code: 1, msg: fmt.Sprintf("relay request failed: %v", err)}
}

// maxSendBody keeps a batch under the relay's default request-body limit (relay.md §3).
const maxSendBody = relay.DefaultMaxBody - 64<<10

func newEventsSendCmd() *cobra.Command {
	var cf clientFlags
	var batchSize int
	cmd := &cobra.Command{
		Use:   "send [FILE|-] [--url U] [--batch N]",
		Short: "Post a run's NDJSON events to a relay in batches",
		Long: `Post NDJSON events to a relay, in batches of up to N events; consecutive events of one
run share a batch. Each line is parsed locally only to find its runId; the relay validates
and reduces. On a refusal the output is 'line N: <message>' with the exact contract message
and the exit code is 1; batches before the refused one are stored. One summary line per run
is printed on success.

A batch that fails for a connection error or a 503 is sent again (duplicates are no-ops), at
most 6 times in all, waiting 100 ms, then twice as long each time (about 3 s in all); a
connection attempt gives up after 10 s. Then the command exits 1 with
'relay request failed: <error> (gave up after 6 attempts)'. On a terminal, progress, each
retry and a connection attempt that has had no answer for 1 s are reported on stderr.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batchSize < 1 || batchSize > relay.DefaultMaxBatch {
				return usageError("--batch must be between 1 and %d, got %d", relay.DefaultMaxBatch, batchSize)
			}
			prog := newProgress(cmd, "sent")
			c, err := cf.clientWithNotes(prog)
			if err != nil {
				return err
			}
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			return runSend(cmd, c, prog, in, batchSize)
		},
	}
	cf.add(cmd)
	cmd.Flags().IntVar(&batchSize, "batch", 1000, "events per request (1 to 10000)")
	return cmd
}

// pending is the batch being filled: lines of one run with their physical line numbers.
type pending struct {
	runID string
	body  []byte
	lines []int
}

type runSummary struct {
	accepted, duplicates int
	last                 int64
	status               string
}

func runSend(cmd *cobra.Command, c *relay.Client, prog *progress, in io.Reader, batchSize int) error {
	ctx := cmdContext(cmd)
	out := cmd.OutOrStdout()
	defer prog.done()
	summaries := map[string]*runSummary{}
	var order []string
	var b pending
	refused := false

	flush := func() error {
		if len(b.lines) == 0 {
			return nil
		}
		res, err := postWithRetry(ctx, c, prog, b.runID, b.body)
		if err != nil {
			var e *relay.Error
			if errors.As(err, &e) && e.HasIndex && e.Index < len(b.lines) {
				fmt.Fprintf(out, "line %d: %s\n", b.lines[e.Index], e.Message)
				refused = true
				return errRefused
			}
			return relayFailure(err)
		}
		s := summaries[b.runID]
		if s == nil {
			s = &runSummary{}
			summaries[b.runID] = s
			order = append(order, b.runID)
		}
		s.accepted += res.Accepted
		s.duplicates += res.Duplicates
		s.last, s.status = res.LastLogicalSequence, res.Status
		b.body, b.lines = b.body[:0], b.lines[:0]
		return nil
	}

	err := forEachLine(in, func(n int, line []byte) error {
		prog.tick(n)
		ev, err := events.ParseEvent(line)
		if err != nil {
			// Store what came before, then report the line as `events validate` would.
			if ferr := flush(); ferr != nil {
				return ferr
			}
			fmt.Fprintf(out, "line %d: %s\n", n, err.Error())
			refused = true
			return errRefused
		}
		if len(b.lines) > 0 && (ev.RunID() != b.runID || len(b.lines) >= batchSize || len(b.body)+len(line)+1 > maxSendBody) {
			if err := flush(); err != nil {
				return err
			}
		}
		b.runID = ev.RunID()
		b.body = append(append(b.body, line...), '\n')
		b.lines = append(b.lines, n)
		return nil
	})
	if err == nil {
		err = flush()
	}
	prog.done()
	for _, id := range order {
		s := summaries[id]
		fmt.Fprintf(out, "run %s: accepted %d, duplicates %d, lastLogicalSequence %d, status %s\n",
			id, s.accepted, s.duplicates, s.last, s.status)
	}
	if refused {
		return errRefused
	}
	return err
}

// postWithRetry posts one NDJSON batch, re-sending it after a transport error or a 503, at most
// relayAttempts times in all (a re-send is safe: exact duplicates are no-ops on the relay).
func postWithRetry(ctx context.Context, c *relay.Client, prog *progress, runID string, body []byte) (relay.AppendResult, error) {
	delay := firstBackoff
	for attempt := 1; ; attempt++ {
		res, err := c.Append(ctx, runID, relay.MediaNDJSON, body)
		if err == nil {
			return res, nil
		}
		var e *relay.Error
		retriable := (!errors.As(err, &e) && !tlsRefused(err)) || (e != nil && e.Status == http.StatusServiceUnavailable)
		switch {
		case !retriable || ctx.Err() != nil:
			return res, err
		case attempt == relayAttempts:
			return res, gaveUp(err)
		}
		prog.note("relay at %s unreachable (%v); retrying in %s (attempt %d of %d)", c.BaseURL, transportCause(err), delay, attempt+1, relayAttempts)
		if !retryDelay(ctx, delay) {
			return res, ctx.Err()
		}
		delay *= 2
	}
}

func newEventsTailCmd() *cobra.Command {
	var cf clientFlags
	var after int64
	var snapshot bool
	cmd := &cobra.Command{
		Use:   "tail RUN [--url U]",
		Short: "Follow a run's event stream, reduce it, and print its live state",
		Long: `Follow a run's events on a relay as they are stored, reduce every event with the same
reducer as the relay, and print the live state: messages as their deltas stream, tool calls
and results, interrupts, usage, and the final status. The command ends after the run's
terminal event. With --snapshot only the final reducer state is printed (indented JSON).

Until it has reached the relay, a connection error or a 503 is retried at most 6 times in all
(100 ms, then twice as long each time; a connection attempt gives up after 10 s), then the
command exits 1 with 'relay request failed: <error> (gave up after 6 attempts)'. Once it has
reached the relay it follows the run through outages: a lost stream is resumed after the last
event received, retrying with backoff (up to 5 s between attempts) until the relay is back,
the run ends, or the command is interrupted. On a terminal each retry, and a connection
attempt that has had no answer for 1 s, are reported on stderr.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if after < 0 {
				return usageError("--after must be non-negative")
			}
			if args[0] == "" {
				return usageError("RUN must not be empty")
			}
			prog := newProgress(cmd, "")
			c, err := cf.clientWithNotes(prog)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runTail(ctx, cmd, c, prog, args[0], after, snapshot)
		},
	}
	cf.add(cmd)
	cmd.Flags().Int64Var(&after, "after", 0, "show only events after this logicalSequence (the state is still reduced from the first event)")
	cmd.Flags().BoolVar(&snapshot, "snapshot", false, "print only the final reducer state as JSON")
	return cmd
}

// tailView renders the live state of a run as lines of text.
type tailView struct {
	w        *bufio.Writer
	open     string // messageId whose streamed text line is open
	streamed map[string]bool
}

func runTail(ctx context.Context, cmd *cobra.Command, c *relay.Client, prog *progress, runID string, after int64, snapshotOnly bool) error {
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	view := &tailView{w: out, streamed: map[string]bool{}}
	st := events.NewReducerState()
	cursor := "0"
	var reduceErr error
	reached := false // the relay has answered once: from then on, outages are waited out
	failures := 0    // consecutive attempts that brought nothing
	delay := firstBackoff
	for !st.IsTerminal() {
		opts := relay.StreamOptions{LastEventID: cursor}
		if cursor == "0" {
			opts.LastEventID = ""
		}
		progressed := false
		err := c.Stream(ctx, runID, opts, func(f relay.SSEFrame) error {
			reached = true
			if f.Comment != "" {
				return nil
			}
			progressed = true
			ev, err := events.ParseEvent(f.Data)
			if err != nil {
				reduceErr = fmt.Errorf("event %s: %v", f.ID, err)
				return reduceErr
			}
			next, err := events.Reduce(st, ev)
			if err != nil {
				reduceErr = fmt.Errorf("event %s: %v", f.ID, err)
				return reduceErr
			}
			st = next
			cursor = f.ID
			if !snapshotOnly && ev.LogicalSequence() > after {
				view.show(ev)
				_ = out.Flush()
			}
			return nil
		})
		if reduceErr != nil {
			return &exitError{code: 1, msg: reduceErr.Error()}
		}
		var e *relay.Error
		if errors.As(err, &e) {
			if e.Status == http.StatusNotFound {
				return &exitError{code: 1, msg: fmt.Sprintf("run %s not found", runID)}
			}
			if e.Status != http.StatusServiceUnavailable {
				return relayFailure(err)
			}
		}
		if tlsRefused(err) {
			return relayFailure(err)
		}
		if ctx.Err() != nil {
			return &exitError{code: 1, msg: "interrupted"}
		}
		if st.IsTerminal() {
			break
		}
		// The stream ended early (shutdown, slow-consumer cut, network) or never started:
		// resume after the last id.
		if err == nil {
			reached = true
			err = errors.New("the stream ended before the run's terminal event")
		}
		if progressed {
			failures, delay = 0, firstBackoff
		}
		failures++
		if !reached {
			if failures == relayAttempts {
				return relayFailure(gaveUp(err))
			}
			prog.note("relay at %s unreachable (%v); retrying in %s (attempt %d of %d)", c.BaseURL, transportCause(err), delay, failures+1, relayAttempts)
		} else if failures > 1 || !progressed {
			prog.note("lost the relay at %s (%v); reconnecting in %s", c.BaseURL, transportCause(err), delay)
		}
		if !retryDelay(ctx, delay) {
			return &exitError{code: 1, msg: "interrupted"}
		}
		delay = min(2*delay, maxTailBackoff)
	}
	if snapshotOnly {
		data, err := st.MarshalIndent("  ")
		if err != nil {
			return err
		}
		out.Write(data)
		out.WriteByte('\n')
		return nil
	}
	view.closeLine()
	last := st.LastLogicalSequence()
	fmt.Fprintf(out, "status %s, %d events, lastLogicalSequence %s\n", st.Status(), st.EventCount(), jsonvalue.FormatNumber(last))
	return nil
}

func (v *tailView) closeLine() {
	if v.open != "" {
		v.w.WriteByte('\n')
		v.open = ""
	}
}

func (v *tailView) line(format string, args ...any) {
	v.closeLine()
	fmt.Fprintf(v.w, format+"\n", args...)
}

// partText renders a content part for the live view.
func partText(p events.ContentPart) string {
	switch p.Type {
	case "text":
		t, _ := p.Raw.Get("text")
		s, _ := t.(string)
		return s
	case "reasoning":
		t, _ := p.Raw.Get("text")
		s, _ := t.(string)
		return "(" + s + ")"
	}
	return "[" + p.Type + "]"
}

func partsText(parts []events.ContentPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(partText(p))
	}
	return b.String()
}

// shortJSON renders a value on one line, cut to 200 bytes.
func shortJSON(v any) string {
	s := string(jsonvalue.AppendEncoded(nil, v))
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

func (v *tailView) show(ev events.Event) {
	switch p := ev.Payload().(type) {
	case events.RunStarted:
		v.line("run %s started (session %s, phase %s)", ev.RunID(), ev.SessionID(), ev.PhaseID())
	case events.MessageStarted:
		v.closeLine()
		fmt.Fprintf(v.w, "%s %s: ", p.Role, p.MessageID)
		v.open = p.MessageID
	case events.MessagePartDelta:
		if v.open != p.MessageID {
			v.closeLine()
			fmt.Fprintf(v.w, "… %s: ", p.MessageID)
			v.open = p.MessageID
		}
		v.w.WriteString(partText(p.Part))
		v.streamed[p.MessageID] = true
	case events.MessageCompleted:
		if v.open == p.MessageID && v.streamed[p.MessageID] {
			v.closeLine()
			return
		}
		if v.open == p.MessageID {
			v.w.WriteString(partsText(p.Content))
			v.closeLine()
			return
		}
		v.line("%s %s: %s", p.Role, p.MessageID, partsText(p.Content))
	case events.ToolCalled:
		v.line("tool call %s %s %s", p.ToolCall.Name, p.ToolCall.ToolCallID, shortJSON(p.ToolCall.Input))
	case events.ToolProgress:
		v.line("tool progress %s: %s", p.ToolCallID, partsText(p.Content))
	case events.ToolCompleted:
		suffix := ""
		if p.Result.IsError != nil && *p.Result.IsError {
			suffix = " (isError)"
		}
		v.line("tool result %s %s%s: %s", p.Result.Name, p.Result.ToolCallID, suffix, shortJSON(p.Result.Output))
	case events.ToolFailed:
		v.line("tool error %s %s: %s", p.Error.Name, p.Error.ToolCallID, p.Error.Error)
	case events.InterruptRequired:
		v.line("interrupt %s (%s): %s", p.Interrupt.InterruptID, p.Interrupt.Kind, p.Interrupt.Prompt)
	case events.InterruptResolved:
		v.line("interrupt %s resolved: %s", p.InterruptID, shortJSON(p.Decisions))
	case events.UsageUpdated:
		v.line("usage %s", shortJSON(p.Usage.Raw))
	case events.RunCompleted:
		v.line("run completed: %s", p.FinishReason)
	case events.RunFailed:
		v.line("run failed: %s: %s", p.Code, p.Message)
	case events.RunCancelled:
		if p.Reason != nil {
			v.line("run cancelled: %s", *p.Reason)
		} else {
			v.line("run cancelled")
		}
	}
}
