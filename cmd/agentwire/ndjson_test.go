package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// windows joins lines as a Windows editor writes them: each ends with CRLF.
func windows(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

// TestNDJSONBlankLinesWithCR: every NDJSON reader of the CLI takes a line of nothing but spaces,
// tabs and a CR (a blank line of a CRLF file) as blank: skipped, never reported, but counted
// in the physical line numbers (cli.md). The relay clients send every event and envelope of a
// CRLF file, not the part before its first blank line.
func TestNDJSONBlankLinesWithCR(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))
	withKey := func(extra string) string { return strings.TrimSuffix(cliValidEnvelope, "}") + "," + extra + "}" }
	unknownMsg := strings.Replace(evDelta, `"messageId":"m"`, `"messageId":"x"`, 1)
	tests := []struct {
		name string
		args []string
		in   string
		code int
		out  string
		err  string
	}{
		{"events validate", []string{"events", "validate"},
			windows(evStart, "", " \t", evMsg, "\t", `{"protocolVersion":2}`), 1,
			"line 6: Unsupported Agent event protocol version: 2.\n", ""},
		{"events reduce refusal", []string{"events", "reduce"},
			windows(evStart, "", " \t", evMsg, "\t", unknownMsg), 1,
			"", "line 6: Message delta has no started message.\n"},
		{"events reduce", []string{"events", "reduce", "--compact"},
			windows(evStart, "", evMsg, "  ", evDelta, "", evDone, ""), 0,
			reducedCompact(t, evStart, evMsg, evDelta, evDone), ""},
		{"events send", []string{"events", "send", "--url", url},
			windows(evStart, "", evMsg, " \t", evDelta, "", evDone), 0,
			"run r: accepted 4, duplicates 0, lastLogicalSequence 4, status completed\n", ""},
		{"hive validate", []string{"hive", "validate", "--type", "message-receipt"},
			windows(hiveReceiptOK, "", " ", hiveReceiptOK, "\t", `{"gid":"","by":"b","state":"read"}`), 1,
			"line 6: gid must not be empty\n", ""},
		{"envelope validate", []string{"envelope", "validate"},
			windows(cliValidEnvelope, "", " \t ", cliValidEnvelope, "", withKey(`"in_reply_to":""`)), 1,
			"line 6: in_reply_to must not be empty\n", ""},
		{"notify publish", []string{"notify", "publish", "--url", url},
			windows(cliEnvelope("notifications.github.acme.crlf.pr.1", "c-1", "github.c-1"), "", "\t",
				cliEnvelope("notifications.github.acme.crlf.pr.2", "c-2", "github.c-2")), 0,
			"{\"duplicate\":false,\"seq\":1}\n{\"duplicate\":false,\"seq\":2}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.in, tc.args...)
			if code != tc.code || out != tc.out || errs != tc.err {
				t.Fatalf("exit %d (want %d)\nstdout %q\n  want %q\nstderr %q\n  want %q", code, tc.code, out, tc.out, errs, tc.err)
			}
		})
	}
}

func reducedCompact(t *testing.T, lines ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, strings.Join(lines, "\n"), "events", "reduce", "--compact")
	if code != 0 {
		t.Fatalf("reduce: %d %s", code, errs)
	}
	return out
}

func TestIsBlank(t *testing.T) {
	for _, tc := range []struct {
		line  string
		blank bool
	}{
		{"", true}, {" ", true}, {"\t", true}, {"\r", true}, {" \t\r", true}, {"\t \r", true},
		{"\r\r", true}, {"x", false}, {"x\r", false}, {" x ", false}, {"\r x", false}, {"\v", false}, {"\f", false},
	} {
		if got := isBlank([]byte(tc.line)); got != tc.blank {
			t.Errorf("isBlank(%q) = %v, want %v", tc.line, got, tc.blank)
		}
	}
}
