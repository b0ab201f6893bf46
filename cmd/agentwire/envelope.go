package main

import (
	"bufio"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/envelope"
	"github.com/spf13/cobra"
)

// The `envelope` and `subject` command groups (cli.md "envelope and subjects"): the Envoy
// envelope, its subjects and dedupe rule of envelope.md.

func init() {
	register(newEnvelopeCmd)
	register(newSubjectCmd)
}

func newEnvelopeCmd() *cobra.Command {
	cmd := groupCmd("envelope", "Envoy envelopes: validate NDJSON envelopes")
	cmd.AddCommand(newEnvelopeValidateCmd())
	return cmd
}

func newEnvelopeValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate [FILE|-]",
		Short: "Decode each non-blank line (wire checks, then struct checks); print 'line N: <problem>' per problem",
		Long: "Reads NDJSON envelopes from FILE or standard input. Each non-blank line goes through\n" +
			"the envelope decoder: the wire checks for present-but-empty optional strings,\n" +
			"then the struct checks. Every problem of every invalid line is printed as\n" +
			"'line N: <problem>', in order; the exit status is 1 if any line has a problem.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			out := bufio.NewWriter(cmd.OutOrStdout())
			invalid := false
			err = forEachLine(in, func(n int, line []byte) error {
				_, problems := envelope.Decode(line)
				for _, p := range problems {
					invalid = true
					out.WriteString("line ")
					out.WriteString(strconv.Itoa(n))
					out.WriteString(": ")
					out.WriteString(p.Message)
					out.WriteByte('\n')
				}
				return nil
			})
			if ferr := out.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			if invalid {
				return errRefused
			}
			return nil
		},
	}
}

func newSubjectCmd() *cobra.Command {
	var b strings.Builder
	b.WriteString("Prints the NATS subject a subject helper builds from its arguments, and LF.\n")
	b.WriteString("KIND is the kebab-case of the Go helper name without the Subject suffix:\n\n")
	for _, h := range envelope.SubjectHelpers() {
		b.WriteString("  ")
		b.WriteString(h.Kind)
		for _, p := range h.Params {
			b.WriteString(" ")
			b.WriteString(strings.ToUpper(p))
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nArguments are taken literally (flags are not parsed after KIND); a '--' before KIND is dropped.")
	return &cobra.Command{
		Use:   "subject KIND ARG...",
		Short: "Print the subject a subject helper builds (e.g. subject github-push acme widgets branch feat/foo)",
		Long:  b.String(),
		// Values are data: "-x" is a segment to sanitize, not a flag.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return usageError("subject needs a KIND (see 'agentwire subject --help')")
			}
			h, ok := envelope.LookupSubjectHelper(args[0])
			if !ok {
				return usageError("unknown subject KIND %q (see 'agentwire subject --help')", args[0])
			}
			if got := len(args) - 1; got != len(h.Params) {
				return usageError("subject %s takes %d argument(s) (%s), got %d",
					h.Kind, len(h.Params), strings.ToUpper(strings.Join(h.Params, " ")), got)
			}
			_, err := cmd.OutOrStdout().Write([]byte(h.Build(args[1:]...) + "\n"))
			return err
		},
	}
}
