package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
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
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.url, "url", "", "relay URL (default $AGENTWIRE_URL or "+defaultRelayURL+")")
	cmd.Flags().StringVar(&c.token, "token", "", "bearer token (default $AGENTWIRE_TOKEN)")
}

func (c *clientFlags) client() (*relay.Client, error) {
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
	return &relay.Client{BaseURL: u, Token: tok, HTTP: &http.Client{Transport: tr}}, nil
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

// sendRetries bounds how often one batch is re-sent after a transport failure or a 503; a
// re-send is safe because exact duplicates are no-ops on the relay.
const sendRetries = 6

// maxSendBody keeps a batch under the relay's default request-body limit (relay.md §3).
const maxSendBody = relay.DefaultMaxBody - 64<<10

func newEventsSendCmd() *cobra.Command {
	var cf clientFlags
	var batchSize int
	cmd := &cobra.Command{
		Use:   "send [FILE|-] [--url U] [--batch N]",
		Short: "Post a run's NDJSON events to a relay in batches (POST /v1/runs/{runId}/events)",
		Long: `Post NDJSON events to a relay (relay.md §2), in batches of up to N events; consecutive
events of one run share a batch. Each line is parsed locally only to find its runId; the relay
validates and reduces. On a refusal the output is 'line N: <message>' with the exact contract
message and the exit code is 1; batches before the refused one are stored. A batch whose
answer was lost (connection error) is re-sent: duplicates are no-ops. One summary line per
run is printed on success. Progress goes to stderr when it is a terminal.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batchSize < 1 || batchSize > relay.DefaultMaxBatch {
				return usageError("--batch must be between 1 and %d, got %d", relay.DefaultMaxBatch, batchSize)
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			return runSend(cmd, c, in, batchSize)
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

func runSend(cmd *cobra.Command, c *relay.Client, in io.Reader, batchSize int) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	out := cmd.OutOrStdout()
	prog := newProgress(cmd, "sent")
	defer prog.done()
	summaries := map[string]*runSummary{}
	var order []string
	var b pending
	refused := false

	flush := func() error {
		if len(b.lines) == 0 {
			return nil
		}
		res, err := postWithRetry(ctx, c, b.runID, b.body)
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

// postWithRetry posts one NDJSON batch, re-sending it after a transport error or a 503.
func postWithRetry(ctx context.Context, c *relay.Client, runID string, body []byte) (relay.AppendResult, error) {
	delay := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		res, err := c.Append(ctx, runID, relay.MediaNDJSON, body)
		if err == nil {
			return res, nil
		}
		var e *relay.Error
		retriable := !errors.As(err, &e) || e.Status == http.StatusServiceUnavailable
		if !retriable || attempt == sendRetries || ctx.Err() != nil {
			return res, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return res, ctx.Err()
		}
		delay = min(2*delay, 2*time.Second)
	}
}

func newEventsTailCmd() *cobra.Command {
	var cf clientFlags
	var after int64
	var snapshot bool
	cmd := &cobra.Command{
		Use:   "tail RUN [--url U]",
		Short: "Follow a run's SSE stream, reduce it, and print its live state",
		Long: `Follow GET /v1/runs/{runId}/events as Server-Sent Events (relay.md §2), reduce every event
with the same reducer as the relay (events.md §8), and print the live state: messages as their
deltas stream, tool calls and results, interrupts, usage, and the final status. A dropped
stream is resumed from the last received id (Last-Event-ID). The command ends after the run's
terminal event. With --snapshot only the final reducer state is printed (indented JSON).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if after < 0 {
				return usageError("--after must be non-negative")
			}
			if args[0] == "" {
				return usageError("RUN must not be empty")
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			return runTail(cmd, c, args[0], after, snapshot)
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

func runTail(cmd *cobra.Command, c *relay.Client, runID string, after int64, snapshotOnly bool) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	view := &tailView{w: out, streamed: map[string]bool{}}
	st := events.NewReducerState()
	cursor := "0"
	var reduceErr error
	failures := 0
	for !st.IsTerminal() {
		opts := relay.StreamOptions{LastEventID: cursor}
		if cursor == "0" {
			opts.LastEventID = ""
		}
		progressed := false
		err := c.Stream(ctx, runID, opts, func(f relay.SSEFrame) error {
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
		if ctx.Err() != nil {
			return &exitError{code: 1, msg: "interrupted"}
		}
		if st.IsTerminal() {
			break
		}
		// The stream ended early (shutdown, slow-consumer cut, network): resume from the
		// last id, giving up after repeated attempts that bring nothing.
		if progressed {
			failures = 0
		} else if failures++; failures >= 8 {
			if err == nil {
				err = errors.New("stream ended before the run's terminal event")
			}
			return relayFailure(err)
		}
		time.Sleep(time.Duration(failures) * 200 * time.Millisecond)
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
