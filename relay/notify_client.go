package relay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/agentwire/agentwire/jsonvalue"
)

// PublishEnvelope posts one envelope (its JSON text) to POST /v1/notifications (relay.md §2).
// A refusal is an *[Error]; for an invalid envelope its Problems list every problem.
func (c *Client) PublishEnvelope(ctx context.Context, body []byte) (PublishResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url("/v1/notifications", nil), bytes.NewReader(body))
	if err != nil {
		return PublishResult{}, err
	}
	req.Header.Set("Content-Type", MediaJSON)
	resp, err := c.do(req)
	if err != nil {
		return PublishResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return PublishResult{}, errorFrom(resp)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return PublishResult{}, err
	}
	return ParsePublishResult(data)
}

// ParsePublishResult decodes the 200 body of POST /v1/notifications:
// `{"duplicate":<bool>,"seq":<n>}`.
func ParsePublishResult(data []byte) (PublishResult, error) {
	obj, err := jsonvalue.ParseObject(data, "publish result")
	if err != nil {
		return PublishResult{}, err
	}
	d, _ := obj.Get("duplicate")
	dup, ok := d.(bool)
	if !ok {
		return PublishResult{}, errors.New("publish result duplicate is not a boolean")
	}
	v, _ := obj.Get("seq")
	f, ok := v.(float64)
	if !ok || f < 0 || f != float64(int64(f)) {
		return PublishResult{}, errors.New("publish result seq is not a non-negative integer")
	}
	return PublishResult{Duplicate: dup, Seq: int64(f)}, nil
}

// NotifyStreamOptions selects a notification stream (relay.md §2: GET
// /v1/notifications/stream?subject=P[&subject=P2…]&session=S).
type NotifyStreamOptions struct {
	// Subjects are the subscription patterns (NATS wildcards `*` and `>`); at least one.
	Subjects []string
	// Session, when not empty, is the `session` whose dedupe keys the relay remembers.
	Session string
	// LastEventID, when not empty, resumes after that store sequence (Last-Event-ID header).
	LastEventID string
}

// StreamNotifications opens GET /v1/notifications/stream and calls fn for every SSE frame
// (envelopes and comments) until the relay ends the stream (nil), fn returns an error (that
// error), or ctx ends.
func (c *Client) StreamNotifications(ctx context.Context, opts NotifyStreamOptions, fn func(SSEFrame) error) error {
	q := url.Values{}
	for _, s := range opts.Subjects {
		q.Add("subject", s)
	}
	if opts.Session != "" {
		q.Set("session", opts.Session)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/v1/notifications/stream", q), nil)
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
