// Command agentwire-gen renders the generated contract artefacts (envelope.md §6): per contract
// package, schema/<contract>.schema.json (JSON Schema 2020-12) and ts/<contract>.gen.ts
// (TypeScript declarations), plus the Dispatch suite's per-tool parameter schemas under
// schema/dispatch/. `go generate ./...` runs it (see schema/gen.go).
//
// Usage:
//
//	agentwire-gen [-root DIR] [-check]
//
// Without -check it writes the files under the repository root (default: the nearest directory
// above the working directory that holds go.mod) and removes generated files nothing renders
// any more. With -check it renders in memory, compares
// byte for byte with the files on disk, prints each differing path (with why: differs, missing,
// stale) and exits 1 if any differs; CI runs it. Exit 2 is a usage or I/O error.
//
// The rendering lives in package internal/gen, which also documents how a contract registers.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentwire/agentwire/internal/gen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentwire-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "repository root (default: the nearest parent directory holding go.mod)")
	check := fs.Bool("check", false, "compare with the files on disk instead of writing; exit 1 on any difference")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentwire-gen: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	dir := *root
	if dir == "" {
		var err error
		if dir, err = moduleRoot(); err != nil {
			fmt.Fprintf(stderr, "agentwire-gen: %v\n", err)
			return 2
		}
	}
	files, err := gen.Render()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if !*check {
		if err := gen.Write(dir, files); err != nil {
			fmt.Fprintf(stderr, "agentwire-gen: %v\n", err)
			return 2
		}
		return 0
	}
	diffs, err := gen.Check(dir, files)
	if err != nil {
		fmt.Fprintf(stderr, "agentwire-gen: %v\n", err)
		return 2
	}
	for _, d := range diffs {
		fmt.Fprintf(stdout, "%s: %s\n", d.Path, d.Reason)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(stderr, "agentwire-gen: %d generated file(s) out of date; run go generate ./...\n", len(diffs))
		return 1
	}
	return 0
}

// moduleRoot is the nearest directory at or above the working directory that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; use -root")
		}
		dir = parent
	}
}
