package relay

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
)

// net/http answers a request it cannot parse (a head larger than http.Server.MaxHeaderBytes,
// a missing or malformed Host, an invalid header line, an unsupported protocol version or
// transfer coding) by itself, before any handler runs, with a text/plain body written straight
// to the connection. relay.md §2 wants the relay's one error body on every answer, so
// [Server.Serve] wraps its listener: a connection whose write is exactly such a canned answer
// sends the same status with the relay body instead. Handler answers never match: they go
// through the response writer, whose header block never starts with the canned one's fixed
// "Content-Type: text/plain; charset=utf-8\r\nConnection: close" pair, and the relay writes
// no text/plain answers.

// cannedHeaders is what net/http writes after the status line of a canned answer.
var cannedHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

type wireListener struct {
	net.Listener
	maxHeader int
}

func (l wireListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, maxHeader: l.maxHeader}, nil
}

type wireConn struct {
	net.Conn
	maxHeader int
}

func (c *wireConn) Write(b []byte) (int, error) {
	if body, ok := rewriteCanned(b, c.maxHeader); ok {
		if _, err := c.Conn.Write(body); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// rewriteCanned returns the relay's answer for one of net/http's canned answers.
func rewriteCanned(b []byte, maxHeader int) ([]byte, bool) {
	const prefix = "HTTP/1.1 "
	if len(b) < len(prefix)+3 || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	i := bytes.Index(b, cannedHeaders)
	if i < 0 || bytes.Contains(b[:i], []byte("\r\n")) {
		return nil, false
	}
	status, err := strconv.Atoi(string(b[len(prefix) : len(prefix)+3]))
	if err != nil {
		return nil, false
	}
	text := string(b[i+len(cannedHeaders):])
	var e *Error
	switch status {
	case 431:
		e = newError(CodeInvalidRequest, "The request line and headers exceed the limit of %d bytes.", maxHeader)
	case 400:
		// "400 Bad Request: missing required Host header" and the like, or a bare
		// "400 Bad Request" for a request line that does not parse.
		msg := "The request is not valid HTTP."
		if _, detail, ok := bytes.Cut([]byte(text), []byte(": ")); ok {
			msg = "The request is not valid HTTP: " + clip(string(detail)) + "."
		}
		e = newError(CodeInvalidRequest, "%s", msg)
	case 501:
		e = newError(CodeInvalidRequest, "The request's Transfer-Encoding is not supported.")
	case 505:
		e = newError(CodeInvalidRequest, "The request's HTTP version is not supported.")
	default:
		e = newError(CodeInvalidRequest, "The request is not valid HTTP.")
	}
	e.Status = status
	body := e.AppendJSON(nil)
	out := make([]byte, 0, 200+len(body))
	out = append(out, prefix...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(status)...)
	out = append(out, "\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, body...), true
}
