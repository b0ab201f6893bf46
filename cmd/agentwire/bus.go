package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/store"
)

func init() { register(newBusCmd) }

func newBusCmd() *cobra.Command {
	cmd := groupCmd("bus", "Hive agent bus clients: send a message, listen to a channel")
	cmd.AddCommand(newBusSendCmd(), newBusListenCmd())
	return cmd
}

// messageTypes are the known `type` values a sender may choose (hive.md §2.2).
var messageTypes = map[string]hive.MessageType{
	"question": hive.MessageTypeQuestion, "offer": hive.MessageTypeOffer, "handoff": hive.MessageTypeHandoff,
	"answer": hive.MessageTypeAnswer, "finding": hive.MessageTypeFinding,
}

// busNetwork builds the message network from --channel or --swarm (exactly one).
func busNetwork(channel, swarm string) (hive.NetworkV1, error) {
	switch {
	case channel != "" && swarm != "":
		return nil, usageError("give --channel (org network) or --swarm (swarm network), not both")
	case channel != "":
		return hive.NetworkOrg{Channel: channel}, nil
	case swarm != "":
		return hive.NetworkSwarm{SwarmID: swarm}, nil
	}
	return nil, usageError("--channel or --swarm is required")
}

// optString returns nil for an empty flag value.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newBusSendCmd() *cobra.Command {
	var cf clientFlags
	var channel, swarm, typ, text, from, to, toInstance, replyTo, deadline, cmid string
	cmd := &cobra.Command{
		Use:   "send --channel C|--swarm S --type TYPE --text T [--url U]",
		Short: "Send one hive message (POST /v1/messages) and print its message.stored record",
		Long: `Send one hive agent message to a relay over HTTP and print the relay's message.stored
record as one JSON line. TYPE is question, offer, handoff, answer or finding. The message is
validated locally first: an invalid one prints its message and exits 1 without sending. A
relay refusal prints the hive error's message and exits 1. A resend with the same
--client-msg-id is answered with the original record.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "channel", "swarm", "from", "to", "to-instance", "reply-to", "deadline", "client-msg-id"); err != nil {
				return err
			}
			network, err := busNetwork(channel, swarm)
			if err != nil {
				return err
			}
			mt, ok := messageTypes[typ]
			if !ok {
				return usageError("unknown TYPE %q (want question, offer, handoff, answer or finding)", typ)
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			if cmid == "" {
				cmid = store.NewULID(time.Now())
			}
			m := hive.AgentMessageV1{ClientMsgID: cmid, Network: network, Type: mt, From: from,
				To: optString(to), ToInstance: optString(toInstance), ReplyTo: optString(replyTo),
				Body: &hive.MessageBodyV1{Text: text}}
			if deadline != "" {
				ts, err := hive.NewUtcTimestamp(deadline)
				if err != nil {
					return usageError("--deadline: %v", err)
				}
				m.Deadline = &ts
			}
			if err := m.Validate(); err != nil {
				fmt.Fprintln(cmd.OutOrStdout(), err.Error())
				return errRefused
			}
			body, err := m.MarshalJSON()
			if err != nil {
				return err
			}
			st, err := c.SendMessage(cmdContext(cmd), body)
			if err != nil {
				return busFailure(cmd, err)
			}
			out, err := st.MarshalJSON()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
			return nil
		},
	}
	cf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&channel, "channel", "", "org channel org:<org>/vault:<vault_id>/<name>")
	f.StringVar(&swarm, "swarm", "", "swarm_id (swarm network)")
	f.StringVar(&typ, "type", "", "message type: question, offer, handoff, answer or finding")
	f.StringVar(&text, "text", "", "message text (body.text)")
	f.StringVar(&from, "from", "agentwire-cli", "sending agent id (from)")
	f.StringVar(&to, "to", "", "recipient agent (org) or handle (swarm)")
	f.StringVar(&toInstance, "to-instance", "", "the recipient's instance_id (org only, with --to)")
	f.StringVar(&replyTo, "reply-to", "", "gid replied to")
	f.StringVar(&deadline, "deadline", "", "question deadline, YYYY-MM-DDTHH:MM:SSZ")
	f.StringVar(&cmid, "client-msg-id", "", "client_msg_id (default: a new ULID)")
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// busFailure reports a relay refusal (the hive error's message on stdout, exit 1) or a
// transport failure (exit 1).
func busFailure(cmd *cobra.Command, err error) error {
	var e *relay.Error
	if errors.As(err, &e) {
		fmt.Fprintln(cmd.OutOrStdout(), e.Message)
		return errRefused
	}
	return relayFailure(err)
}

func newBusListenCmd() *cobra.Command {
	var cf clientFlags
	var channel, agent, instance, receipts string
	var cursor int64
	var count int
	cmd := &cobra.Command{
		Use:   "listen --channel C [--url U] [--receipts delivered|read]",
		Short: "Follow a channel on the bus WebSocket and print each delivery",
		Long: `Open the relay's /v1/bus WebSocket, announce one agent following the channel (hello,
hive.md §4.5), and print every message.deliver and task.event frame as one JSON line, as the
relay sent it. With --receipts delivered or read, each delivery is answered with a
message.receipt of that state for the announced agent (the sender then gets message.status).
--cursor N replays the channel's visible messages after seq N first (at most 500). --count N
exits after N printed frames; otherwise it runs until interrupted. The hello's instance_id is
--instance (default $AGENTWIRE_INSTANCE, else "local", the local-mode instance); it must be the
token's instance. An error frame is printed to stderr; one that ends the socket exits 1.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "instance", "agent"); err != nil {
				return err
			}
			if err := hive.ValidateChannel(channel); err != nil {
				return usageError("--channel: %v", err)
			}
			var state hive.MessageReceiptState
			switch receipts {
			case "":
			case "delivered":
				state = hive.MessageReceiptStateDelivered
			case "read":
				state = hive.MessageReceiptStateRead
			default:
				return usageError("--receipts must be delivered or read, got %q", receipts)
			}
			if count < 0 || cursor < 0 {
				return usageError("--count and --cursor must not be negative")
			}
			if instance == "" {
				instance = os.Getenv("AGENTWIRE_INSTANCE")
			}
			if instance == "" {
				instance = relay.LocalOrg
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runListen(ctx, cmd, c, listenOptions{channel: channel, agent: agent, instance: instance,
				receipt: state, cursor: cursor, count: count})
		},
	}
	cf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&channel, "channel", "", "org channel to follow")
	f.StringVar(&agent, "agent", "agentwire-cli", "agent id announced in hello (receipts are sent as it)")
	f.StringVar(&instance, "instance", "", "instance_id of the hello (default $AGENTWIRE_INSTANCE or local)")
	f.StringVar(&receipts, "receipts", "", "answer each delivery with a receipt: delivered or read")
	f.Int64Var(&cursor, "cursor", 0, "replay the channel after this seq first (hello cursor)")
	f.IntVar(&count, "count", 0, "exit after this many printed frames (0: run until interrupted)")
	return cmd
}

