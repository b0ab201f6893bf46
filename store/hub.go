package store

import "sync"

// Hub is an in-process change notifier implementing the semantics of [RunStore.Subscribe]:
// per (org, key) topic, each subscriber owns a channel with a buffer of one that a Notify fills
// without ever blocking (notifications coalesce), so a slow subscriber never delays a writer
// (relay.md §3: a subscriber "never blocks the writer"). Backends that notify in process use
// one Hub per lane, with key the run ID (runs lane) or the stream name (later lanes).
//
// The zero value is ready to use. All methods are safe for concurrent use.
type Hub struct {
	mu     sync.Mutex
	topics map[hubTopic]map[*hubSub]struct{}
	closed bool
}

type hubTopic struct{ org, key string }

type hubSub struct {
	ch chan struct{}
}

// Subscribe registers a subscriber of (org, key) and returns its channel and an idempotent
// cancel function. After Close it returns an already closed channel.
func (h *Hub) Subscribe(org, key string) (<-chan struct{}, func()) {
	s := &hubSub{ch: make(chan struct{}, 1)}
	t := hubTopic{org, key}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	if h.topics == nil {
		h.topics = make(map[hubTopic]map[*hubSub]struct{})
	}
	subs := h.topics[t]
	if subs == nil {
		subs = make(map[*hubSub]struct{})
		h.topics[t] = subs
	}
	subs[s] = struct{}{}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if subs := h.topics[t]; subs != nil {
				delete(subs, s)
				if len(subs) == 0 {
					delete(h.topics, t)
				}
			}
		})
	}
}

// Notify wakes every subscriber of (org, key) without blocking.
func (h *Hub) Notify(org, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.topics[hubTopic{org, key}] {
		select {
		case s.ch <- struct{}{}:
		default: // a wake-up is already pending; they coalesce
		}
	}
}

// NotifyAll wakes every subscriber of every topic without blocking: what a backend does when
// its change feed may have missed commits (its subscribers re-read).
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.topics {
		for s := range subs {
			select {
			case s.ch <- struct{}{}:
			default:
			}
		}
	}
}

// Subscribers returns the number of live subscriptions (for the relay's `subscribers` metric).
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, subs := range h.topics {
		n += len(subs)
	}
	return n
}

// Close closes every subscriber channel; later Subscribe calls get closed channels. Close is
// idempotent.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for _, subs := range h.topics {
		for s := range subs {
			close(s.ch)
		}
	}
	h.topics = nil
}
