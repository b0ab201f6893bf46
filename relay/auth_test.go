package relay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/relay"
)

func authFile(t *testing.T, entries ...string) *relay.Auth {
	t.Helper()
	a, err := relay.ParseAuth([]byte("[" + strings.Join(entries, ",") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tokenEntry(token, org string, rights ...string) string {
	return fmt.Sprintf(`{"token_sha256":%q,"org":%q,"instance_id":"i-%s","instance_label":"label","rights":["%s"]}`,
		relay.HashToken(token), org, token, strings.Join(rights, `","`))
}

// Another org's run answers exactly like a missing run (relay.md §1: 404, never 403); the
// same run ID in two orgs names two runs.
func TestCrossOrgIsolation(t *testing.T) {
	h := newHarness(t, withAuth(authFile(t,
		tokenEntry("tok-a", "org-a", "runs.write", "runs.read"),
		tokenEntry("tok-b", "org-b", "runs.write", "runs.read"),
		tokenEntry("tok-b-admin", "org-b", "admin"),
	)))
	const run = "shared-id"
	lines := simpleRun(run, 3, true)
	if code, body := h.post(run, "tok-a", lines...); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	_, _, missing := h.do("GET", "/v1/runs/never-existed", "tok-b", nil, nil)
	for _, tc := range []struct {
		path   string
		header map[string]string
	}{
		{"/v1/runs/" + run, nil},
		{"/v1/runs/" + run + "/events", nil},
		{"/v1/runs/" + run + "/events", map[string]string{"Accept": relay.MediaSSE}},
	} {
		for _, tok := range []string{"tok-b", "tok-b-admin"} {
			code, _, body := h.do("GET", tc.path, tok, tc.header, nil)
			if code != 404 || string(body) != string(missing) {
				t.Fatalf("%s as %s: %d %s (missing run: %s)", tc.path, tok, code, body, missing)
			}
		}
		if code, _, body := h.do("GET", tc.path, "tok-a", tc.header, nil); code != 200 {
			t.Fatalf("%s as owner: %d %s", tc.path, code, body)
		}
	}
	code, _, body := h.do("GET", "/v1/runs", "tok-b", nil, nil)
	if code != 200 || string(body) != "{\"runs\":[]}\n" {
		t.Fatalf("org-b listing: %s", body)
	}
	// org-b's own run with the same ID is independent of org-a's.
	other := simpleRun(run, 1, false)
	if code, body := h.post(run, "tok-b", other...); code != 200 || !strings.Contains(string(body), `"accepted":3`) {
		t.Fatalf("org-b write: %d %s", code, body)
	}
	h.checkSnapshot("org-a", run)
	h.checkSnapshot("org-b", run)
	if n := len(h.storedEvents("org-a", run)); n != 6 {
		t.Fatalf("org-a run has %d events", n)
	}
}

func TestAuthRefusals(t *testing.T) {
	h := newHarness(t, withAuth(authFile(t,
		tokenEntry("writer", "o", "runs.write"),
		tokenEntry("reader", "o", "runs.read"),
	)))
	lines := simpleRun("r", 1, false)
	for _, tc := range []struct {
		name, method, path, token string
		header                    map[string]string
		msg                       string
	}{
		{"no token", "GET", "/v1/runs", "", nil, "A bearer token is required."},
		{"bad token", "GET", "/v1/runs", "nope", nil, "The bearer token is not valid."},
		{"basic scheme", "GET", "/v1/runs", "", map[string]string{"Authorization": "Basic eDp5"}, "A bearer token is required."},
		// A token that lacks the route's right is 403 forbidden on every lane (relay.md §2).
		{"reader cannot write", "POST", "/v1/runs/r/events", "reader", map[string]string{"Content-Type": relay.MediaNDJSON}, "The token does not grant the right runs.write."},
		{"writer cannot read", "GET", "/v1/runs/r", "writer", nil, "The token does not grant the right runs.read."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := h.do(tc.method, tc.path, tc.token, tc.header, ndjson(lines))
			e := errorBody(t, code, body)
			wantCode, wantStatus := relay.CodeUnauthorized, 401
			if strings.HasPrefix(tc.msg, "The token does not grant") {
				wantCode, wantStatus = relay.CodeForbidden, 403
			}
			if code != wantStatus || e.Code != wantCode || e.Message != tc.msg || (code == 401) != strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("%d %v %s", code, hdr, body)
			}
		})
	}
	if code, body := h.post("r", "writer", lines...); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if code, _, body := h.do("GET", "/v1/runs/r", "reader", nil, nil); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	// Operations routes are open.
	if code, _, _ := h.do("GET", "/healthz", "", nil, nil); code != 200 {
		t.Fatal(code)
	}
}

func TestParseAuth(t *testing.T) {
	hash := relay.HashToken("t")
	good := `{"token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":"L","owner":"me","plan":"personal","swarms":[{"swarm_id":"s","handle":"h","reputation":0.5}],"rights":["runs.read","admin"]}`
	a, err := relay.ParseAuth([]byte(`{"tokens":[` + good + `]}`))
	if err != nil || a.Len() != 1 {
		t.Fatalf("%v", err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"not JSON", `[`, "auth file is not valid JSON text at byte offset 1."},
		{"scalar", `5`, "auth file must be an array"},
		{"object without tokens", `{"x":[]}`, "auth file must be an array"},
		{"entry not object", `[1]`, "tokens[0] must be an object"},
		{"bad hash", `[{"token_sha256":"abc","org":"o","instance_id":"i","instance_label":"","rights":[]}]`, "tokens[0].token_sha256 must be 64 hexadecimal digits"},
		{"missing org", `[{"token_sha256":"` + hash + `","instance_id":"i","instance_label":"","rights":[]}]`, "tokens[0].org is missing"},
		{"empty org", `[{"token_sha256":"` + hash + `","org":"","instance_id":"i","instance_label":"","rights":[]}]`, "tokens[0].org must not be empty"},
		{"org over the id limit", `[{"token_sha256":"` + hash + `","org":"` + strings.Repeat("o", 513) + `","instance_id":"i","instance_label":"","rights":[]}]`, "tokens[0].org exceeds the 512-byte limit of every id"},
		{"missing label", `[{"token_sha256":"` + hash + `","org":"o","instance_id":"i","rights":[]}]`, "tokens[0].instance_label is missing"},
		{"missing rights", `[{"token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":""}]`, "tokens[0].rights is missing"},
		{"unknown right", `[{"token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":"","rights":["runs.delete"]}]`, "tokens[0].rights[0] is not a known right"},
		{"unknown member", `[{"token":"t","token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":"","rights":[]}]`, `tokens[0] has unknown member "token"`},
		{"bad plan", `[{"token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":"","plan":"free","rights":[]}]`, `tokens[0].plan must be "team" or "personal"`},
		{"bad swarm", `[{"token_sha256":"` + hash + `","org":"o","instance_id":"i","instance_label":"","swarms":[{"swarm_id":"s"}],"rights":[]}]`, "tokens[0].swarms[0] needs swarm_id, handle and reputation"},
		{"repeated token", `[` + good + `,` + good + `]`, "tokens[1].token_sha256 repeats an earlier token"},
		{"duplicate member", `[{"org":"a","org":"b"}]`, `auth file[0] contains duplicate member name "org".`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := relay.ParseAuth([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(path, []byte(`[`+good+`]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := relay.LoadAuth(path); err != nil || a.Len() != 1 {
		t.Fatal(err)
	}
	if _, err := relay.LoadAuth(path + ".missing"); err == nil {
		t.Fatal("missing file loaded")
	}
}

func TestCheckListenAddress(t *testing.T) {
	for _, tc := range []struct {
		addr string
		auth bool
		ok   bool
	}{
		{"127.0.0.1:7420", false, true},
		{"127.1.2.3:0", false, true},
		{"[::1]:7420", false, true},
		{"localhost:7420", false, true},
		{"0.0.0.0:7420", false, false},
		{":7420", false, false},
		{"[::]:7420", false, false},
		{"192.168.1.5:7420", false, false},
		{"example.com:80", false, false},
		{"nonsense", false, false},
		{"0.0.0.0:7420", true, true},
	} {
		err := relay.CheckListenAddress(tc.addr, tc.auth)
		if (err == nil) != tc.ok {
			t.Errorf("%s auth=%v: %v", tc.addr, tc.auth, err)
		}
	}
}
