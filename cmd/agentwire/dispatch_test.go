package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestDispatchMCPUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"group without subcommand", []string{"dispatch"}, "agentwire: dispatch needs a subcommand (see 'agentwire dispatch --help')\n"},
		{"all interfaces", []string{"dispatch", "mcp", "--http", ":7421"},
			"agentwire: --http :7421 is not a loopback address (localhost, 127.0.0.0/8 or [::1] with a port); --allow-remote serves other addresses\n"},
		{"non-loopback address", []string{"dispatch", "mcp", "--http", "192.0.2.1:7421"},
			"agentwire: --http 192.0.2.1:7421 is not a loopback address (localhost, 127.0.0.0/8 or [::1] with a port); --allow-remote serves other addresses\n"},
		{"allow-remote without http", []string{"dispatch", "mcp", "--allow-remote"}, "agentwire: --allow-remote applies only with --http ADDR\n"},
		{"arguments", []string{"dispatch", "mcp", "x"}, "agentwire: agentwire dispatch mcp takes 0 argument(s), got 1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", tc.args...)
			if code != 2 || errs != tc.err {
				t.Fatalf("exit %d stderr %q, want 2 %q", code, errs, tc.err)
			}
		})
	}
}

// TestDispatchMCPStdioDisabled: with no Dispatch configuration the stdio server starts, says
// so on stderr, lists the twenty tools and answers a call with the disabled message; closing
// stdin ends it with exit 0.
func TestDispatchMCPStdioDisabled(t *testing.T) {
	t.Setenv("DISPATCH_URL", "")
	t.Setenv("DISPATCH_TOKEN", "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"dispatch", "mcp"}, inR, outW, &errb)
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	send := func(msg string, answer bool) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !answer {
			return nil
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil || v["result"] == nil {
			t.Fatalf("answer %s", line)
		}
		return v["result"].(map[string]any)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, true)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	if tools := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, true)["tools"].([]any); len(tools) != 20 {
		t.Fatalf("%d tools", len(tools))
	}
	res := send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"dispatch_whoami","arguments":{}}}`, true)
	text := res["content"].([]any)[0].(map[string]any)["text"]
	if res["isError"] != true || text != "Dispatch is disabled; resolve both DISPATCH_URL and DISPATCH_TOKEN" {
		t.Fatalf("%v", res)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "agentwire dispatch mcp: Dispatch is disabled; resolve both DISPATCH_URL and DISPATCH_TOKEN; every call will say so\n"; !strings.HasPrefix(errb.String(), want) {
		t.Fatalf("stderr %q", errb.String())
	}
}
