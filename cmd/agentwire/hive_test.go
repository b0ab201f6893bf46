package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/hive/registry"
)

const (
	hiveReceiptOK = `{"gid":"g-1","by":"codex-85","state":"read"}`
	hiveD         = `{"gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"found"},"trust":"untrusted","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"}`
)

func TestHiveTypes(t *testing.T) {
	code, out, errs := runCLI(t, "", "hive", "types")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if out != strings.Join(registry.Names(), "\n")+"\n" {
		t.Fatalf("stdout %q", out)
	}
	// cli.md names these TYPEs explicitly.
	for _, name := range []string{"agent-message", "message-delivery", "message-receipt", "message-stored", "message-status", "message-list", "task-event", "task-actor", "bus-frame", "sealed-blob", "error-body", "evidence-ref", "experiment-assignment", "evidence-gap-opened", "evidence-gap-closed", "money", "policy-classification", "savings-observation", "savings-receipt", "context-balance", "usage-breakdown"} {
		if !strings.Contains("\n"+out, "\n"+name+"\n") {
			t.Errorf("hive types lacks %s", name)
		}
	}
	if code, _, errs := runCLI(t, "", "hive", "types", "x"); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
		t.Fatalf("extra argument: exit %d %q", code, errs)
	}
}

func TestHiveValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "receipts.ndjson")
	if err := os.WriteFile(file, []byte(hiveReceiptOK+"\n"+`{"gid":"","by":"b","state":"read"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := `{"gid":"g-9","seq":3,"network":{"kind":"swarm","swarm_id":"sw-1"},"type":"finding","from":{"kind":"swarm","handle":"quiet-heron","reputation":1},"thread_id":"g-9","body":{"text":"` + strings.Repeat("x", 100000) + `"},"trust":"team","server_time":"2026-10-20T12:00:00Z","expires_at":"2026-11-20T12:00:00Z"}`
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
		err   string
	}{
		{"all valid", []string{"hive", "validate", "--type", "message-receipt"}, hiveReceiptOK + "\n" + hiveReceiptOK, 0, "", ""},
		{"empty input", []string{"hive", "validate", "--type", "agent-message"}, "", 0, "", ""},
		{"physical line numbers, blanks skipped, CRLF", []string{"hive", "validate", "--type", "message-receipt", "-"},
			hiveReceiptOK + "\r\n\n   \t\n" + `{"gid":"g-1","by":"codex-85","state":"seen"}` + "\r\n" + `{"gid":"g-1","by":"codex-85","state":"read","at":"x"}` + "\n" + `{"gid":"g-1","gid":"g-2"}`,
			1, "line 4: unknown receipt state\nline 5: MessageReceiptV1.at is not a known member.\nline 6: MessageReceiptV1 contains duplicate member name \"gid\".\n", ""},
		{"file argument", []string{"hive", "validate", "--type", "message-receipt", file}, "", 1, "line 2: gid must not be empty\n", ""},
		{"lines longer than 64 KiB", []string{"hive", "validate", "--type", "message-delivery"}, hiveD + "\n" + long + "\n", 1, "line 2: Swarm content is always untrusted\n", ""},
		{"decode error message", []string{"hive", "validate", "--type", "agent-message"}, `{"client_msg_id":"x","network":{"kind":"org","channel":"c"},"from":"a","body":{"text":"t"}}`, 1, "line 1: AgentMessageV1.type is missing.\n", ""},
		{"timestamp decode message", []string{"hive", "validate", "--type", "message-status"}, `{"gid":"g","client_msg_id":"c","by":"b","state":"read","server_time":"2026-02-29T00:00:00Z"}`, 1, "line 1: UtcTimestamp contains an invalid calendar or clock value\n", ""},
		{"bus-frame client to service is strict", []string{"hive", "validate", "--type", "bus-frame"}, `{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":1,"x":1}`, 1, "line 1: BusFrameV1.x is not a known member.\n", ""},
		{"bus-frame service to client is lenient", []string{"hive", "validate", "--type", "bus-frame"}, `{"t":"message.deliver","x":1,` + hiveD[1:], 0, "", ""},
		{"bus-frame validates", []string{"hive", "validate", "--type", "bus-frame"}, `{"t":"ack","channel":"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g","seq":0}`, 1, "line 1: seq starts at 1\n", ""},
		{"money", []string{"hive", "validate", "--type", "money"}, `{"currency":"EUR","coefficient":170141183460469231731687303715884105728,"scale":2}`, 1, "line 1: coefficient is outside the i128 range\n", ""},
		{"evidence gap", []string{"hive", "validate", "--type", "evidence-gap-opened"}, `{"gap_id":"g"}`, 1, "line 1: EvidenceGapOpenedV1.tenant_id is missing.\n", ""},
		{"unknown TYPE", []string{"hive", "validate", "--type", "nope"}, "", 2, "", "agentwire: unknown TYPE \"nope\""},
		{"missing --type", []string{"hive", "validate"}, "", 2, "", "agentwire: hive validate needs --type"},
		{"unreadable file", []string{"hive", "validate", "--type", "money", filepath.Join(dir, "missing")}, "", 2, "", "agentwire: cannot read"},
		{"two files", []string{"hive", "validate", "--type", "money", "a", "b"}, "", 2, "", "agentwire: "},
		{"bare group", []string{"hive"}, "", 2, "", "agentwire: "},
		{"unknown subcommand", []string{"hive", "frob"}, "", 2, "", "agentwire: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code || out != tc.out {
				t.Fatalf("exit %d stdout %q stderr %q; want %d %q", code, out, errs, tc.code, tc.out)
			}
			if tc.err == "" && errs != "" || !strings.HasPrefix(errs, tc.err) {
				t.Fatalf("stderr %q, want prefix %q", errs, tc.err)
			}
			if tc.err != "" && strings.Count(errs, "\n") != 1 {
				t.Fatalf("usage errors are one line: %q", errs)
			}
		})
	}
}
