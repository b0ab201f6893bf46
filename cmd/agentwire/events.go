package main

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/events/synth"
)

func init() { register(newEventsCmd) }

// eventsSubcommands lets other files (the relay clients `events send` and `events tail`) add
// subcommands to the events group from their own init functions.
var eventsSubcommands []func() *cobra.Command

func newEventsCmd() *cobra.Command {
	cmd := groupCmd("events", "AgentDock run events (protocol 1): validate, reduce, synthesize, send, tail")
	cmd.AddCommand(newEventsValidateCmd(), newEventsReduceCmd(), newEventsSynthCmd())
	for _, build := range eventsSubcommands {
		cmd.AddCommand(build())
	}
	return cmd
}

// progress prints a running count, and notices about the relay connection, on stderr when
// stderr is a terminal (cli.md: never otherwise). Notices may come from other goroutines (a
// connection attempt's timer): writes are serialised.
type progress struct {
	enabled bool
	w       io.Writer
	verb    string
	mu      sync.Mutex
}

func newProgress(cmd *cobra.Command, verb string) *progress {
	w := cmd.ErrOrStderr()
	return &progress{enabled: isTerminal(w), w: w, verb: verb}
}

func (p *progress) tick(n int) {
	if p.enabled && n%50000 == 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.w, "\r%s %d lines", p.verb, n)
	}
}

func (p *progress) done() {
	if p.enabled {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// note prints one line `agentwire: <message>` on a terminal (over the progress count, which the
// next tick redraws); nothing otherwise.
func (p *progress) note(format string, args ...any) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[Kagentwire: "+format+"\n", args...)
}

func newEventsValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [FILE|-]",
		Short: "Validate each non-blank NDJSON line as one event; prints `line N: <message>` per invalid line",
		Args:  maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			out := bufio.NewWriter(cmd.OutOrStdout())
			defer out.Flush()
			prog := newProgress(cmd, "validated")
			defer prog.done()
			invalid := 0
			err = forEachLine(in, func(n int, line []byte) error {
				prog.tick(n)
				if _, err := events.ParseEvent(line); err != nil {
					invalid++
					fmt.Fprintf(out, "line %d: %s\n", n, err.Error())
				}
				return nil
			})
			if err != nil {
				return err
			}
			if invalid > 0 {
				return errRefused
			}
			return nil
		},
	}
}

func newEventsReduceCmd() *cobra.Command {
	var compact bool
	cmd := &cobra.Command{
		Use:   "reduce [FILE|-]",
		Short: "Apply the NDJSON events in order with the reducer and print the final snapshot",
		Args:  maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			prog := newProgress(cmd, "reduced")
			state := events.NewReducerState()
			err = forEachLine(in, func(n int, line []byte) error {
				prog.tick(n)
				ev, err := events.ParseEvent(line)
				if err == nil {
					state, err = events.Reduce(state, ev)
				}
				if err != nil {
					prog.done()
					fmt.Fprintf(cmd.ErrOrStderr(), "line %d: %s\n", n, err.Error())
					return errRefused
				}
				return nil
			})
			prog.done()
			if err != nil {
				return err
			}
			// The state nests deeper than an event may (events.MaxStateDepth): MarshalIndent
			// allows for that.
			snap := state.AppendJSON(nil)
			if !compact {
				if snap, err = state.MarshalIndent("  "); err != nil {
					return err
				}
			}
			snap = append(snap, '\n')
			_, err = cmd.OutOrStdout().Write(snap)
			return err
		},
	}
	cmd.Flags().BoolVar(&compact, "compact", false, "print the snapshot on one line")
	return cmd
}

func newEventsSynthCmd() *cobra.Command {
	var (
		n       int
		seed    int64
		runID   string
		profile string
		ending  string
	)
	cmd := &cobra.Command{
		Use:   "synth --events N [--seed S] [--run-id ID] [--profile default|rich] [--ending E]",
		Short: "Write a deterministic, valid NDJSON run of exactly N events (N >= 2; the rich profile needs N >= 42)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("events") {
				return usageError("events synth needs --events N")
			}
			p := synth.Profile(profile)
			if p != synth.ProfileDefault && p != synth.ProfileRich {
				return usageError("unknown --profile %q (want default or rich)", profile)
			}
			e := synth.Ending(ending)
			switch {
			case e != synth.EndingBySeed && p != synth.ProfileRich:
				return usageError("--ending needs --profile rich")
			case e != synth.EndingBySeed && e != synth.EndingCompleted && e != synth.EndingFailed && e != synth.EndingCancelled:
				return usageError("unknown --ending %q (want completed, failed or cancelled)", ending)
			}
			if min := synth.MinEventsFor(p); n < min {
				return usageError("--events must be at least %d, got %d", min, n)
			}
			if err := nonEmpty(cmd, "run-id"); err != nil {
				return err
			}
			if runID == "" {
				runID = synth.DefaultRunID(seed)
			}
			out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
			if err := synth.GenerateWith(out, n, seed, synth.Options{Profile: p, Ending: e, RunID: runID}); err != nil {
				return err
			}
			return out.Flush()
		},
	}
	cmd.Flags().IntVar(&n, "events", 0, "number of events (at least 2)")
	cmd.Flags().Int64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().StringVar(&runID, "run-id", "", "run id (default run-<seed>)")
	cmd.Flags().StringVar(&profile, "profile", "default", "default: one phase, always completed; rich: three phases, every event type and content-part kind, tool errors, two interrupts and a chosen ending")
	cmd.Flags().StringVar(&ending, "ending", "", "rich profile's terminal event: completed, failed or cancelled (default: by seed, seed mod 3 = 0, 1, 2)")
	return cmd
}
