// Package client is agentwire's Go Dispatch client and tool executor: the HTTP half of
// dispatch-tools.md §8 (§8.1 configuration and transport, §8.5 id and document resolution, §8.6
// requests per tool, §8.7 the issue-update wire mapping, §8.8 errors, §8.9 results). The pure
// half — configuration check, owner resolution, the strict parse and the executor argument
// checks of §8.2–§8.4 — lives in package dispatch and is reused here unchanged.
//
// # Contract
//
// [Client.Call] runs one tool call through the pipeline of §8.2:
//
//  1. [dispatch.CheckConfig]: a blank DISPATCH_URL or DISPATCH_TOKEN fails every call with
//     [dispatch.ErrDisabled] before validation;
//  2. [dispatch.ValidateCall] with the host context; any problem fails the call with a
//     *toolspec.ToolInputError (the refusal text of §4) and no request is sent;
//  3. the tool's requests of §8.6, in order, with the id and document resolution of §8.5;
//  4. a non-2xx answer becomes a [*DispatchServiceError] (`<CODE>: <message>[clauses]`) or a
//     [*DispatchGatewayError] (non-JSON body), a transport failure an [*UnreachableError], a
//     failed resolution a [*CallError]; success yields a [Result] whose text follows §8.9.
//
// Every request goes to `<DISPATCH_URL without trailing slash><path>` with
// `Authorization: Bearer <token>` and `Accept: application/json` (a JSON body adds
// `Content-Type: application/json`), path segments and query values percent-encoded (RFC 3986
// unreserved characters kept), absent query arguments omitted, and a 60-second deadline
// ([dispatch.RequestDeadline]). Every write body carries the session actor of §8.1.
//
// The typed endpoint methods ([Client.GetIssue], [Client.UpdateIssue], …) are the building blocks
// of the executor and are exported for hosts that talk to Dispatch without a model; they map
// errors exactly as the executor does. Answers are decoded with [dispatch.Decode] (unknown
// members ignored, duplicate names refused); a 2xx answer that is not the expected JSON is a
// gateway error.
//
// # Decisions where the spec is silent
//
//   - An empty host name is sent as `"host":"unknown"` (the session id's placeholder), because
//     §8.1 makes `host` the one origin member that is always present.
//   - List answers (comments, events, unlinked project documents, agents) are accepted as a bare
//     array or as an object holding that array under the plural name (`comments`, `events`,
//     `artifacts`, `agents`); write answers are accepted bare or wrapped in their type's name
//     (`{"issue":…}`, `{"ask":…}`, …), as `GET /api/v1/issues/{key}` is (§9.4).
//   - The project-document lookup `GET /api/v1/projects/{p}/artifacts/{slug}` falls back to the
//     unlinked listing on any [*DispatchServiceError] (the server refused the slug), never on a
//     gateway or transport failure: clients branch on answers, not on the status alone (§8.8).
//   - The subscribe clause of §8.9 needs the write's owner; a write whose owner the answer does
//     not reveal (an unfollow by bare uuid, an architecture sync, which is project-wide) carries
//     no clause. An issue document's writes are published on its issue (label `<KEY>`).
//   - `dispatch_comment` posts to `POST /api/v1/issues/{key}/comments` only for an issue owner
//     with no document named (no artifact, no document ref, no quote); a named document takes
//     `POST /api/v1/artifacts/{id}/comments`.
//   - `dispatch_doc_read` also reads the blocks listing after the text, to render its
//     `Open anchored asks/comments:` line from the blocks' reference counts (the line says
//     `unavailable (<code>)` when that read fails).
//   - The open-ask-block refusal of §8.6 treats an `ask` block as open when one of the issue's
//     open asks names it by `block_id` (issue documents) or, for a project document, whose open
//     asks carry no block ids, when the blocks listing counts an ask on it.
//   - `dispatch_read` of an issue uses `GET /api/v1/issues/{key}/references` as the
//     `Referenced by:` section when `GET /api/v1/references?to=` fails; the other auxiliary
//     reads of a render (events, agents, blocks for `Position:`) degrade to `unavailable` rows
//     instead of failing the call.
//   - A relative href (search hits, duplicate candidates, open asks' deep links) is rendered by
//     appending its path to DISPATCH_URL without the trailing slash, exactly as API paths are
//     (§8.1), so a server behind a base path keeps it; `details` keep the answer as returned.
//     Open-ask rows end with ` -> <deep link>`.
//   - An ask's quote anchor names its document on the ask's owner (the issue, or the project
//     of a project document); an issue-owned ask whose anchor alone names a document reads
//     the issue's documents once to resolve it.
//   - `dispatch_issues` rows leave out a zero open-ask count; the literal forms `<N> links`,
//     `<N> ops` and `<k> blocks` of §8.9 are kept for every N.
package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/dispatch"
)

