package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/jsonvalue"
)

// Client is a small client of the runs lane (used by `agentwire events send` and `events tail`,
// the tests, the crash test and the load tool). Errors answered by the relay are returned as
// *[Error]; transport failures as they come from net/http.
type Client struct {
	// BaseURL is the relay's URL, e.g. http://127.0.0.1:7420 (no trailing path needed).
	BaseURL string
	// Token is the bearer token (empty in local mode).
	Token string
	// HTTP is the client to use (default http.DefaultClient).
	HTTP *http.Client
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) url(path string, q url.Values) string {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func runPath(runID string) string { return "/v1/runs/" + url.PathEscape(runID) }

func (c *Client) do(req *http.Request) (*http.Response, error) {
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return c.http().Do(req)
}

// errorFrom turns a non-2xx answer into an *Error (or a plain error when the body is not the
// relay's error body).
func errorFrom(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if e, err := ParseErrorBody(resp.StatusCode, body); err == nil {
		return e
	}
	return fmt.Errorf("relay answered %s: %s", resp.Status, bytes.TrimSpace(body))
}

// Append posts events to POST /v1/runs/{runId}/events: body is one event with contentType
// application/json, or NDJSON lines with application/x-ndjson.
func (c *Client) Append(ctx context.Context, runID, contentType string, body []byte) (AppendResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(runPath(runID)+"/events", nil), bytes.NewReader(body))
	if err != nil {
		return AppendResult{}, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.do(req)
	if err != nil {
		return AppendResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return AppendResult{}, errorFrom(resp)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return AppendResult{}, err
	}
	return ParseAppendResult(data)
}

// ParseAppendResult decodes the 200 body of POST /v1/runs/{runId}/events.
func ParseAppendResult(data []byte) (AppendResult, error) {
	obj, err := jsonvalue.ParseObject(data, "append result")
	if err != nil {
		return AppendResult{}, err
	}
	var r AppendResult
	num := func(name string) (int64, error) {
		v, _ := obj.Get(name)
		f, ok := v.(float64)
		if !ok || f < 0 || f != float64(int64(f)) {
			return 0, fmt.Errorf("append result %s is not a non-negative integer", name)
		}
		return int64(f), nil
	}
	var n int64
	if n, err = num("accepted"); err != nil {
		return r, err
	}
	r.Accepted = int(n)
	if n, err = num("duplicates"); err != nil {
		return r, err
	}
	r.Duplicates = int(n)
	if r.LastLogicalSequence, err = num("lastLogicalSequence"); err != nil {
		return r, err
	}
	st, _ := obj.Get("status")
	s, ok := st.(string)
	if !ok {
		return r, errors.New("append result status is not a string")
	}
	r.Status = s
	return r, nil
}

// GetRun fetches GET /v1/runs/{runId}: the snapshot object with its `meta` member.
func (c *Client) GetRun(ctx context.Context, runID string) (*jsonvalue.Object, error) {
	data, err := c.get(ctx, runPath(runID), nil)
	if err != nil {
		return nil, err
	}
	// A snapshot nests event data deeper than an event may (events.MaxStateDepth).
	v, err := jsonvalue.ParseDeep(data, "run", events.MaxStateDepth)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, errors.New("run is not a JSON object")
	}
	return obj, nil
}

// ReadEvents fetches one NDJSON page of GET /v1/runs/{runId}/events?after=&limit= and returns
// its lines.
func (c *Client) ReadEvents(ctx context.Context, runID string, after int64, limit int) ([][]byte, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	data, err := c.get(ctx, runPath(runID)+"/events", q)
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// ReadAllEvents pages through every stored event of the run.
func (c *Client) ReadAllEvents(ctx context.Context, runID string) ([][]byte, error) {
	var all [][]byte
	var after int64
	for {
		page, err := c.ReadEvents(ctx, runID, after, MaxReadLimit)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < MaxReadLimit {
			return all, nil
		}
		v, err := jsonvalue.ParseObject(page[len(page)-1], "event")
		if err != nil {
			return nil, err
		}
		ls, _ := v.Get("logicalSequence")
		f, _ := ls.(float64)
		after = int64(f)
	}
}

func (c *Client) get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(path, q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errorFrom(resp)
	}
	return io.ReadAll(resp.Body)
}

