package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentwire/agentwire/store"
)

// ReadEvents implements [store.RunStore.ReadEvents] on the reader pool.
func (s *Store) ReadEvents(ctx context.Context, org, runID string, after int64, limit int) ([]store.Event, error) {
	evs, _, err := s.readEvents(ctx, org, runID, after, limit, 0)
	return evs, err
}

// ReadEventsBounded implements [store.BoundedReader]: rows are scanned one at a time, so a page
// stopped at its budget never held more than one event beyond it.
func (s *Store) ReadEventsBounded(ctx context.Context, org, runID string, after int64, limit, maxBytes int) ([]store.Event, bool, error) {
	if maxBytes <= 0 {
		return nil, false, fmt.Errorf("%w: byte budget %d is not positive", store.ErrInvalid, maxBytes)
	}
	return s.readEvents(ctx, org, runID, after, limit, maxBytes)
}

// readEvents reads a page of at most limit events and, when maxBytes > 0, at most maxBytes of
// event data (but at least one event).
func (s *Store) readEvents(ctx context.Context, org, runID string, after int64, limit, maxBytes int) ([]store.Event, bool, error) {
	if err := store.ValidateRead(org, runID, after, limit); err != nil {
		return nil, false, err
	}
	if s.isClosed() {
		return nil, false, store.ErrClosed
	}
	// Runs are never deleted, so the run lookup and the event range need no shared
	// transaction: whatever the range returns is a committed prefix-closed set.
	var id int64
	if err := s.selRun.QueryRowContext(ctx, org, runID).Scan(&id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, store.ErrNotFound
		}
		return nil, false, s.readErr(err)
	}
	rows, err := s.selEvents.QueryContext(ctx, id, after, limit)
	if err != nil {
		return nil, false, s.readErr(err)
	}
	defer rows.Close()
	out := make([]store.Event, 0, min(limit, 256))
	size := 0
	for rows.Next() {
		var e store.Event
		if err := rows.Scan(&e.LogicalSequence, &e.EventID, &e.Type, &e.Data); err != nil {
			return nil, false, s.readErr(err)
		}
		if maxBytes > 0 && len(out) > 0 && size+len(e.Data) > maxBytes {
			return out, true, nil
		}
		size += len(e.Data)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.readErr(err)
	}
	return out, false, nil
}

// GetRun implements [store.RunStore.GetRun]: checkpoint (with its chunks, for a large one)
// and metadata are read in one read transaction, so from one committed state.
func (s *Store) GetRun(ctx context.Context, org, runID string) ([]byte, store.RunInfo, error) {
	if err := store.ValidateRunKey(org, runID); err != nil {
		return nil, store.RunInfo{}, err
	}
	if s.isClosed() {
		return nil, store.RunInfo{}, store.ErrClosed
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, store.RunInfo{}, s.readErr(err)
	}
	defer tx.Rollback()
	info := store.RunInfo{RunID: runID}
	var id, created, updated int64
	var chunks int
	var snapshot []byte
	err = tx.StmtContext(ctx, s.selSnapshot).QueryRowContext(ctx, org, runID).Scan(&id, &info.Status, &created, &updated,
		&info.EventCount, &info.LastLogicalSequence, &info.SnapshotSequence, &snapshot, &chunks)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.RunInfo{}, store.ErrNotFound
	}
	if err != nil {
		return nil, store.RunInfo{}, s.readErr(err)
	}
	if chunks > 0 {
		if snapshot, err = s.readChunks(ctx, tx, id, info.SnapshotSequence, chunks); err != nil {
			return nil, store.RunInfo{}, err
		}
	}
	info.CreatedAt = time.Unix(0, created).UTC()
	info.UpdatedAt = time.Unix(0, updated).UTC()
	return snapshot, info, nil
}

// readChunks concatenates the n chunks of the run's checkpoint at seq.
func (s *Store) readChunks(ctx context.Context, tx *sql.Tx, run, seq int64, n int) ([]byte, error) {
	rows, err := tx.StmtContext(ctx, s.selChunks).QueryContext(ctx, run, seq)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []byte
	next := 0
	for rows.Next() {
		var idx int
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			return nil, s.readErr(err)
		}
		if idx != next {
			return nil, fmt.Errorf("sqlite: checkpoint at %d: chunk %d missing", seq, next)
		}
		if out == nil {
			out = make([]byte, 0, n*CheckpointChunk)
		}
		out = append(out, data...)
		next++
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	if next != n {
		return nil, fmt.Errorf("sqlite: checkpoint at %d: %d of %d chunks", seq, next, n)
	}
	return out, nil
}

// ListRuns implements [store.RunStore.ListRuns]. Order is the store-wide update sequence,
// descending, which is commit order; updated_at follows it because the writer never lets the
// clock go back. The cursor is the update sequence of the last run of the page.
func (s *Store) ListRuns(ctx context.Context, org string, q store.ListRunsQuery) (store.RunPage, error) {
	if err := store.ValidateList(org, q); err != nil {
		return store.RunPage{}, err
	}
	var before int64
	if q.Cursor != "" {
		var err error
		if before, err = decodeCursor(q.Cursor); err != nil {
			return store.RunPage{}, err
		}
	}
	if s.isClosed() {
		return store.RunPage{}, store.ErrClosed
	}
	var sb strings.Builder
	args := []any{org}
	sb.WriteString(`SELECT run_id, status, created_at, updated_at, event_count, last_seq, update_seq FROM runs WHERE org = ?`)
	if q.Status != "" {
		sb.WriteString(` AND status = ?`)
		args = append(args, q.Status)
	}
	if before > 0 {
		sb.WriteString(` AND update_seq < ?`)
		args = append(args, before)
	}
	// One extra row tells whether a next page exists.
	sb.WriteString(` ORDER BY update_seq DESC LIMIT ?`)
	args = append(args, int64(q.Limit)+1)
	rows, err := s.rdb.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return store.RunPage{}, s.readErr(err)
	}
	defer rows.Close()
	var page store.RunPage
	var lastSeq int64
	for rows.Next() {
		if len(page.Runs) == q.Limit {
			page.Next = encodeCursor(lastSeq)
			break
		}
		var r store.RunInfo
		var created, updated int64
		if err := rows.Scan(&r.RunID, &r.Status, &created, &updated, &r.EventCount, &r.LastLogicalSequence, &lastSeq); err != nil {
			return store.RunPage{}, s.readErr(err)
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		r.UpdatedAt = time.Unix(0, updated).UTC()
		page.Runs = append(page.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return store.RunPage{}, s.readErr(err)
	}
	return page, nil
}

// Subscribe implements [store.RunStore.Subscribe] in process: the writer notifies after
// COMMIT and before answering the caller.
func (s *Store) Subscribe(org, runID string) (<-chan struct{}, func()) {
	return s.runs.Subscribe(org, runID)
}

// cursorPrefix versions the cursor text so a later format can coexist.
const cursorPrefix = "runs.v1."

// encodeCursor makes the opaque ListRuns cursor for "runs with update_seq below n".
func encodeCursor(n int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(n, 10)))
}

// decodeCursor parses a cursor made by encodeCursor. It accepts exactly the strings
// encodeCursor produces (canonical base64, canonical positive decimal) and answers every
// other string with an error wrapping store.ErrInvalidCursor.
func decodeCursor(c string) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("%w %q", store.ErrInvalidCursor, c) }
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return bad()
	}
	digits, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return bad()
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != digits {
		return bad()
	}
	return n, nil
}