type listenOptions struct {
	channel, agent, instance string
	receipt                  hive.MessageReceiptState
	cursor                   int64
	count                    int
}

func runListen(ctx context.Context, cmd *cobra.Command, c *relay.Client, o listenOptions) error {
	conn, err := c.DialBus(ctx)
	if err != nil {
		return busFailure(cmd, err)
	}
	defer conn.CloseNow()
	hello := hive.FrameHello{InstanceID: o.instance,
		Agents: []hive.BusAgentV1{{AgentID: o.agent, Role: "listener", Channels: []string{o.channel}}}}
	if o.cursor > 0 || cmd.Flags().Changed("cursor") {
		hello.Cursors = []hive.BusCursor{{Channel: o.channel, Seq: uint64(o.cursor)}}
	}
	if err := hello.Validate(); err != nil {
		return usageError("hello: %v", err)
	}
	if err := conn.Send(ctx, hello); err != nil {
		return relayFailure(err)
	}
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	printed := 0
	for o.count == 0 || printed < o.count {
		f, raw, err := conn.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted
			}
			if s := websocket.CloseStatus(err); s != -1 {
				return &exitError{code: 1, msg: fmt.Sprintf("the relay closed the socket (%d)", s)}
			}
			return relayFailure(err)
		}
		switch f := f.(type) {
		case hive.FrameMessageDeliver:
			fmt.Fprintf(out, "%s\n", raw)
			printed++
			if o.receipt != "" {
				r := hive.FrameMessageReceipt{Receipt: hive.MessageReceiptV1{GID: f.Delivery.GID, By: o.agent, State: o.receipt}}
				if err := conn.Send(ctx, r); err != nil {
					return relayFailure(err)
				}
			}
		case hive.FrameTaskEvent:
			fmt.Fprintf(out, "%s\n", raw)
			printed++
		case hive.FrameError:
			// The relay checks the hello's instance_id against the token's (auth mode): the
			// fix is a flag of this command, so name it rather than print the frame.
			if r := f.Error.Reason; r != nil && *r == hive.ReasonInstanceMismatch {
				return &exitError{code: 1, msg: fmt.Sprintf("the relay refused the hello: %s; --instance (or $AGENTWIRE_INSTANCE) must be the token's instance_id, got %q",
					f.Error.Message, o.instance)}
			}
			fmt.Fprintf(errw, "agentwire: relay error: %s\n", raw)
		}
	}
	_ = conn.Close()
	return nil
}
