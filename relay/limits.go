package relay

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Limits are the request and subscriber bounds of relay.md §3. Zero fields take the defaults.
type Limits struct {
	// MaxBody bounds a request body in bytes (default 4 MiB); more answers 413.
	MaxBody int64
	// MaxEvent bounds one event's JSON text in bytes (default 1 MiB); more answers 413 with
	// the event's `index`.
	MaxEvent int
	// MaxBatch bounds the events of one NDJSON request (default 10,000); more answers 413
	// with `index` = MaxBatch (the first event beyond the limit).
	MaxBatch int
	// SubscriberQueue bounds the frames queued for one SSE subscriber or bus WebSocket
	// (default 1,024); a live subscriber that falls further behind is disconnected with its
	// resumable cursor.
	SubscriberQueue int
	// SubscriberQueueBytes bounds the bytes of those frames (default 16 MiB): events may be
	// 1 MiB each, so 1,024 of them could hold a gigabyte for one slow reader. Past it a
	// subscriber is disconnected as past the frame count. One batch, however large, is
	// always taken by a subscriber that had caught up.
	SubscriberQueueBytes int64
	// ReadTimeout bounds reading one request (default 30 s).
	ReadTimeout time.Duration
	// MaxStreams bounds the streams open at once — SSE run and notification streams and bus
	// WebSockets together (default 4,096); one more is answered 429 rate_limited. With
	// SubscriberQueueBytes it bounds what slow readers can make the relay hold.
	MaxStreams int
	// MaxHeaderBytes bounds the request line and headers of one request (default 512 KiB);
	// more answers 431 in the error body. [Server.Serve] lets net/http read up to twice as
	// much before it cuts the connection itself.
	MaxHeaderBytes int
	// MaxReadBytes bounds the data of one page of bus stream entries the relay reads from the
	// store (default 4 MiB): a sealed message can be over a megabyte, so a page of 500 could be
	// most of a gigabyte. A page it stops is read on after its last entry; a poll answer holds
	// about this much at most.
	MaxReadBytes int
}

// Defaults of relay.md §3.
const (
	DefaultMaxBody         = 4 << 20
	DefaultMaxEvent        = 1 << 20
	DefaultMaxBatch        = 10000
	DefaultSubscriberQueue = 1024
	// DefaultMaxStreams is Limits.MaxStreams's default.
	DefaultMaxStreams = 4096
	// DefaultSubscriberQueueBytes is Limits.SubscriberQueueBytes's default.
	DefaultSubscriberQueueBytes = 16 << 20
	// DefaultMaxReadBytes is Limits.MaxReadBytes's default.
	DefaultMaxReadBytes = 4 << 20
	DefaultReadTimeout  = 30 * time.Second

	// MaxReadLimit is the largest `limit` of GET /v1/runs/{runId}/events (relay.md §2);
	// DefaultReadLimit is used when it is absent.
	MaxReadLimit     = 10000
	DefaultReadLimit = 1000
	// MaxListLimit and DefaultListLimit bound GET /v1/runs `limit`.
	MaxListLimit     = 1000
	DefaultListLimit = 100
)

func (l Limits) withDefaults() Limits {
	if l.MaxBody <= 0 {
		l.MaxBody = DefaultMaxBody
	}
	if l.MaxEvent <= 0 {
		l.MaxEvent = DefaultMaxEvent
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = DefaultMaxBatch
	}
	if l.SubscriberQueue <= 0 {
		l.SubscriberQueue = DefaultSubscriberQueue
	}
	if l.SubscriberQueueBytes <= 0 {
		l.SubscriberQueueBytes = DefaultSubscriberQueueBytes
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.MaxStreams <= 0 {
		l.MaxStreams = DefaultMaxStreams
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxReadBytes <= 0 {
		l.MaxReadBytes = DefaultMaxReadBytes
	}
	return l
}

// Media types of POST /v1/runs/{runId}/events (relay.md §2).
const (
	MediaJSON   = "application/json"
	MediaNDJSON = "application/x-ndjson"
	MediaSSE    = "text/event-stream"
)

// readBody reads the whole request body within max bytes. A declared or actual length
// above max answers 413 payload_too_large.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, *Error) {
	tooLarge := func() *Error {
		return newError(CodePayloadTooLarge, "Request body exceeds the limit of %d bytes.", max)
	}
	if r.ContentLength > max {
		return nil, tooLarge()
	}
	size := 512
	if r.ContentLength > 0 {
		size = int(r.ContentLength) + 1
	}
	body := http.MaxBytesReader(w, r.Body, max)
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge()
			}
			return nil, newError(CodeInvalidRequest, "Reading the request body failed: %v.", err)
		}
	}
}

// splitNDJSON splits an NDJSON body into event lines (relay.md §2): lines end at LF; a
// trailing CR is JSON white space (events.md §3.4) and stays with the line for the parser;
// lines holding only JSON white space are skipped and take no index. It stops with 413 when
// the batch would hold more than maxBatch events. The returned slices alias body.
func splitNDJSON(body []byte, maxBatch int) ([][]byte, *Error) {
	lines := make([][]byte, 0, min(maxBatch, 1+len(body)/256))
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if isJSONSpace(line) {
			continue
		}
		if len(lines) == maxBatch {
			return nil, newError(CodePayloadTooLarge, "An NDJSON batch holds at most %d events.", maxBatch).withIndex(maxBatch)
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// isJSONSpace reports whether b holds only JSON insignificant white space (space, tab, LF, CR).
func isJSONSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// parseCursor parses a non-negative decimal integer query value or header (`after`,
// `Last-Event-ID`), at most 2^53−1 like every logical sequence (events.md §4.2).
func parseCursor(name, s string) (int64, *Error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > 9007199254740991 || (len(s) > 1 && s[0] == '0') || s[0] == '+' {
		return 0, newError(CodeInvalidRequest, "%s must be a non-negative integer, got %q.", name, clip(s)).withField(name)
	}
	return n, nil
}

// parseLimit parses a positive page size no larger than max; absent gives def.
func parseLimit(s string, def, max int) (int, *Error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max || s[0] == '+' {
		return 0, newError(CodeInvalidRequest, "limit must be an integer from 1 to %d, got %q.", max, clip(s)).withField("limit")
	}
	return n, nil
}
