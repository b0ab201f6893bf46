package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentwire/agentwire/dispatch/client"
)

// A fake Dispatch server on loopback for the tests: it answers scripted responses in order and
// records every request. No code of this package is mocked.

type answer struct {
	status int
	ct     string
	body   string
}

func jsonAnswer(status int, body string) answer {
	return answer{status: status, ct: "application/json", body: body}
}

type recorded struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	answers []answer
	reqs    []recorded
}

func newFakeServer(t testing.TB, answers ...answer) *fakeServer {
	f := &fakeServer{answers: answers}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		i := len(f.reqs)
		f.reqs = append(f.reqs, recorded{method: r.Method, path: r.URL.EscapedPath(), rawQuery: r.URL.RawQuery, header: r.Header.Clone(), body: body})
		var a answer
		if i < len(f.answers) {
			a = f.answers[i]
		} else if len(f.answers) > 0 {
			a = f.answers[len(f.answers)-1]
		} else {
			a = jsonAnswer(200, "{}")
		}
		f.mu.Unlock()
		if a.ct != "" {
			w.Header().Set("Content-Type", a.ct)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// testHost is the host context of the tests.
var testHost = client.Host{SessionID: "ses_1", Name: "devbox", Cwd: "/work/app"}

const testActor = `{"kind":"session","id":"ses_1","origin":{"host":"devbox","cwd":"/work/app"}}`

func newClient(f *fakeServer) *client.Client {
	return client.New(client.Config{URL: f.URL, Token: "tok_test", Host: testHost})
}