// SSEFrame is one item of an SSE stream: an event (`id:`, `event:`, `data:`) or a comment
// line (Comment set; heartbeats and the relay's final notes are comments). Data aliases the
// reader's buffer and is valid only until the callback that receives the frame returns (like
// bufio.Scanner.Bytes): a caller that keeps it copies it.
type SSEFrame struct {
	ID      string
	Event   string
	Data    []byte
	Comment string
}

// StreamOptions selects where an SSE stream starts.
type StreamOptions struct {
	// After is the `after` query cursor; LastEventID, when not empty, is sent as the
	// Last-Event-ID header (it takes precedence on the relay).
	After       int64
	LastEventID string
	// Follow asks the relay not to end the stream after the terminal event.
	Follow bool
}

// Stream opens the SSE form of GET /v1/runs/{runId}/events and calls fn for every frame until
// the relay ends the stream (nil), fn returns an error (that error), or ctx ends.
func (c *Client) Stream(ctx context.Context, runID string, opts StreamOptions, fn func(SSEFrame) error) error {
	q := url.Values{}
	if opts.After > 0 {
		q.Set("after", strconv.FormatInt(opts.After, 10))
	}
	if opts.Follow {
		q.Set("follow", "true")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(runPath(runID)+"/events", q), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", MediaSSE)
	if opts.LastEventID != "" {
		req.Header.Set("Last-Event-ID", opts.LastEventID)
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errorFrom(resp)
	}
	return ReadSSE(resp.Body, fn)
}

// ReadSSE parses an SSE byte stream (WHATWG HTML "event stream interpretation": lines end
// with LF, CR or CRLF; `field: value` with one optional space; a blank line dispatches; a line
// starting with ':' is a comment) and calls fn per frame. It returns nil at EOF; an event not
// completed by a blank line before EOF is discarded. A frame's Data is reused after fn returns
// (see [SSEFrame]); the common event names are not reallocated per frame.
func ReadSSE(r io.Reader, fn func(SSEFrame) error) error {
	sc := &sseScanner{r: r, buf: make([]byte, 64<<10)}
	var cur SSEFrame
	data := make([]byte, 0, 1024)
	haveData := false
	lastEvent := ""
	for {
		line, err := sc.line()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(line) == 0 {
			if haveData || cur.Event != "" || cur.ID != "" {
				if haveData {
					cur.Data = data
				}
				if ferr := fn(cur); ferr != nil {
					return ferr
				}
			}
			cur, data, haveData = SSEFrame{}, data[:0], false
			continue
		}
		if line[0] == ':' {
			if ferr := fn(SSEFrame{Comment: strings.TrimPrefix(string(line[1:]), " ")}); ferr != nil {
				return ferr
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(name) {
		case "id":
			cur.ID = string(value)
		case "event":
			if string(value) != lastEvent { // no allocation when the name repeats
				lastEvent = string(value)
			}
			cur.Event = lastEvent
		case "data":
			if haveData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			haveData = true
		}
	}
}

// sseScanner splits a stream into lines ending with LF, CR or CRLF, of any length. A returned
// line aliases the scanner's buffer until the next call.
type sseScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	err      error
	skipLF   bool // the last line ended with CR: an LF right after it belongs to it
}

func (s *sseScanner) line() ([]byte, error) {
	for {
		if s.skipLF && s.pos < s.end {
			if s.buf[s.pos] == '\n' {
				s.pos++
			}
			s.skipLF = false
		}
		data := s.buf[s.pos:s.end]
		if !s.skipLF {
			lf := bytes.IndexByte(data, '\n')
			head := data
			if lf >= 0 {
				head = data[:lf]
			}
			if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
				s.pos += cr + 1
				s.skipLF = true
				return data[:cr], nil
			}
			if lf >= 0 {
				s.pos += lf + 1
				return data[:lf], nil
			}
		}
		if s.err != nil {
			if len(data) > 0 && !s.skipLF {
				s.pos = s.end
				return data, nil
			}
			return nil, s.err
		}
		if s.pos > 0 {
			s.end = copy(s.buf, s.buf[s.pos:s.end])
			s.pos = 0
		}
		if s.end == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
		}
	}
}