// Host is the host context of §8.1: who the session is and where it runs. Every write carries
// it as the actor `{"kind":"session","id":…,"origin":{…}}`.
type Host struct {
	// SessionID is the host session id; empty when the host has none (the actor id is then
	// "unknown" and session-bound calls fail, §8.5).
	SessionID string
	// Name is the host name (`actor.origin.host`, always sent; "unknown" when empty).
	Name string
	// Machine, Cwd, Tmux, Pane and SessionTitle are the other `actor.origin` members, each left
	// out when empty. Cwd also resolves a relative `dispatch_artifact` path.
	Machine, Cwd, Tmux, Pane, SessionTitle string
	// LegionIssue is the LEGION_ISSUE environment variable, the owner fallback of §8.3.
	LegionIssue string
	// GitHubRepo is the `owner/repo` of the cwd's GitHub repository ("" when none).
	GitHubRepo string
}

// Config configures a [Client].
type Config struct {
	// URL is DISPATCH_URL, the server's base URL; Token is DISPATCH_TOKEN, the bearer token.
	// Either blank disables every call (§8.1).
	URL, Token string
	// Host is the host context (§8.1).
	Host Host
	// HTTPClient sends the requests; nil means a client with no timeout of its own (each request
	// carries the Timeout deadline through its context).
	HTTPClient *http.Client
	// Timeout is the per-request deadline; zero means [dispatch.RequestDeadline] (60 s).
	Timeout time.Duration
	// Subscribed reports whether the session already holds an Envoy subscription to a topic;
	// when it does, a write result leaves out the subscribe clause (§8.9 MAY). Nil: never.
	Subscribed func(topic string) bool
}

// Client is a Dispatch HTTP client and the executor of the twenty Dispatch tools. It is safe for
// concurrent use; it caches external-reference resolutions for its lifetime (§8.3).
type Client struct {
	rawURL     string
	base       string
	token      string
	host       Host
	http       *http.Client
	timeout    time.Duration
	subscribed func(string) bool

	mu       sync.Mutex
	external map[string]string
}

// New returns a client for cfg. It never fails: a disabled configuration fails each call with
// [dispatch.ErrDisabled] instead (§8.1).
func New(cfg Config) *Client {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = dispatch.RequestDeadline
	}
	raw := strings.TrimSpace(cfg.URL)
	return &Client{
		rawURL:     raw,
		base:       strings.TrimRight(raw, "/"),
		token:      strings.TrimSpace(cfg.Token),
		host:       cfg.Host,
		http:       hc,
		timeout:    timeout,
		subscribed: cfg.Subscribed,
		external:   map[string]string{},
	}
}

// ConfigFromEnv builds a configuration from the environment read through getenv (os.Getenv when
// nil): DISPATCH_URL, DISPATCH_TOKEN, LEGION_ISSUE and TMUX_PANE, the host name, the working
// directory and the GitHub repository of its git checkout (remote "origin"). The session id and
// title are the host's to set.
func ConfigFromEnv(getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	name, _ := os.Hostname()
	cwd, _ := os.Getwd()
	return Config{
		URL:   getenv("DISPATCH_URL"),
		Token: getenv("DISPATCH_TOKEN"),
		Host: Host{
			Name:        name,
			Cwd:         cwd,
			Pane:        getenv("TMUX_PANE"),
			LegionIssue: getenv("LEGION_ISSUE"),
			GitHubRepo:  GitHubRepoOf(cwd),
		},
	}
}

