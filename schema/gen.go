// Package schema holds no code: its directory holds the generated JSON Schema files of every
// contract package (<contract>.schema.json, and dispatch/<tool>.schema.json for the Dispatch
// tool parameters), rendered with their TypeScript twins under ts/ by cmd/agentwire-gen from the
// Go declarations (envelope.md §6). Do not edit the files by hand; run `go generate ./...`.
package schema

//go:generate go run ../cmd/agentwire-gen
