package relay

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentwire/agentwire/envelope"
	"github.com/agentwire/agentwire/store"
)

// sweepBatch bounds one store call of the sweeper.
const sweepBatch = 1000

// startSweeper runs [Server.Sweep] every Config.SweepInterval until Shutdown.
func (s *Server) startSweeper() {
	if s.cfg.SweepInterval < 0 {
		return
	}
	go func() {
		t := time.NewTicker(s.cfg.SweepInterval)
		defer t.Stop()
		for {
			select {
			case <-s.shutdown:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), s.cfg.SweepInterval+30*time.Second)
				if err := s.Sweep(ctx); err != nil && !errors.Is(err, store.ErrClosed) && !s.isShuttingDown() {
					s.log.LogAttrs(ctx, slog.LevelWarn, "sweep failed", slog.String("error", err.Error()))
				}
				cancel()
			}
		}
	}()
}

// Sweep runs one pass of the retention sweeper at the relay's clock: it deletes the envelopes
// older than the 72 h retention (envelope.md §5.1) and the session dedupe keys past the same
// window (stored and cached); the bus lane's part (expired messages, questions past their
// deadline, stale announcements, and a refresh of the live ones) is added by sweepBus. The
// sweeper goroutine calls it every Config.SweepInterval; tests and operators may call it
// directly.
func (s *Server) Sweep(ctx context.Context) error {
	now := s.now()
	for {
		n, err := s.store.ExpireEnvelopes(ctx, now.Add(-envelope.DeliveryDuplicateWindow), sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("envelope").Add(float64(n))
		if n < sweepBatch {
			break
		}
	}
	for {
		n, err := s.store.ExpireSessionDeliveries(ctx, now.Add(-envelope.DeliveryDuplicateWindow), sweepBatch)
		if err != nil {
			return err
		}
		s.metrics.sweeps.WithLabelValues("session_key").Add(float64(n))
		if n < sweepBatch {
			break
		}
	}
	s.notify.prune(now)
	if err := s.sweepBusFrames(ctx, now); err != nil {
		return err
	}
	return s.sweepBus(ctx, now)
}
