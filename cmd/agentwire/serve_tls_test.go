//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentwire/agentwire/internal/testcerts"
	"github.com/agentwire/agentwire/relay"
)

// The relay run as a team would: a built `agentwire serve` over HTTPS with an auth file.
// The CLI clients reach it with https:// URLs and --ca; an expired token is 401; a new
// certificate pair is served to new connections after SIGHUP while an open stream goes on; a
// token removed from the file (no signal: the relay sees the file change) ends its stream
// within 5 s and leaves another token's stream running; a broken file on SIGHUP changes
// nothing.
func TestServeTLSAndReloads(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the agentwire binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentwire")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ca, err := testcerts.NewCA("agentwire test CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := ca.WriteServer(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	entry := func(token string, extra string, rights ...string) string {
		return fmt.Sprintf(`{"token_sha256":%q,"org":"acme","instance_id":"i-%s","instance_label":"l"%s,"rights":["%s"]}`,
			relay.HashToken(token), token, extra, strings.Join(rights, `","`))
	}
	alice := entry("alice", "", "runs.read", "runs.write", "bus.relay", "notify.publish")
	bob := entry("bob", "", "runs.read", "runs.write")
	old := entry("old", `,"expires_at":"2020-01-01T00:00:00Z"`, "runs.read")
	authPath := filepath.Join(dir, "auth.json")
	writeAuth := func(text string) {
		t.Helper()
		// Write and rename, as an editor or a deploy tool does.
		tmp := authPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, authPath); err != nil {
			t.Fatal(err)
		}
	}
	writeAuth("[" + alice + "," + bob + "," + old + "]")

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"),
		"--auth", authPath, "--tls-cert", certFile, "--tls-key", keyFile, "--log-format", "json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v; logs %s", err, logs.String())
	}
	url := regexp.MustCompile(`https://[0-9.:]+`).FindString(line)
	if url == "" {
		t.Fatalf("no https URL in %q", line)
	}
	clientTLS := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	get := func(token, path string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	// CLI clients over HTTPS and WSS, trusting the CA with --ca.
	runFile := filepath.Join(dir, "run.ndjson")
	if code, out, errs := runCLI(t, "", "events", "synth", "--events", "6", "--seed", "3", "--run-id", "done"); code != 0 {
		t.Fatalf("synth: %d %s", code, errs)
	} else if err := os.WriteFile(runFile, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--url", url, "--ca", caFile, "--token", "alice"}
	if code, _, errs := runCLI(t, "", append([]string{"events", "send", runFile}, tlsArgs...)...); code != 0 {
		t.Fatalf("events send over HTTPS: %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, "", append([]string{"events", "tail", "done"}, tlsArgs...)...); code != 0 || strings.Count(out, "\n") < 6 {
		t.Fatalf("events tail over HTTPS: %d %q %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", append([]string{"bus", "send", "--channel", cliChannel, "--from", "codex", "--type", "finding",
		"--text", "over TLS"}, tlsArgs...)...); code != 0 {
		t.Fatalf("bus send over HTTPS: %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, "", append([]string{"bus", "listen", "--channel", cliChannel, "--cursor", "0", "--count", "1",
		"--instance", "i-alice"}, tlsArgs...)...); code != 0 || !strings.Contains(out, "over TLS") {
		t.Fatalf("bus listen over WSS: %d %q %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "events", "send", runFile, "--url", url, "--token", "alice"); code == 0 {
		t.Fatalf("a client without --ca was served: %s", errs)
	}
	if code := get("old", "/v1/runs"); code != 401 {
		t.Fatalf("expired token: %d", code)
	}

	// Two open streams on a running run: alice's and bob's.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	post := func(token string, n int) {
		t.Helper()
		c := &relay.Client{BaseURL: url, Token: token, HTTP: hc}
		if _, err := c.Append(ctx, "live", relay.MediaNDJSON, liveEvent(n)); err != nil {
			t.Fatalf("post %d: %v", n, err)
		}
	}
	post("bob", 1)
	post("bob", 2)
	aliceStream := openTailStream(t, ctx, url, "alice", hc)
	bobStream := openTailStream(t, ctx, url, "bob", hc)
	aliceStream.waitID(t, "2")
	bobStream.waitID(t, "2")

	// A new pair on SIGHUP: new connections get certificate 2, the open streams go on.
	if _, _, err := ca.WriteServer(dir, 2); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for serial := int64(0); serial != 2; {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), clientTLS)
		if err != nil {
			t.Fatal(err)
		}
		serial = conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
		conn.Close()
		if serial != 2 && time.Now().After(deadline) {
			t.Fatalf("still serving certificate %d after SIGHUP; logs %s", serial, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	post("bob", 3)
	aliceStream.waitID(t, "3")
	bobStream.waitID(t, "3")

	// alice leaves the file: her stream ends within 5 s, bob's goes on.
	writeAuth("[" + bob + "]")
	if got := aliceStream.final(t, 5*time.Second); !strings.Contains(got, "the token was removed from the auth file; last delivered id: 3") {
		t.Fatalf("alice's stream ended with %q", got)
	}
	post("bob", 4)
	bobStream.waitID(t, "4")
	if code := get("alice", "/v1/runs"); code != 401 {
		t.Fatalf("removed token: %d", code)
	}

	// A broken file on SIGHUP changes nothing.
	writeAuth(`[{"token_sha256":`)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "auth file not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the refused reload: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := get("bob", "/v1/runs"); code != 200 {
		t.Fatalf("bob after a broken reload: %d", code)
	}
	post("bob", 5)
	bobStream.waitID(t, "5")
}

// liveEvent is event n of the run "live", which never ends (n = 1 starts it).
func liveEvent(n int) []byte {
	typ, extra := "message.part.delta", `,"messageId":"m","part":{"type":"text","text":"x"}`
	switch n {
	case 1:
		typ, extra = "run.started", ""
	case 2:
		typ, extra = "message.started", `,"messageId":"m","role":"assistant"`
	}
	return fmt.Appendf(nil, `{"protocolVersion":1,"type":%q,"eventId":"live:%d","runId":"live","sessionId":"s","phaseId":"p","logicalSequence":%d,"sequence":%d,"timestamp":"2025-01-01T00:00:00.000Z"%s}`+"\n",
		typ, n, n, n, extra)
}

// tailStream is an SSE stream of the run "live" read in the background.
type tailStream struct {
	mu     sync.Mutex
	ids    []string
	last   string // last comment
	closed chan struct{}
}

func openTailStream(t *testing.T, ctx context.Context, url, token string, hc *http.Client) *tailStream {
	t.Helper()
	s := &tailStream{closed: make(chan struct{})}
	c := &relay.Client{BaseURL: url, Token: token, HTTP: hc}
	go func() {
		defer close(s.closed)
		_ = c.Stream(ctx, "live", relay.StreamOptions{Follow: true}, func(f relay.SSEFrame) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			if f.Comment != "" {
				s.last = f.Comment
			} else {
				s.ids = append(s.ids, f.ID)
			}
			return nil
		})
	}()
	return s
}

func (s *tailStream) waitID(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.ids) > 0 && s.ids[len(s.ids)-1] == id
		ids := strings.Join(s.ids, ",")
		s.mu.Unlock()
		if got {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream has %s, not %s", ids, id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *tailStream) final(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(within):
		t.Fatalf("stream still open after %v", within)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
