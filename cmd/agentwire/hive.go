package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/hive/registry"
)

func init() { register(newHiveCmd) }

// newHiveCmd is the `hive` group (cli.md): `hive types` and `hive validate --type TYPE [FILE]`.
func newHiveCmd() *cobra.Command {
	cmd := groupCmd("hive", "Decode and validate lean-ctx hive and core contracts")
	cmd.AddCommand(newHiveTypesCmd(), newHiveValidateCmd())
	return cmd
}

func newHiveTypesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "types",
		Short: "List the TYPE names accepted by 'hive validate --type'",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			for _, name := range registry.Names() {
				fmt.Fprintln(out, name)
			}
			return nil
		},
	}
}

func newHiveValidateCmd() *cobra.Command {
	var typeName string
	cmd := &cobra.Command{
		Use:   "validate --type TYPE [FILE]",
		Short: "Decode and validate one document per non-blank line",
		Long: "Each non-blank line of FILE (or standard input for - or no FILE) is one JSON document of\n" +
			"TYPE. It is decoded strictly and then validated; every invalid line prints\n" +
			"`line N: <message>` and the exit code is 1. TYPE names: see 'agentwire hive types'.\n" +
			"bus-frame validates a frame as its receiving side would: client-to-service frames\n" +
			"strictly, service-to-client frames leniently.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if typeName == "" {
				return usageError("hive validate needs --type TYPE (see 'agentwire hive types')")
			}
			t, ok := registry.Lookup(typeName)
			if !ok {
				return usageError("unknown TYPE %q (known: %s)", typeName, strings.Join(registry.Names(), ", "))
			}
			in, err := openInput(cmd, args)
			if err != nil {
				return err
			}
			defer in.Close()
			out := cmd.OutOrStdout()
			refused := false
			err = forEachLine(in, func(n int, line []byte) error {
				if _, err := t.Check(line); err != nil {
					refused = true
					fmt.Fprintf(out, "line %d: %s\n", n, err.Error())
				}
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
	cmd.Flags().StringVar(&typeName, "type", "", "the contract TYPE of every line (see 'agentwire hive types')")
	return cmd
}
