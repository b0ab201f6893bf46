package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/coder/websocket"

	"github.com/agentwire/agentwire/hive"
)

// Bus-lane client (used by `agentwire bus send|listen`, the tests and the crash test). HTTP
// refusals are returned as *[Error] decoded from the hive error body (code, message, field,
// reason).

// SendMessage posts one AgentMessageV1 (its JSON text) to POST /v1/messages and returns the
// MessageStoredV1 answer.
func (c *Client) SendMessage(ctx context.Context, body []byte) (hive.MessageStoredV1, error) {
	var st hive.MessageStoredV1
	data, err := c.postJSON(ctx, "/v1/messages", body, http.StatusOK)
	if err != nil {
		return st, err
	}
	err = st.UnmarshalJSON(bytes.TrimRight(data, "\n"))
	return st, err
}

// SendReceipt posts a MessageReceiptV1 to POST /v1/messages/{gid}/receipts (204).
func (c *Client) SendReceipt(ctx context.Context, r hive.MessageReceiptV1) error {
	body, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = c.postJSON(ctx, "/v1/messages/"+url.PathEscape(r.GID)+"/receipts", body, http.StatusNoContent)
	return err
}

// ListMessages fetches one history page, GET /v1/messages?… (hive.md §2.11); q holds network,
// channel or swarm_id, and optionally thread_id, after_gid and limit.
func (c *Client) ListMessages(ctx context.Context, q url.Values) (hive.MessageListV1, error) {
	var l hive.MessageListV1
	data, err := c.get(ctx, "/v1/messages", q)
	if err != nil {
		return l, err
	}
	if err := l.UnmarshalJSON(bytes.TrimRight(data, "\n")); err != nil {
		return l, err
	}
	return l, l.Validate()
}

func (c *Client) postJSON(ctx context.Context, path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(path, nil), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", MediaJSON)
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return nil, errorFrom(resp)
	}
	return io.ReadAll(resp.Body)
}

// BusConn is a client's `/v1/bus` WebSocket (hive.md §4): Send writes one frame, Recv reads the
// next service frame decoded as at the client (hive.DecodeBusFrame AtClient; unknown tags are
// skipped).
type BusConn struct {
	conn *websocket.Conn
}

// DialBus opens GET /v1/bus with the client's token.
func (c *Client) DialBus(ctx context.Context) (*BusConn, error) {
	h := http.Header{}
	if c.Token != "" {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	conn, resp, err := websocket.Dial(ctx, c.url("/v1/bus", nil), &websocket.DialOptions{HTTPClient: c.HTTP, HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.Body != nil && resp.StatusCode >= 400 {
			return nil, errorFrom(resp)
		}
		return nil, err
	}
	conn.SetReadLimit(hive.MaxBusFrameBytes)
	return &BusConn{conn: conn}, nil
}

// Send writes one frame.
func (b *BusConn) Send(ctx context.Context, f hive.BusFrameV1) error {
	data, err := f.MarshalJSON()
	if err != nil {
		return err
	}
	return b.SendRaw(ctx, data)
}

// SendRaw writes one text frame as is.
func (b *BusConn) SendRaw(ctx context.Context, data []byte) error {
	return b.conn.Write(ctx, websocket.MessageText, data)
}

// SendBinary writes one binary frame. The relay takes text frames only and closes the socket
// with 1003 on a binary one; this exists to test that rule.
func (b *BusConn) SendBinary(ctx context.Context, data []byte) error {
	return b.conn.Write(ctx, websocket.MessageBinary, data)
}

// Recv returns the next frame the client understands and its raw text. A closed socket answers
// an error for which [websocket.CloseStatus] gives the close code.
func (b *BusConn) Recv(ctx context.Context) (hive.BusFrameV1, []byte, error) {
	for {
		typ, data, err := b.conn.Read(ctx)
		if err != nil {
			return nil, nil, err
		}
		if typ != websocket.MessageText {
			return nil, nil, errors.New("bus: binary frame")
		}
		f, err := hive.DecodeBusFrame(data, hive.AtClient)
		if err != nil {
			return nil, data, fmt.Errorf("bus: %w", err)
		}
		if f != nil {
			return f, data, nil
		}
	}
}

// RecvRaw returns the next text frame as it came, undecoded: for a client that looks at some
// frames only (the bus benchmark's senders skip the deliveries their own channel brings back).
func (b *BusConn) RecvRaw(ctx context.Context) ([]byte, error) {
	typ, data, err := b.conn.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("bus: binary frame")
	}
	return data, nil
}

// Close closes the socket normally.
func (b *BusConn) Close() error { return b.conn.Close(websocket.StatusNormalClosure, "") }

// CloseNow closes the connection without the closing handshake.
func (b *BusConn) CloseNow() error { return b.conn.CloseNow() }
