package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// commandBuilders holds one constructor per command group; each group's file registers itself
// in an init function so groups stay in their own files.
var commandBuilders []func() *cobra.Command

func register(build func() *cobra.Command) { commandBuilders = append(commandBuilders, build) }

// exitError carries an exit code out of a command. A non-empty msg is a usage error printed as
// "agentwire: <msg>"; an empty one means the command already wrote its output (a refusal).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError reports a usage error (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

// errRefused is exit 1 after the command has printed its verdict lines.
var errRefused = &exitError{code: 1}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "agentwire",
		Short:         "Agent wire contracts: validate, reduce, check and relay agent events, messages and envelopes",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError("%v", err) })
	for _, build := range commandBuilders {
		root.AddCommand(build())
	}
	root.SetHelpCommand(newHelpCmd())
	return root
}

// newHelpCmd replaces cobra's help command, which prints the root help and exits 0 for a topic
// it does not know: here that is a usage error (exit 2) like any unknown command.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return usageError("unknown help topic %q (see 'agentwire --help')", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// run executes the CLI with the given arguments and streams and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext is run under ctx: the commands that wait on a relay stop when it ends.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "agentwire: %s\n", oneLine(ee.msg))
		}
		return ee.code
	}
	// Cobra's own errors (unknown command, bad flag, wrong argument count) are usage errors.
	fmt.Fprintf(stderr, "agentwire: %s\n", oneLine(err.Error()))
	return 2
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// groupCmd returns a parent command that only holds subcommands: bare or with an unknown
// subcommand it is a usage error.
func groupCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError("%s needs a subcommand (see 'agentwire %s --help')", use, use)
		},
	}
}

// maxArgs is cobra.MaximumNArgs with a usage-error result.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageError("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with a usage-error result.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// nonEmpty refuses an id flag given as the empty string: `--run-id ""` (an unset variable in a
// script, say) is a usage error, not the default or an absent value.
func nonEmpty(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed && f.Value.String() == "" {
			return usageError("--%s must not be empty", name)
		}
	}
	return nil
}

// openInput opens FILE, or standard input for "-" or no argument. An unreadable file is a usage
// error.
func openInput(cmd *cobra.Command, args []string) (io.ReadCloser, error) {
	if len(args) == 0 || args[0] == "-" {
		return io.NopCloser(cmd.InOrStdin()), nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, usageError("cannot read %s: %v", args[0], errors.Unwrap(err))
	}
	return f, nil
}

// forEachLine calls fn for every non-blank line of r (cli.md: split on LF, physical 1-based line
// numbers counting blank lines, blank = empty or only spaces/tabs, with a CR of a CRLF line
// ending also taken as white space (isBlank), lines of any length). The
// line passed to fn excludes the LF and is only valid during the call. fn returning a non-nil
// error stops the walk with that error.
func forEachLine(r io.Reader, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var long []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			continue
		}
		if err != nil && err != io.EOF {
			return usageError("read error: %v", err)
		}
		line := chunk
		if long != nil {
			long = append(long, chunk...)
			line = long
		}
		if len(line) > 0 || err == nil {
			n++
			line = bytes.TrimSuffix(line, []byte{'\n'})
			if !isBlank(line) {
				if ferr := fn(n, line); ferr != nil {
					return ferr
				}
			}
		}
		long = long[:0]
		if long != nil && cap(long) > 1<<24 {
			long = nil
		}
		if err == io.EOF {
			return nil
		}
	}
}

// isBlank reports whether a line (its LF removed) holds nothing but spaces, tabs and CRs. cli.md
// calls a line of spaces and tabs blank and a trailing CR white space: so a blank line of a CRLF
// file ("\r", " \t\r") is blank too. The CR is JSON white space (events.md §3.4) like the
// others, so this is exactly "a line with no JSON text".
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// isTerminal reports whether w is a character device (progress output goes only to terminals).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