// GitHubRepoOf returns the `owner/repo` of the GitHub remote "origin" of the git checkout
// containing dir, or "" when there is none. It reads `.git/config` only (no git binary).
func GitHubRepoOf(dir string) string {
	for d := dir; d != ""; {
		data, err := os.ReadFile(filepath.Join(d, ".git", "config"))
		if err == nil {
			return githubRemote(string(data))
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return ""
}

// githubRemote extracts owner/repo from the url of [remote "origin"] in a git config text.
func githubRemote(config string) string {
	inOrigin := false
	for _, line := range strings.Split(config, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !inOrigin || !ok || strings.TrimSpace(k) != "url" {
			continue
		}
		u := strings.TrimSpace(v)
		for _, p := range []string{"https://github.com/", "http://github.com/", "ssh://git@github.com/", "git@github.com:", "git://github.com/"} {
			if rest, ok := strings.CutPrefix(u, p); ok {
				rest = strings.TrimSuffix(strings.TrimSuffix(rest, "/"), ".git")
				if owner, repo, ok := strings.Cut(rest, "/"); ok && owner != "" && repo != "" && !strings.Contains(repo, "/") {
					return owner + "/" + repo
				}
			}
		}
	}
	return ""
}

// Actor returns the session actor every write body carries (§8.1): kind "session", the session
// id or "unknown", and the origin with host always present and the other members when known.
func (c *Client) Actor() *dispatch.Actor {
	id := c.host.SessionID
	if id == "" {
		id = "unknown"
	}
	name := c.host.Name
	if name == "" {
		name = "unknown"
	}
	return &dispatch.Actor{Kind: dispatch.ActorSession, ID: id, Origin: &dispatch.ActorOrigin{
		Host: name, Machine: c.host.Machine, Cwd: c.host.Cwd, Tmux: c.host.Tmux,
		Pane: c.host.Pane, SessionTitle: c.host.SessionTitle,
	}}
}

// hostContext is the validation pass's view of the host (§8.3).
func (c *Client) hostContext() dispatch.HostContext {
	return dispatch.HostContext{DispatchURL: c.rawURL, LegionIssue: c.host.LegionIssue, GitHubRepo: c.host.GitHubRepo}
}

// maxAnswer bounds an answer body; a larger one is a malformed (gateway) answer.
const maxAnswer = 64 << 20

// request is one HTTP request of §8.6 before it is sent.
type request struct {
	method string
	// path is the escaped path below the base URL, e.g. /api/v1/issues/DSP-1.
	path  string
	query []param
	// body is the request body; contentType is set with it.
	body        []byte
	contentType string
	// linksPatch marks a PATCH carrying external_links (the clause of a 500 answer, §8.8).
	linksPatch bool
}

// param is one query parameter; query parameters keep the order of §8.6.
type param struct{ name, value string }

// url returns the request's full URL: base, path and the percent-encoded query.
func (c *Client) url(r *request) string {
	var b strings.Builder
	b.WriteString(c.base)
	b.WriteString(r.path)
	for i, p := range r.query {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(escape(p.name))
		b.WriteByte('=')
		b.WriteString(escape(p.value))
	}
	return b.String()
}

// answer is a 2xx answer.
type answer struct {
	status int
	body   []byte
	req    *request
	url    string
}

// send performs r: transport failures become *UnreachableError, non-2xx answers a
// *DispatchServiceError or *DispatchGatewayError (§8.8).
func (c *Client) send(ctx context.Context, r *request) (*answer, error) {
	if err := dispatch.CheckConfig(c.rawURL, c.token); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	full := c.url(r)
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, full, body)
	if err != nil {
		return nil, &UnreachableError{URL: c.rawURL, Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &UnreachableError{URL: c.rawURL, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, &UnreachableError{URL: c.rawURL, Err: err}
	}
	a := &answer{status: resp.StatusCode, body: data, req: r, url: full}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.answerError(r, full, resp.StatusCode, data)
	}
	if len(data) > maxAnswer {
		return nil, c.gateway(a)
	}
	return a, nil
}

// gateway is the gateway error for a 2xx answer that is not the expected JSON.
func (c *Client) gateway(a *answer) error {
	return newGatewayError(a.req.method, a.url, a.status, a.body, c.token)
}

// firstByte returns the first non-white-space byte of a JSON text, 0 when none.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// escape percent-encodes s for a path segment or a query component: every byte except the RFC
// 3986 unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~") becomes %XX.
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// path joins escaped segments below /api/v1: path("issues", key) = /api/v1/issues/<key>.
func path(segments ...string) string {
	var b strings.Builder
	b.WriteString("/api/v1")
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(escape(s))
	}
	return b.String()
}

// jsonRequest is a request with a JSON body encoded from v (only known members, §9.1).
func jsonRequest(method, p string, v any) (*request, error) {
	body, err := dispatch.Encode(v)
	if err != nil {
		return nil, err
	}
	return &request{method: method, path: p, body: body, contentType: "application/json"}, nil
}

// errNoSession is returned by session-bound calls without a host session id (§8.5).
func errNoSession(tool string) error {
	return &CallError{Message: "host session id is required for " + tool}
}
