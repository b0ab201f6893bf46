package relay

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentwire/agentwire/events"
	"github.com/agentwire/agentwire/store"
)

// frame is one rendered SSE event frame (relay.md §2: `id: <logicalSequence>`,
// `event: <type>`, `data: <event JSON>`), shared by every subscriber of its run.
type frame struct {
	// cum is the feed's byte count up to and including this frame (set by publish), so a
	// subscriber's waiting bytes are two subtractions.
	cum      uint64
	seq      int64 // the event's logicalSequence
	prev     int64 // the logicalSequence of the run's event before it (0 for the first)
	terminal bool
	text     []byte
	at       time.Time // when its commit was acknowledged (fan-out lag)
	// batch is the buffer every frame of its committed batch was rendered into, one after the
	// other; text is batch[off:off+len(text)]. A subscriber writes a run of adjacent frames of
	// one batch as one slice of it, without copying them.
	batch *[]byte
	off   int
}

// appendFrame renders one SSE frame. The data is one line: event JSON never holds a raw LF.
func appendFrame(dst []byte, seq int64, typ string, data []byte) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// renderFrames renders a committed batch once for all subscribers; prev is the run's last
// logical sequence before the batch.
func renderFrames(evs []store.Event, prev int64, at time.Time) []*frame {
	size := 0
	for _, ev := range evs {
		size += len(ev.Data) + len(ev.Type) + 64
	}
	buf := make([]byte, 0, size)
	frames := make([]frame, len(evs))
	out := make([]*frame, len(evs))
	for i, ev := range evs {
		start := len(buf)
		buf = appendFrame(buf, ev.LogicalSequence, ev.Type, ev.Data)
		frames[i] = frame{seq: ev.LogicalSequence, prev: prev, terminal: isTerminalType(ev.Type),
			text: buf[start:len(buf):len(buf)], at: at, off: start}
		prev = ev.LogicalSequence
		out[i] = &frames[i]
	}
	// Had an append outgrown size, the final buffer still holds every frame at its offset.
	batch := &buf
	for i := range frames {
		frames[i].batch = batch
	}
	return out
}

func isTerminalType(t string) bool { return events.EventType(t).IsTerminal() }

func isTerminalStatus(s string) bool { return events.RunStatus(s).IsTerminal() }

// fanout delivers committed frames to the live SSE subscribers of each run. A run with
// subscribers has a feed: a ring of its most recent frames that all its subscribers share,
// each keeping its own position in it. publish appends a batch to the ring and wakes each
// subscriber with one non-blocking signal, however many frames the batch holds; it never blocks
// (relay.md §3). A subscriber that already had frames waiting and would now have more than its
// queue limit waiting is dropped and signalled; one that had caught up takes even a large batch
// (when the batch is longer than the ring, it reads the store instead).
type fanout struct {
	mu    sync.Mutex
	feeds map[runKey]*feed
	// watch, when set, follows the store for a new feed (see Server.watchStore): the fanout
	// calls it with f.mu held when it creates the feed, so the feed's store subscription
	// exists before its first subscriber reads the store; it must start its own goroutine.
	watch func(k runKey, fd *feed)
}

// feedRing is the number of recent frames a feed keeps (a power of two, ≥ the largest queue
// limit worth having: a subscriber further behind is dropped or reads the store).
const feedRing = 4096

type feed struct {
	mu   sync.Mutex
	ring [feedRing]*frame
	head uint64 // frames ever published to the feed; frame i lives in ring[i%feedRing]
	cum  uint64 // bytes of the frames ever published to the feed
	tail uint64 // ring entries below tail are cleared (every subscriber is past them)
	subs map[*subscriber]struct{}
	// storeClosed: the store's notifications ended (it closed); every subscriber ends.
	storeClosed bool
	stop        chan struct{} // closed when the feed's last subscriber leaves
}

type subscriber struct {
	feed       *feed
	queue      int
	queueBytes uint64
	wake       chan struct{} // capacity 1: frames (or an overflow) are waiting
	next       uint64        // the position of the next frame to take (feed.mu)
	overflow   chan struct{} // closed (under feed.mu) when the subscriber is dropped
	dropped    bool
	recheck    bool // (feed.mu) the store may hold events no local frame brought: read it
}

