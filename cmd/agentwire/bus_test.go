package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/relay"
)

const cliChannel = "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"

// syncWriter is a goroutine-safe output buffer for a command running in the background.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// background runs the CLI in a goroutine; wait returns its exit code.
func background(args ...string) (out, errs *syncWriter, wait func() int) {
	out, errs = &syncWriter{}, &syncWriter{}
	done := make(chan int, 1)
	go func() { done <- run(args, strings.NewReader(""), out, errs) }()
	return out, errs, func() int {
		select {
		case code := <-done:
			return code
		case <-time.After(20 * time.Second):
			return -1
		}
	}
}

func waitLines(t *testing.T, w *syncWriter, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
		if w.String() != "" && len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d lines, have %q", n, w.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBusSendAndListen(t *testing.T) {
	url, _, _ := startServe(t, serveOpts(filepath.Join(t.TempDir(), "data")))

	code, out, errs := runCLI(t, "", "bus", "send", "--url", url, "--channel", cliChannel, "--type", "question",
		"--text", "Which retry budget does payments use?", "--from", "claude-3e", "--client-msg-id", "01JBMSG7Q3")
	var st hive.MessageStoredV1
	if code != 0 || errs != "" || st.UnmarshalJSON([]byte(strings.TrimSpace(out))) != nil || st.Seq != 1 || st.ClientMsgID != "01JBMSG7Q3" {
		t.Fatalf("send: exit %d out %q err %q", code, out, errs)
	}
	// A resend prints the same record.
	if code, again, _ := runCLI(t, "", "bus", "send", "--url", url, "--channel", cliChannel, "--type", "question",
		"--text", "Which retry budget does payments use?", "--from", "claude-3e", "--client-msg-id", "01JBMSG7Q3"); code != 0 || again != out {
		t.Fatalf("resend: %d %q", code, again)
	}

	// listen replays after cursor 0, then prints live deliveries and answers with read receipts.
	lout, lerr, wait := background("bus", "listen", "--url", url, "--channel", cliChannel, "--agent", "codex-85",
		"--cursor", "0", "--count", "2", "--receipts", "read")
	first := waitLines(t, lout, 1)
	if !strings.HasPrefix(first[0], `{"t":"message.deliver","gid":"`+st.GID+`","seq":1,`) {
		t.Fatalf("replayed %q", first[0])
	}
	code, out, _ = runCLI(t, "", "bus", "send", "--url", url, "--channel", cliChannel, "--type", "finding", "--text", "live one")
	if code != 0 {
		t.Fatalf("second send %d %q", code, out)
	}
	if code := wait(); code != 0 {
		t.Fatalf("listen exit %d, stderr %q", code, lerr.String())
	}
	lines := waitLines(t, lout, 2)
	if len(lines) != 2 || !strings.Contains(lines[1], `"seq":2,`) || !strings.Contains(lines[1], `"text":"live one"`) {
		t.Fatalf("listen printed %q", lines)
	}
	var f hive.MessageDeliveryV1
	if err := f.UnmarshalJSON([]byte(strings.Replace(lines[1], `{"t":"message.deliver",`, `{`, 1))); err != nil || f.Validate() != nil {
		t.Fatalf("delivery %q: %v", lines[1], err)
	}

	// The receipts were stored: a read receipt again is a no-op, and a receipt by an agent that
	// no socket announced within 24 h is refused.
	code, out, _ = runCLI(t, "", "bus", "send", "--url", url, "--channel", cliChannel, "--type", "answer", "--text", "x",
		"--reply-to", "nope")
	if code != 1 || out != "reply_to names no message\n" {
		t.Fatalf("refused send: %d %q", code, out)
	}
}

func TestBusCLIUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no network", []string{"bus", "send", "--type", "question", "--text", "x"}, 2, ""},
		{"both networks", []string{"bus", "send", "--channel", cliChannel, "--swarm", "s", "--type", "question", "--text", "x"}, 2, ""},
		{"unknown type", []string{"bus", "send", "--channel", cliChannel, "--type", "poll", "--text", "x"}, 2, ""},
		{"bad deadline", []string{"bus", "send", "--channel", cliChannel, "--type", "question", "--text", "x", "--deadline", "tomorrow"}, 2, ""},
		{"invalid message", []string{"bus", "send", "--channel", cliChannel, "--type", "answer", "--text", "x"}, 1, "an answer replies to a question\n"},
		{"blank text", []string{"bus", "send", "--channel", cliChannel, "--type", "finding", "--text", " "}, 1, "text must not be empty\n"},
		{"bad channel", []string{"bus", "send", "--channel", "org:Acme/general", "--type", "finding", "--text", "x"}, 1, "channel must be org:<org>/vault:<vault_id>/<name>\n"},
		{"listen bad channel", []string{"bus", "listen", "--channel", "general"}, 2, ""},
		{"listen bad receipts", []string{"bus", "listen", "--channel", cliChannel, "--receipts", "seen"}, 2, ""},
		{"bare group", []string{"bus"}, 2, ""},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, "", c.args...)
		if code != c.code || out != c.out || (c.code == 2 && !strings.HasPrefix(errs, "agentwire: ")) {
			t.Errorf("%s: exit %d out %q err %q", c.name, code, out, errs)
		}
	}
}

// TestBusListenInstanceMismatch: in auth mode the hello's instance_id must be the token's; when
// the relay refuses it for that, bus listen says which flag sets it (exit 1, one line).
func TestBusListenInstanceMismatch(t *testing.T) {
	dir := t.TempDir()
	authPath := filepath.Join(dir, "auth.json")
	entry := `[{"token_sha256":"` + relay.HashToken("tok") + `","org":"org_acme","instance_id":"inst_1","instance_label":"CI","rights":["admin"]}]`
	if err := os.WriteFile(authPath, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	o := serveOpts(filepath.Join(dir, "data"))
	o.auth = authPath
	url, _, _ := startServe(t, o)
	tests := []struct {
		name string
		args []string
		env  string
		sent string
	}{
		{"default instance", nil, "", "local"},
		{"--instance", []string{"--instance", "inst_2"}, "", "inst_2"},
		{"AGENTWIRE_INSTANCE", nil, "inst_3", "inst_3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTWIRE_INSTANCE", tc.env)
			args := append([]string{"bus", "listen", "--url", url, "--token", "tok", "--channel", cliChannel}, tc.args...)
			code, out, errs := runCLI(t, "", args...)
			want := `agentwire: the relay refused the hello: instance_id is not the instance of the token; ` +
				`--instance (or $AGENTWIRE_INSTANCE) must be the token's instance_id, got "` + tc.sent + `"` + "\n"
			if code != 1 || out != "" || errs != want {
				t.Fatalf("exit %d stdout %q stderr %q\nwant %q", code, out, errs, want)
			}
		})
	}
	// The token's instance is accepted.
	if code, out, errs := runCLI(t, "", "bus", "send", "--url", url, "--token", "tok", "--channel", cliChannel, "--type", "finding", "--text", "hi"); code != 0 {
		t.Fatalf("send: %d %q %q", code, out, errs)
	}
	code, out, errs := runCLI(t, "", "bus", "listen", "--url", url, "--token", "tok", "--channel", cliChannel, "--instance", "inst_1", "--cursor", "0", "--count", "1")
	if code != 0 || errs != "" || !strings.Contains(out, `"text":"hi"`) {
		t.Fatalf("listen as the token's instance: exit %d out %q err %q", code, out, errs)
	}
}
