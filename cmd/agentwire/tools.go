package main

import (
	"errors"
	"io"
	"strings"

	"github.com/agentwire/agentwire/dispatch"
	"github.com/agentwire/agentwire/jsonvalue"
	"github.com/agentwire/agentwire/toolspec"
	"github.com/spf13/cobra"
)

// The `tools` command group (cli.md "tools"): the Dispatch tool suite of dispatch-tools.md.

func init() { register(newToolsCmd) }

func newToolsCmd() *cobra.Command {
	cmd := groupCmd("tools", "Dispatch tool suite: list the tools, print their JSON Schema, check a call")
	cmd.AddCommand(newToolsListCmd(), newToolsSchemaCmd(), newToolsCheckCmd())
	return cmd
}

func newToolsListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Print the twenty Dispatch tool names, one per line, in suite order",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			var b strings.Builder
			for _, name := range dispatch.Names() {
				b.WriteString(name)
				b.WriteByte('\n')
			}
			_, err := io.WriteString(cmd.OutOrStdout(), b.String())
			return err
		},
	}
}

func lookupTool(name string) (*toolspec.Spec, error) {
	s, ok := dispatch.Lookup(name)
	if !ok {
		return nil, usageError("unknown tool %q (see 'agentwire tools list')", name)
	}
	return s, nil
}

func newToolsSchemaCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "schema NAME | --all",
		Short: "Print a tool's parameter JSON Schema (2020-12), indented; --all: every tool keyed by name",
		Args:  maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v *jsonvalue.Object
			switch {
			case all && len(args) > 0:
				return usageError("tools schema takes a tool NAME or --all, not both")
			case all:
				v = jsonvalue.NewObject(20)
				for _, s := range dispatch.Specs() {
					v.Set(s.Name(), s.Schema())
				}
			case len(args) == 1:
				s, err := lookupTool(args[0])
				if err != nil {
					return err
				}
				v = s.Schema()
			default:
				return usageError("tools schema needs a tool NAME or --all")
			}
			out := jsonvalue.AppendIndented(nil, v, "  ", 0)
			out = append(out, '\n')
			_, err := cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "print one object holding every tool's schema, in suite order")
	return cmd
}

func newToolsCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check NAME [ARGS_JSON | -]",
		Short: "Run the strict parse of a tool call: silent exit 0 when valid, the refusal text and exit 1 otherwise",
		Long: "Runs the strict parse of a tool call, including the tool's cross-field rule (not the\n" +
			"executor's checks). ARGS_JSON is the argument object as JSON text; '-' or no argument reads it\n" +
			"from standard input. Empty input is an absent payload ({}). Malformed JSON is a usage error (exit 2).",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError("tools check takes NAME and an optional ARGS_JSON, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := lookupTool(args[0])
			if err != nil {
				return err
			}
			var text []byte
			if len(args) == 2 && args[1] != "-" {
				text = []byte(args[1])
			} else {
				text, err = io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return usageError("read error: %v", err)
				}
			}
			_, problems, err := s.ParseJSON(text, toolspec.Strict)
			if err != nil {
				var jerr *jsonvalue.JSONValidationError
				if errors.As(err, &jerr) {
					return usageError("%s", jerr.Message)
				}
				return usageError("%v", err)
			}
			if len(problems) == 0 {
				return nil
			}
			if _, err := io.WriteString(cmd.OutOrStdout(), s.Refusal(problems)+"\n"); err != nil {
				return err
			}
			return errRefused
		},
	}
}
