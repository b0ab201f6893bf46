package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentwire/agentwire/internal/gen"
	"github.com/spf13/cobra"
)

// The `schema` command (cli.md "schema and serve"): the generated JSON Schema and TypeScript
// files of every contract package (envelope.md §6), rendered by package internal/gen exactly as
// agentwire-gen renders them.

func init() { register(newSchemaCmd) }

func newSchemaCmd() *cobra.Command {
	var out string
	var check bool
	cmd := &cobra.Command{
		Use:   "schema [--out DIR] [--check]",
		Short: "Write the generated JSON Schema (schema/) and TypeScript (ts/) files; --check compares instead",
		Long: "Renders schema/<contract>.schema.json, schema/dispatch/<tool>.schema.json and " +
			"ts/<contract>.gen.ts under DIR (default: the current directory), removing generated files " +
			"nothing renders any more. Only files that carry the generated-file header (\"" + gen.Header + "\": " +
			"a TypeScript file's first line, a schema's leading $comment) are replaced or removed: a file " +
			"without it at a path that would be written is a usage error naming it, and nothing is written; " +
			"one at any other path is left alone. With --check nothing is " +
			"written: each generated file that differs from a fresh render, is missing, or is no longer " +
			"rendered is printed as \"<path>: differs|missing|stale\", and the exit code is 1 if any is.",
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := gen.Render()
			if err != nil {
				return err
			}
			if !check {
				if err := gen.Write(out, files); err != nil {
					var fe *gen.ForeignFileError
					if errors.As(err, &fe) {
						return usageError("refusing to overwrite %s: it lacks the generated-file header (%s); nothing was written",
							filepath.Join(out, filepath.FromSlash(fe.Path)), gen.Header)
					}
					return usageError("cannot write the generated files: %v", err)
				}
				return nil
			}
			diffs, err := gen.Check(out, files)
			if err != nil {
				return usageError("cannot read the generated files: %v", err)
			}
			for _, d := range diffs {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", d.Path, d.Reason); err != nil {
					return err
				}
			}
			if len(diffs) > 0 {
				return errRefused
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", ".", "directory under which schema/ and ts/ are written or checked")
	cmd.Flags().BoolVar(&check, "check", false, "compare with the files under DIR instead of writing; exit 1 on any difference")
	return cmd
}
