package relay

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/agentwire/agentwire/events"
)

// Checkpoints off the request path. A run's reducer snapshot holds every event ID and
// fingerprint (events.md §8.1), so encoding and storing it costs time in proportion to the run:
// megabytes for a long one. The relay stores a run's first checkpoint with its first batch
// (the run's row and checkpoint are created together) and its last with the batch that makes
// the run terminal (so a finished run's checkpoint covers all of it, whatever happens next);
// in between, a checkpoint is due after Config.CheckpointEvery events (or, for a long run, as
// many events as the last checkpoint covers: checkpointInterval) and is written by one background goroutine after that batch has
// committed: the state is immutable (the reducer is persistent), so the goroutine encodes
// it while the run moves on, and store.RunStore.PutCheckpoint stores it unless a newer one is
// there already. The events of each batch and the run's status and counters still commit
// together (relay.md §4); the checkpoint is a cache of a prefix of them, and a reader always
// gets the checkpoint re-reduced with the stored events after it, so a checkpoint written late
// or lost to a crash changes no answer, only how many events a cold load re-reduces.

// checkpointQueue bounds the checkpoints waiting for the writer goroutine; when it is full a
// due checkpoint is skipped and becomes due again with the run's next batch. The states the
// queue holds are bounded by bytes too (relay.md §3): at most a quarter of the state cache's
// budget (and never less than minCheckpointQueueBytes) beyond the one being written, since a
// run evicted from the cache with a held-back checkpoint keeps its state alive in the queue.
// A checkpoint that does not fit is skipped: it costs a longer cold load, never an answer.
const (
	checkpointQueue         = 256
	minCheckpointQueueBytes = 16 << 20
)

// checkpointJob is one checkpoint to write, or (done set) a barrier of FlushCheckpoints.
type checkpointJob struct {
	org, runID string
	state      events.ReducerState
	seq        int64 // the state's last logical sequence
	size       int64 // the state's estimated heap (state.go)
	done       chan struct{}
}

type checkpointer struct {
	// queued is the estimated heap of the states in jobs; budget its bound.
	queued atomic.Int64
	budget int64
	jobs   chan checkpointJob
	stop   chan struct{} // closed by Shutdown: write what is queued, then exit
	done   chan struct{} // closed when the goroutine has exited
}

func (s *Server) startCheckpointer() {
	s.ck = &checkpointer{jobs: make(chan checkpointJob, checkpointQueue), stop: make(chan struct{}), done: make(chan struct{}),
		budget: max(s.cfg.StateCache/4, minCheckpointQueueBytes)}
	go s.runCheckpointer()
}

func (s *Server) runCheckpointer() {
	defer close(s.ck.done)
	for {
		select {
		case j := <-s.ck.jobs:
			s.writeCheckpoint(j)
		case <-s.ck.stop:
			for {
				select {
				case j := <-s.ck.jobs:
					s.writeCheckpoint(j)
				default:
					return
				}
			}
		}
	}
}

func (s *Server) writeCheckpoint(j checkpointJob) {
	if j.done != nil {
		close(j.done)
		return
	}
	defer s.ck.queued.Add(-j.size)
	snap := j.state.AppendJSON(nil)
	if _, err := s.store.PutCheckpoint(context.Background(), j.org, j.runID, j.seq, snap); err != nil {
		s.metrics.checkpointErrors.Inc()
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "checkpoint not stored",
			slog.String("org", j.org), slog.String("run", j.runID), slog.Int64("seq", j.seq), slog.Any("error", err))
		return
	}
	s.metrics.checkpoints.Inc()
}

// evicted is the run table's eviction hook: a run leaving the state cache with a due
// checkpoint that CheckpointMinInterval held back gets it queued now, since its state is
// about to be forgotten.
func (s *Server) evicted(ent *runEntry) {
	if s.checkpointDue(ent) {
		s.queueCheckpoint(ent.key.org, ent.key.run, ent.state, ent.last, ent.size)
	}
}

// writeDueCheckpoints stores, at Shutdown, the due checkpoints of the cached runs that
// CheckpointMinInterval held back, until ctx ends.
func (s *Server) writeDueCheckpoints(ctx context.Context) error {
	var jobs []checkpointJob
	s.runs.mu.Lock()
	for _, ent := range s.runs.entries {
		// An entry someone holds is being written by a request that outlived Shutdown's
		// wait; its own batch decides its checkpoint.
		if ent.refs == 0 && s.checkpointDue(ent) {
			jobs = append(jobs, checkpointJob{org: ent.key.org, runID: ent.key.run, state: ent.state, seq: ent.last})
		}
	}
	s.runs.mu.Unlock()
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.writeCheckpoint(j)
	}
	return nil
}

// queueCheckpoint offers a checkpoint to the writer goroutine without blocking; it reports
// whether it was queued (not when the queue is full, by count or by the bytes of the states
// it holds).
func (s *Server) queueCheckpoint(org, runID string, st events.ReducerState, seq, size int64) bool {
	select {
	case <-s.ck.stop:
		return false
	default:
	}
	if q := s.ck.queued.Add(size); q > s.ck.budget && q != size {
		s.ck.queued.Add(-size)
		return false
	}
	select {
	case s.ck.jobs <- checkpointJob{org: org, runID: runID, state: st, seq: seq, size: size}:
		return true
	default:
		s.ck.queued.Add(-size)
		return false
	}
}

// FlushCheckpoints waits until every checkpoint queued before the call has been written (or
// refused by the store), or ctx ends. After Shutdown it returns at once: Shutdown writes what
// was queued.
func (s *Server) FlushCheckpoints(ctx context.Context) error {
	j := checkpointJob{done: make(chan struct{})}
	select {
	case s.ck.jobs <- j:
	case <-s.ck.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-j.done:
		return nil
	case <-s.ck.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopCheckpointer writes the queued checkpoints and stops the goroutine (Shutdown), or gives
// up waiting when ctx ends (the goroutine still finishes on its own).
func (s *Server) stopCheckpointer(ctx context.Context) error {
	s.ckStopOnce.Do(func() { close(s.ck.stop) })
	select {
	case <-s.ck.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
