//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// terminal opens a pseudo-terminal: the returned file is its terminal side (a character device,
// as a user's stderr is), and output returns what has been written to it so far.
func terminal(t *testing.T) (*os.File, func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got syncWriter
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, err := master.Read(buf)
			got.Write(bytes.ReplaceAll(buf[:k], []byte("\r\n"), []byte("\n")))
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
		<-done
	})
	return tty, got.String
}

// refusedURL is a loopback address where nothing listens: connecting fails at once.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// silentURL is a loopback address that never answers a connection attempt: a listening socket
// with a backlog of zero whose one queue slot is taken, so the kernel drops further SYNs (the
// way a firewall or a dead host behaves).
func silentURL(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	c, err := net.DialTimeout("tcp", addr, 5*time.Second) // takes the queue slot
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c2, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c2.Close()
		t.Fatal("the silent listener accepted a second connection")
	}
	return "http://" + addr
}

// waitFor polls get until it contains want.
func waitFor(t *testing.T, what string, get func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(get(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q in %q", what, want, get())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUnreachableRelay: `events send` and `events tail` tell a user on a terminal at once that
// the relay cannot be reached (a refused connection: on the first failure; a connection attempt
// nobody answers: after a second), retry a bounded number of times while they have never
// reached it, and then exit 1 with one line naming the attempts. On a stderr that is not a
// terminal only that last line is written.
func TestUnreachableRelay(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		silent bool
		notice string
	}{
		{"send, refused", []string{"events", "send"}, evStart + "\n", false, "retrying in 100ms (attempt 2 of 6)"},
		{"tail, refused", []string{"events", "tail", "r"}, "", false, "retrying in 100ms (attempt 2 of 6)"},
		{"send, no answer", []string{"events", "send"}, evStart + "\n", true, "no answer after 1s"},
		{"tail, no answer", []string{"events", "tail", "r"}, "", true, "no answer after 1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := refusedURL(t)
			if tc.silent {
				u = silentURL(t)
			}
			host := strings.TrimPrefix(u, "http://")
			args := append(tc.args, "--url", u)
			tty, output := terminal(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out bytes.Buffer
			code := make(chan int, 1)
			go func() { code <- runContext(ctx, args, strings.NewReader(tc.stdin), &out, tty) }()
			waitFor(t, "terminal", output, "agentwire: ")
			waitFor(t, "terminal", output, tc.notice)
			if !strings.Contains(output(), host) {
				t.Fatalf("the notice does not name the relay %s: %q", host, output())
			}
			if tc.silent {
				cancel() // the point is made; a connection attempt would take 10 s to fail
			}
			select {
			case c := <-code:
				if c != 1 || out.String() != "" {
					t.Fatalf("exit %d stdout %q; terminal:\n%s", c, out.String(), output())
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("did not give up; terminal:\n%s", output())
			}
			if !tc.silent {
				waitFor(t, "terminal", output, "(gave up after 6 attempts)\n")
			}
		})
	}
	for _, args := range [][]string{{"events", "send"}, {"events", "tail", "r"}} {
		t.Run(strings.Join(args, " ")+", not a terminal", func(t *testing.T) {
			t.Parallel()
			var out, errs bytes.Buffer
			code := runContext(context.Background(), append(args, "--url", refusedURL(t)), strings.NewReader(evStart+"\n"), &out, &errs)
			if code != 1 || out.String() != "" || strings.Count(errs.String(), "\n") != 1 ||
				!strings.HasPrefix(errs.String(), "agentwire: relay request failed: ") || !strings.HasSuffix(errs.String(), "(gave up after 6 attempts)\n") {
				t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errs.String())
			}
		})
	}
}

// TestTailFollowsThroughOutage: once `events tail` has reached the relay, following the run is
// its job: when the relay goes away it says so on the terminal and reconnects with backoff
// until the relay is back, then resumes after the last event it got and ends with the run.
func TestTailFollowsThroughOutage(t *testing.T) {
	o := serveOpts(filepath.Join(t.TempDir(), "data"))
	u, stop, _ := startServe(t, o)
	lines := strings.SplitAfter(synthRun(t, 40, 4, "outage"), "\n")
	if code, out, errs := runCLI(t, strings.Join(lines[:20], ""), "events", "send", "--url", u); code != 0 {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	tty, output := terminal(t)
	var out syncWriter
	code := make(chan int, 1)
	go func() {
		code <- runContext(context.Background(), []string{"events", "tail", "outage", "--url", u, "--snapshot"}, strings.NewReader(""), &out, tty)
	}()
	// Wait until tail has streamed from the relay (the relay has a subscriber), then stop it.
	waitFor(t, "relay", func() string { return scrape(t, u) }, "agentwire_sse_subscribers 1")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "terminal", output, "reconnecting in ")
	// The relay comes back on the same address and the run goes on.
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	o.addr = parsed.Host
	u2, _, _ := startServe(t, o)
	if u2 != u {
		t.Fatalf("restarted on %s, not %s", u2, u)
	}
	if code, out, errs := runCLI(t, strings.Join(lines[20:], ""), "events", "send", "--url", u); code != 0 {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	select {
	case c := <-code:
		_, reduced, _ := runCLI(t, strings.Join(lines, ""), "events", "reduce")
		if c != 0 || out.String() != reduced {
			t.Fatalf("exit %d; terminal:\n%s\nsnapshot:\n%.300s", c, output(), out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("tail did not finish; terminal:\n%s", output())
	}
}

// scrape returns the relay's /metrics text ("" when it cannot be read).
func scrape(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