func newFanout() *fanout { return &fanout{feeds: make(map[runKey]*feed)} }

func (f *fanout) subscribe(k runKey, queue int, queueBytes int64) *subscriber {
	f.mu.Lock()
	defer f.mu.Unlock()
	fd := f.feeds[k]
	if fd == nil {
		fd = &feed{subs: make(map[*subscriber]struct{}), stop: make(chan struct{})}
		f.feeds[k] = fd
		if f.watch != nil {
			f.watch(k, fd)
		}
	}
	fd.mu.Lock()
	defer fd.mu.Unlock()
	sub := &subscriber{feed: fd, queue: max(queue, 1), queueBytes: uint64(max(queueBytes, 1)), wake: make(chan struct{}, 1),
		next: fd.head, overflow: make(chan struct{})}
	fd.subs[sub] = struct{}{}
	if fd.storeClosed {
		sub.wake <- struct{}{}
	}
	return sub
}

func (f *fanout) unsubscribe(k runKey, sub *subscriber) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fd := sub.feed
	fd.mu.Lock()
	delete(fd.subs, sub)
	empty := len(fd.subs) == 0
	fd.mu.Unlock()
	if empty && f.feeds[k] == fd {
		delete(f.feeds, k)
		close(fd.stop)
	}
}

// signal marks every subscriber of the feed with mark (under fd.mu) and wakes it.
func (fd *feed) signal(mark func(*subscriber)) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	for sub := range fd.subs {
		mark(sub)
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// published returns how many frames were ever published to the feed.
func (fd *feed) published() uint64 {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	return fd.head
}

// watchStore follows the store's change notifications of one feed's run, for all its
// subscribers at once (one goroutine per followed run, not per subscriber). A notification
// not followed by a local frame within Config.StoreRecheck means a commit was made elsewhere
// (another relay on the same store): every subscriber is then told to read the store from
// its cursor. When the store closes, every subscriber ends. The store subscription is taken
// here, with the fanout's lock held, before any subscriber of the feed reads the store.
func (s *Server) watchStore(k runKey, fd *feed) {
	notify, cancel := s.store.Subscribe(k.org, k.run)
	go func() {
		defer cancel()
		var recheck <-chan time.Time
		var headAtNotify uint64
		for {
			select {
			case <-fd.stop:
				return
			case _, ok := <-notify:
				if !ok {
					fd.mu.Lock()
					fd.storeClosed = true
					fd.mu.Unlock()
					fd.signal(func(*subscriber) {})
					return
				}
				if recheck == nil {
					recheck = time.After(s.cfg.StoreRecheck)
					headAtNotify = fd.published()
				}
			case <-recheck:
				recheck = nil
				if fd.published() == headAtNotify {
					fd.signal(func(sub *subscriber) { sub.recheck = true })
				}
			}
		}
	}()
}

// reset re-arms a dropped subscriber (used while it still replays from the store, where
// falling behind is expected): it skips what is waiting and gets a fresh overflow channel.
func (f *fanout) reset(sub *subscriber) <-chan struct{} {
	fd := sub.feed
	fd.mu.Lock()
	defer fd.mu.Unlock()
	sub.next = fd.head
	sub.dropped = false
	sub.overflow = make(chan struct{})
	select {
	case <-sub.wake:
	default:
	}
	return sub.overflow
}

// publishEvents renders a committed batch and publishes it, only when the run has a feed:
// a batch nobody follows is never rendered. (A subscriber whose feed appears after the check
// registered after the commit, so its own read from the store finds the batch.)
func (f *fanout) publishEvents(k runKey, evs []store.Event, prev int64, at time.Time) {
	f.mu.Lock()
	fd := f.feeds[k]
	f.mu.Unlock()
	if fd != nil {
		f.publish(k, renderFrames(evs, prev, at))
	}
}

// publish offers frames, in order, to every subscriber of k. The caller holds the run's writer
// lock, so frames of one run are published in commit order.
func (f *fanout) publish(k runKey, frames []*frame) {
	if len(frames) == 0 {
		return
	}
	f.mu.Lock()
	fd := f.feeds[k]
	f.mu.Unlock()
	if fd == nil {
		return
	}
	fd.mu.Lock()
	defer fd.mu.Unlock()
	// A subscriber's waiting bytes are read before the batch enters the ring (it may
	// overwrite the slot of the subscriber's next frame).
	before, beforeCum := fd.head, fd.cum
	var batchBytes uint64
	for _, fr := range frames {
		batchBytes += uint64(len(fr.text))
	}
	n := uint64(len(frames))
	for sub := range fd.subs {
		if sub.dropped {
			continue
		}
		waiting, waitingBytes := before-sub.next, uint64(0)
		if fr := fd.ring[sub.next%feedRing]; waiting > 0 && waiting <= feedRing && fr != nil {
			waitingBytes = beforeCum - (fr.cum - uint64(len(fr.text)))
		}
		if waiting > 0 && (waiting+n > uint64(sub.queue) || waitingBytes+batchBytes > sub.queueBytes) {
			sub.dropped = true
			close(sub.overflow)
		}
	}
	for _, fr := range frames {
		fd.cum += uint64(len(fr.text))
		fr.cum = fd.cum
		fd.ring[fd.head%feedRing] = fr
		fd.head++
	}
	low := fd.head
	for sub := range fd.subs {
		if sub.dropped {
			continue // signalled by its closed overflow channel
		}
		low = min(low, sub.next)
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
	// Release the frames every live subscriber has passed (they pin their batch's buffer).
	if fd.head-low > feedRing {
		low = fd.head - feedRing
	}
	for ; fd.tail < low; fd.tail++ {
		if fd.tail+feedRing >= fd.head { // not overwritten by this batch
			fd.ring[fd.tail%feedRing] = nil
		}
	}
}

// maxTake bounds the frames one take returns (one write and flush of the subscriber).
const maxTake = 256

// take appends the frames waiting for sub to dst, at most maxTake (the subscriber is woken
// again when more wait). gap reports that frames it had not taken left the ring, or that the
// store may hold events no local frame brought (watchStore): the caller reads the store from
// its cursor. closed reports that the store closed: the subscriber ends.
func (f *fanout) take(sub *subscriber, dst []*frame) (_ []*frame, gap, closed bool) {
	fd := sub.feed
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if fd.storeClosed {
		return dst, false, true
	}
	if sub.dropped {
		return dst, false, false
	}
	if sub.recheck {
		sub.recheck, gap = false, true
	}
	if fd.head-sub.next > feedRing {
		sub.next = fd.head
		return dst, true, false
	}
	end := min(fd.head, sub.next+maxTake)
	for i := sub.next; i < end; i++ {
		dst = append(dst, fd.ring[i%feedRing])
	}
	sub.next = end
	if end < fd.head {
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
	return dst, gap, false
}

// replayPage is how many stored events one store read returns while replaying.
const replayPage = 1000

// sseConn writes one SSE response and tracks its cursor (the last delivered logicalSequence).
type sseConn struct {
	s        *Server
	w        http.ResponseWriter
	rc       *http.ResponseController
	buf      []byte
	cursor   int64
	terminal bool // the event at cursor is terminal
	// segs are live frames waiting to be written after buf's bytes: runs of adjacent frames
	// of one committed batch, each written as a slice of the batch's buffer (no copy).
	segs     []segment
	lag      []lagCount
	take     []*frame  // frames taken from the feed, reused
	deadline time.Time // the write deadline last set
}

// segment is batch[off:end] of one committed batch's frames.
type segment struct {
	batch    *[]byte
	off, end int
}

// lagCount is n delivered frames committed at the instant at.
type lagCount struct {
	at time.Time
	n  int
}

// stored appends the frames of stored events after the cursor. Events at or below the cursor
// are skipped; the one at the cursor tells whether the run already ended there.
func (c *sseConn) stored(evs []store.Event) {
	c.own()
	for _, ev := range evs {
		if ev.LogicalSequence <= c.cursor {
			if ev.LogicalSequence == c.cursor && isTerminalType(ev.Type) {
				c.terminal = true
			}
			continue
		}
		c.buf = appendFrame(c.buf, ev.LogicalSequence, ev.Type, ev.Data)
		c.cursor = ev.LogicalSequence
		if isTerminalType(ev.Type) {
			c.terminal = true
			return
		}
	}
}

// live appends a fan-out frame. It returns false when the frame does not follow the cursor
// (events committed outside this process are missing): the caller then reads the store.
func (c *sseConn) live(f *frame) bool {
	if f.seq <= c.cursor {
		return true // already delivered by a store read
	}
	if f.prev > c.cursor {
		return false
	}
	switch n := len(c.segs); {
	case f.batch == nil || len(c.buf) > 0:
		c.own()
		c.buf = append(c.buf, f.text...)
	case n > 0 && c.segs[n-1].batch == f.batch && c.segs[n-1].end == f.off:
		c.segs[n-1].end += len(f.text)
	default:
		c.segs = append(c.segs, segment{f.batch, f.off, f.off + len(f.text)})
	}
	c.cursor = f.seq
	c.terminal = f.terminal
	if n := len(c.lag); n > 0 && c.lag[n-1].at.Equal(f.at) {
		c.lag[n-1].n++
	} else {
		c.lag = append(c.lag, lagCount{f.at, 1})
	}
	return true
}

// own copies the waiting live segments into buf, so that bytes appended to buf next follow
// them.
func (c *sseConn) own() {
	for _, sg := range c.segs {
		c.buf = append(c.buf, (*sg.batch)[sg.off:sg.end]...)
	}
	clear(c.segs)
	c.segs = c.segs[:0]
}

func (c *sseConn) comment(text string) {
	c.own()
	c.buf = append(c.buf, ": "...)
	c.buf = append(c.buf, text...)
	c.buf = append(c.buf, "\n\n"...)
}

// flush writes the buffered frames within the write timeout.
func (c *sseConn) flush() error {
	if len(c.buf) == 0 && len(c.segs) == 0 {
		return nil
	}
	// The write deadline is moved only when less than 3/4 of WriteTimeout is left: a flush
	// always has that long, and most flushes skip the timer update.
	if now := time.Now(); c.deadline.Sub(now) < c.s.cfg.WriteTimeout*3/4 {
		c.deadline = now.Add(c.s.cfg.WriteTimeout)
		_ = c.rc.SetWriteDeadline(c.deadline)
	}
	var err error
	if len(c.buf) > 0 {
		_, err = c.w.Write(c.buf)
	}
	// Live segments come after buf's bytes (own keeps it so); a segment as large as the
	// response's buffer goes to the connection without a copy.
	for _, sg := range c.segs {
		if err == nil {
			_, err = c.w.Write((*sg.batch)[sg.off:sg.end])
		}
	}
	if err == nil {
		err = c.rc.Flush()
	}
	c.buf = c.buf[:0]
	clear(c.segs) // they pin their batches
	c.segs = c.segs[:0]
	if len(c.lag) > 0 {
		now := time.Now()
		for _, l := range c.lag {
			c.s.metrics.fanoutLag.observeN(now.Sub(l.at).Seconds(), l.n)
		}
		c.lag = c.lag[:0]
	}
	return err
}

// catchUp reads the store from the cursor until it is exhausted (or the run ended) and
// writes what it finds.
func (c *sseConn) catchUp(ctx context.Context, org, runID string) error {
	for {
		evs, more, err := c.s.readPage(ctx, org, runID, c.cursor, replayPage)
		if err != nil {
			return err
		}
		c.stored(evs)
		if err := c.flush(); err != nil {
			return err
		}
		if !more || c.terminal || c.s.isShuttingDown() {
			return nil
		}
	}
}

// streamEvents serves the SSE form of GET /v1/runs/{runId}/events: replay after cursor from
// the store, then live frames from the fan-out, heartbeats, and the end after the terminal
// event unless follow.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, p *Principal, runID string, cursor int64, follow bool) {
	ctx := r.Context()
	if ok, e := s.openStream(); !ok {
		writeError(w, e)
		return
	}
	defer s.closeStream()
	g := s.holdGrant(p, RightRunsRead)
	defer s.dropGrant(g)
	key := runKey{p.Org, runID}
	// Subscribe before the first read, so nothing committed after it is missed.
	sub := s.fan.subscribe(key, s.limits.SubscriberQueue, s.limits.SubscriberQueueBytes)
	defer s.fan.unsubscribe(key, sub)
	var ovf <-chan struct{} = sub.overflow

	// Read from one before the cursor: the event at the cursor, if any, tells whether the
	// run already ended there (then the stream ends at once).
	first, firstMore, err := s.readPage(ctx, p.Org, runID, max(cursor-1, 0), replayPage)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, runNotFound())
		return
	}
	if err != nil {
		writeError(w, s.storeErr(ctx, "read events", err))
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the request is read; the stream is long-lived
	h := w.Header()
	h.Set("Content-Type", MediaSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	// No chunked framing (net/http then closes the connection after the stream, as the SSE
	// specification recommends): each flush is one write of the frames, instead of a chunk
	// header, the frames and a separate 2-byte chunk trailer, so a subscriber wakes up once.
	h.Set("Transfer-Encoding", "identity")
	w.WriteHeader(http.StatusOK)
	s.metrics.subscribers.Inc()
	defer s.metrics.subscribers.Dec()

	c := &sseConn{s: s, w: w, rc: rc, cursor: cursor, buf: make([]byte, 0, 4096)}
	c.stored(first)
	if c.cursor == cursor && !c.terminal {
		// Nothing after the cursor, and no event at it: the run may still have ended before
		// it (a cursor past a finished run's last event). Only the stored status can tell.
		if _, info, err := s.store.GetRun(ctx, p.Org, runID); err == nil &&
			isTerminalStatus(info.Status) && info.LastLogicalSequence <= cursor {
			c.terminal = true
		}
	}
	if err := c.flush(); err != nil {
		return
	}
	ended := func() bool { return c.terminal && !follow }
	if !ended() && firstMore {
		if err := c.catchUp(ctx, p.Org, runID); err != nil {
			return
		}
	}
	// Falling behind the live fan-out while replaying is expected: re-arm and read the store
	// again until the replay has caught up with a quiet queue.
	for !ended() {
		select {
		case <-ovf:
			ovf = s.fan.reset(sub)
			if err := c.catchUp(ctx, p.Org, runID); err != nil {
				return
			}
			continue
		default:
		}
		break
	}

	hbC, hbStop := s.heartbeat()
	defer hbStop()
	for !ended() {
		select {
		case <-ovf:
			s.slowConsumer(ctx, c, runID)
			return
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-s.shutdown:
			c.comment("agentwire: server shutting down; last delivered id: " + strconv.FormatInt(c.cursor, 10))
			_ = c.flush()
			return
		case <-g.ended():
			c.comment("agentwire: disconnected: " + g.reason + "; last delivered id: " + strconv.FormatInt(c.cursor, 10))
			_ = c.flush()
			return
		case <-ovf:
			s.slowConsumer(ctx, c, runID)
			return
		case <-sub.wake:
			var gap, closed bool
			c.take, gap, closed = s.fan.take(sub, c.take[:0])
			if closed {
				c.comment("agentwire: store closed; last delivered id: " + strconv.FormatInt(c.cursor, 10))
				_ = c.flush()
				return
			}
			for _, f := range c.take {
				if !c.live(f) {
					gap = true
					break
				}
				if ended() {
					break
				}
			}
			clear(c.take)
			if err := c.flush(); err != nil {
				return
			}
			if gap && !ended() {
				if err := c.catchUp(ctx, p.Org, runID); err != nil {
					return
				}
			}
		case <-hbC:
			c.comment("heartbeat")
			if err := c.flush(); err != nil {
				return
			}
		}
	}
}

// slowConsumer ends a live stream whose queue overflowed, naming the cursor to resume from.
func (s *Server) slowConsumer(ctx context.Context, c *sseConn, runID string) {
	s.metrics.slowDisconnects.Inc()
	s.log.LogAttrs(ctx, slog.LevelWarn, "slow SSE subscriber disconnected", slog.String("run", runID),
		slog.Int64("lastDeliveredId", c.cursor), slog.Int("queue", s.limits.SubscriberQueue))
	c.comment("agentwire: disconnected: subscriber queue of " + strconv.Itoa(s.limits.SubscriberQueue) +
		" frames (or " + strconv.FormatInt(s.limits.SubscriberQueueBytes, 10) + " bytes) overflowed; last delivered id: " + strconv.FormatInt(c.cursor, 10) +
		" (resume with Last-Event-ID: " + strconv.FormatInt(c.cursor, 10) + ")")
	_ = c.flush()
}
