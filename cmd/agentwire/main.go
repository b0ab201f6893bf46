// Command agentwire is the command line over agentwire's contract packages and relay
// (spec: cli.md). It never re-implements a rule: every verdict comes from a contract package.
//
// Exit codes: 0 success or valid; 1 a contract refusal; 2 a usage error (one line on stderr
// starting with "agentwire: ").
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
