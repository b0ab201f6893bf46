package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentwire/agentwire/store"
)

// The bus lane (store.BusStore). A stream is a bus_streams row keyed by (network, org, name);
// its last_seq is the counter its messages and task events take from inside the write
// transaction. A refused call rolls back to its savepoint and gives its seq back, a committed
// one never does, and stream rows are never deleted, so seq has no gap and no reuse. Times are
// unix nanoseconds, 0 for the zero time.

// nanos stores t; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos reads a time stored by nanos, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// visible reports whether a message expiring at expires (nanos, 0 = never) is still there at now.
func visible(expires, now int64) bool { return expires == 0 || expires > now }

// streamTopic is the Hub topic of a stream; a network never contains NUL, so the keys of
// distinct streams differ.
func streamTopic(k store.StreamKey) (org, key string) { return k.Org, k.Network + "\x00" + k.Name }

// msgCols are the bus_messages columns of a msgRow, in its order.
const msgCols = `m.id, m.gid, m.seq, m.sender_org, m.sender_instance, m.client_msg_id, m.type, m.thread_id, m.reply_to,
	m.to_org, m.to_instance, m.deadline, m.server_time, m.expires_at, m.data`

// msgRow is one scanned bus_messages row.
type msgRow struct {
	id                            int64
	m                             store.StoredMessage
	deadline, serverTime, expires int64
}

// dest returns the scan destinations of msgCols followed by extra.
func (r *msgRow) dest(extra ...any) []any {
	m := &r.m
	return append([]any{&r.id, &m.GID, &m.Seq, &m.SenderOrg, &m.SenderInstance, &m.ClientMsgID, &m.Type, &m.ThreadID,
		&m.ReplyTo, &m.ToOrg, &m.ToInstance, &r.deadline, &r.serverTime, &r.expires, &m.Data}, extra...)
}

// message converts the scanned times and returns the message.
func (r *msgRow) message() store.StoredMessage {
	r.m.Deadline, r.m.ServerTime, r.m.ExpiresAt = fromNanos(r.deadline), fromNanos(r.serverTime), fromNanos(r.expires)
	return r.m
}

// streamCols are the bus_streams columns that complete a message's key.
const streamCols = `s.network, s.org, s.name`

// propCols are the task_proposals columns of a propRow, in its order.
const propCols = `p.id, p.vault, p.number, p.seq, p.question_gid, p.created_at, p.data`

// propRow is one scanned task_proposals row.
type propRow struct {
	p       store.TaskProposal
	created int64
}

func (r *propRow) dest(extra ...any) []any {
	p := &r.p
	return append([]any{&p.ID, &p.Vault, &p.Number, &p.Seq, &p.QuestionGID, &r.created, &p.Data}, extra...)
}

func (r *propRow) proposal() store.TaskProposal {
	r.p.CreatedAt = fromNanos(r.created)
	return r.p
}

// busStmts are the writer's statements of the bus lane.
type busStmts struct {
	byClient, byGID, inStream, delReceipts, delMessage, nextSeq, insMessage, settle *sql.Stmt
	selStream, selReceipt, putReceipt                                               *sql.Stmt
	selProposal, nextNumber, bumpSeq, insProposal, unpend                           *sql.Stmt
	expireReceipts, expireMessages                                                  *sql.Stmt
	frames                                                                          frameStmts
}

func (b *busStmts) defs() []stmtDef {
	return append(b.frames.defs(), []stmtDef{
		{&b.byClient, `SELECT ` + msgCols + `, ` + streamCols + ` FROM bus_messages m JOIN bus_streams s ON s.id = m.stream
			WHERE m.sender_org = ? AND m.sender_instance = ? AND m.client_msg_id = ?`},
		{&b.byGID, `SELECT id, expires_at FROM bus_messages WHERE gid = ?`},
		{&b.inStream, `SELECT id, expires_at FROM bus_messages WHERE gid = ? AND stream = ?`},
		{&b.delReceipts, `DELETE FROM bus_receipts WHERE message = ?`},
		{&b.delMessage, `DELETE FROM bus_messages WHERE id = ?`},
		// One statement creates the stream with its first message and takes its next seq.
		{&b.nextSeq, `INSERT INTO bus_streams (network, org, name, last_seq) VALUES (?, ?, ?, 1)
			ON CONFLICT (network, org, name) DO UPDATE SET last_seq = last_seq + 1 RETURNING id, last_seq`},
		{&b.insMessage, `INSERT INTO bus_messages (gid, stream, seq, sender_org, sender_instance, client_msg_id, type, thread_id,
			reply_to, to_org, to_instance, deadline, pending, server_time, expires_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		// An answer stored before a pending question's deadline settles it (S13).
		{&b.settle, `UPDATE bus_messages SET pending = 0 WHERE gid = ? AND stream = ? AND pending = 1 AND deadline > ?`},
		{&b.selStream, `SELECT id FROM bus_streams WHERE network = ? AND org = ? AND name = ?`},
		{&b.selReceipt, `SELECT state FROM bus_receipts WHERE message = ? AND recipient = ?`},
		{&b.putReceipt, `INSERT INTO bus_receipts (message, recipient, state, delivered_at, read_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (message, recipient) DO UPDATE SET state = excluded.state, read_at = excluded.read_at`},
		{&b.selProposal, `SELECT ` + propCols + ` FROM task_proposals p WHERE p.question_gid = ? AND p.stream = ?`},
		{&b.nextNumber, `INSERT INTO task_counters (org, vault, last_number) VALUES (?, ?, 1)
			ON CONFLICT (org, vault) DO UPDATE SET last_number = last_number + 1 RETURNING last_number`},
		{&b.bumpSeq, `UPDATE bus_streams SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq`},
		{&b.insProposal, `INSERT INTO task_proposals (org, stream, vault, number, seq, question_gid, created_at, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&b.unpend, `UPDATE bus_messages SET pending = 0 WHERE id = ?`},
		// The sweeper's two deletes select the same rows: the first does not touch
		// bus_messages, and the order is total.
		{&b.expireReceipts, `DELETE FROM bus_receipts WHERE message IN (SELECT id FROM bus_messages
			WHERE expires_at > 0 AND expires_at <= ?1 ORDER BY expires_at, id LIMIT ?2)`},
		{&b.expireMessages, `DELETE FROM bus_messages WHERE id IN (SELECT id FROM bus_messages
			WHERE expires_at > 0 AND expires_at <= ?1 ORDER BY expires_at, id LIMIT ?2)`},
	}...)
}

// dropMessage deletes an expired, unswept message that still holds a key a new write needs
// (its client_msg_id or gid): an expired message is gone.
func (w *writer) dropMessage(ctx context.Context, id int64) error {
	if _, err := w.bus.delReceipts.ExecContext(ctx, id); err != nil {
		return fmt.Errorf("sqlite: delete expired receipts: %w", err)
	}
	if _, err := w.bus.delMessage.ExecContext(ctx, id); err != nil {
		return fmt.Errorf("sqlite: delete expired message: %w", err)
	}
	w.dropped = true
	return nil
}

// streamRow finds the stream's row inside the write transaction, or answers store.ErrNotFound.
func (w *writer) streamRow(ctx context.Context, k store.StreamKey) (int64, error) {
	var id int64
	err := w.bus.selStream.QueryRowContext(ctx, k.Network, k.Org, k.Name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: read stream: %w", err)
	}
	return id, nil
}

// messageIn finds the visible message gid of the stream row inside the write transaction, or
// answers store.ErrNotFound.
func (w *writer) messageIn(ctx context.Context, streamID int64, gid string, now int64) (int64, error) {
	var id, expires int64
	err := w.bus.inStream.QueryRowContext(ctx, gid, streamID).Scan(&id, &expires)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !visible(expires, now)) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: read message: %w", err)
	}
	return id, nil
}

// msgOp is one AppendMessage call.
type msgOp struct {
	opBase
	m        store.MessageWrite
	out      store.StoredMessage
	replayed bool
}

func (o *msgOp) weight() int { return 1 }

func (o *msgOp) exec(ctx context.Context, w *writer, g *groupState) error {
	m := o.m
	// S9: the original of a resent client_msg_id answers, unless it expired (then it is gone
	// and the send is stored anew).
	var orig msgRow
	k := &orig.m.Stream
	err := sql.ErrNoRows
	if !w.s.clientIDs.absent(m.SenderOrg, m.SenderInstance, m.ClientMsgID) {
		err = w.bus.byClient.QueryRowContext(ctx, m.SenderOrg, m.SenderInstance, m.ClientMsgID).Scan(orig.dest(&k.Network, &k.Org, &k.Name)...)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("sqlite: read client_msg_id: %w", err)
	case visible(orig.expires, g.wall):
		o.out, o.replayed = orig.message(), true
		return nil
	default:
		if err := w.dropMessage(ctx, orig.id); err != nil {
			return err
		}
	}
	gid := m.GID
	if gid == "" {
		gid = store.NewULID(m.ServerTime)
	} else {
		var id, expires int64
		err := w.bus.byGID.QueryRowContext(ctx, gid).Scan(&id, &expires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("sqlite: read gid: %w", err)
		case visible(expires, g.wall):
			return fmt.Errorf("%w %q", store.ErrDuplicateGID, gid)
		default:
			if err := w.dropMessage(ctx, id); err != nil {
				return err
			}
		}
	}
	var streamID, seq int64
	if err := w.bus.nextSeq.QueryRowContext(ctx, m.Stream.Network, m.Stream.Org, m.Stream.Name).Scan(&streamID, &seq); err != nil {
		return fmt.Errorf("sqlite: next seq: %w", err)
	}
	thread := m.ThreadID
	if thread == "" {
		thread = gid
	}
	pending := 0
	if !m.Deadline.IsZero() {
		pending = 1
	}
	// Before the row: once the group commits, no reader may find a key the filter lacks.
	w.s.clientIDs.add(m.SenderOrg, m.SenderInstance, m.ClientMsgID)
	if w.s.clientIDs.full() {
		w.s.rebuildClientFilter()
	}
	if _, err := w.bus.insMessage.ExecContext(ctx, gid, streamID, seq, m.SenderOrg, m.SenderInstance, m.ClientMsgID, m.Type,
		thread, m.ReplyTo, m.ToOrg, m.ToInstance, nanos(m.Deadline), pending, nanos(m.ServerTime), nanos(m.ExpiresAt), m.Data); err != nil {
		return fmt.Errorf("sqlite: insert message: %w", err)
	}
	if m.Type == store.MessageTypeAnswer && m.ReplyTo != "" {
		if _, err := w.bus.settle.ExecContext(ctx, m.ReplyTo, streamID, nanos(m.ServerTime)); err != nil {
			return fmt.Errorf("sqlite: settle question: %w", err)
		}
	}
	m.GID, m.ThreadID = gid, thread
	// The times as a read returns them (UTC, nanoseconds), so this answer, a replay and a read
	// agree.
	m.Deadline, m.ServerTime, m.ExpiresAt = fromNanos(nanos(m.Deadline)), fromNanos(nanos(m.ServerTime)), fromNanos(nanos(m.ExpiresAt))
	o.out = store.StoredMessage{MessageWrite: m, Seq: seq}
	g.items++
	g.wrote = true
	return nil
}

func (o *msgOp) notify(s *Store) {
	if !o.replayed {
		s.tail.add(o.out)
		s.streams.Notify(streamTopic(o.out.Stream))
	}
}

// AppendMessage implements [store.BusStore.AppendMessage] through the group-commit writer, so a
// message shares its transaction and fsync with concurrent writes of every lane.
func (s *Store) AppendMessage(ctx context.Context, m store.MessageWrite) (store.StoredMessage, bool, error) {
	if err := store.ValidateMessage(m); err != nil {
		return store.StoredMessage{}, false, err
	}
	o := &msgOp{opBase: newOpBase(ctx), m: m}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.StoredMessage{}, false, err
	}
	return o.out, o.replayed, nil
}

// QueueMessage implements [store.MessageQueuer]: the op enters the writer's queue before the
// call returns, and the writer takes ops in queue order, so messages queued one after the
// other are stored (and take their seq) in that order, sharing group commits.
func (s *Store) QueueMessage(ctx context.Context, m store.MessageWrite) func() (store.StoredMessage, bool, error) {
	if err := store.ValidateMessage(m); err != nil {
		return func() (store.StoredMessage, bool, error) { return store.StoredMessage{}, false, err }
	}
	o := &msgOp{opBase: newOpBase(ctx), m: m}
	if err := s.enqueue(ctx, o); err != nil {
		return func() (store.StoredMessage, bool, error) { return store.StoredMessage{}, false, err }
	}
	return func() (store.StoredMessage, bool, error) {
		select {
		case err := <-o.done:
			if err != nil {
				return store.StoredMessage{}, false, err
			}
			return o.out, o.replayed, nil
		case <-ctx.Done():
			return store.StoredMessage{}, false, ctx.Err()
		}
	}
}

// receiptOp is one AppendReceipt call.
type receiptOp struct {
	opBase
	stream         store.StreamKey
	gid, by, state string
	at             time.Time
	applied        []string
}

func (o *receiptOp) weight() int { return 1 }

// receiptStates are the receipt states by rank: rank 1 delivered, rank 2 read.
var receiptStates = [...]string{1: store.ReceiptDelivered, 2: store.ReceiptRead}

func (o *receiptOp) exec(ctx context.Context, w *writer, g *groupState) error {
	streamID, err := w.streamRow(ctx, o.stream)
	if err != nil {
		return err
	}
	id, err := w.messageIn(ctx, streamID, o.gid, g.wall)
	if err != nil {
		return err
	}
	var cur int
	err = w.bus.selReceipt.QueryRowContext(ctx, id, o.by).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: read receipt: %w", err)
	}
	target := 1
	if o.state == store.ReceiptRead {
		target = 2
	}
	if target <= cur {
		return nil // never back, and a repeat applies nothing (S16)
	}
	at := nanos(o.at)
	var readAt int64
	if target == 2 {
		readAt = at
	}
	// delivered_at is written only by the insert: a read after a delivery keeps it.
	if _, err := w.bus.putReceipt.ExecContext(ctx, id, o.by, target, at, readAt); err != nil {
		return fmt.Errorf("sqlite: write receipt: %w", err)
	}
	o.applied = append([]string(nil), receiptStates[cur+1:target+1]...)
	g.items++
	g.wrote = true
	return nil
}

func (o *receiptOp) notify(*Store) {}

// AppendReceipt implements [store.BusStore.AppendReceipt] through the group-commit writer.
func (s *Store) AppendReceipt(ctx context.Context, stream store.StreamKey, gid, by, state string, at time.Time) ([]string, error) {
	if err := store.ValidateReceipt(stream, gid, by, state, at); err != nil {
		return nil, err
	}
	o := &receiptOp{opBase: newOpBase(ctx), stream: stream, gid: gid, by: by, state: state, at: at}
	if err := s.submit(ctx, o, o.done); err != nil {
		return nil, err
	}
	return o.applied, nil
}

// proposeOp is one ProposeTask call.
type proposeOp struct {
	opBase
	p       store.TaskProposalWrite
	out     store.TaskProposal
	created bool
}

func (o *proposeOp) weight() int { return 1 }

func (o *proposeOp) exec(ctx context.Context, w *writer, g *groupState) error {
	p := o.p
	streamID, err := w.streamRow(ctx, p.Stream)
	if err != nil {
		return err
	}
	// At most once per question, even once the question itself has expired.
	var r propRow
	err = w.bus.selProposal.QueryRowContext(ctx, p.QuestionGID, streamID).Scan(r.dest()...)
	if err == nil {
		o.out = r.proposal()
		o.out.Stream = p.Stream
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: read proposal: %w", err)
	}
	qid, err := w.messageIn(ctx, streamID, p.QuestionGID, g.wall)
	if err != nil {
		return err
	}
	var number, seq int64
	if err := w.bus.nextNumber.QueryRowContext(ctx, p.Stream.Org, p.Vault).Scan(&number); err != nil {
		return fmt.Errorf("sqlite: next task number: %w", err)
	}
	if err := w.bus.bumpSeq.QueryRowContext(ctx, streamID).Scan(&seq); err != nil {
		return fmt.Errorf("sqlite: next seq: %w", err)
	}
	res, err := w.bus.insProposal.ExecContext(ctx, p.Stream.Org, streamID, p.Vault, number, seq, p.QuestionGID, nanos(p.CreatedAt), p.Data)
	if err != nil {
		return fmt.Errorf("sqlite: insert proposal: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("sqlite: insert proposal: %w", err)
	}
	if _, err := w.bus.unpend.ExecContext(ctx, qid); err != nil {
		return fmt.Errorf("sqlite: settle question: %w", err)
	}
	p.CreatedAt = fromNanos(nanos(p.CreatedAt))
	o.out = store.TaskProposal{TaskProposalWrite: p, ID: id, Number: number, Seq: seq}
	o.created = true
	g.items++
	g.wrote = true
	return nil
}

func (o *proposeOp) notify(s *Store) {
	if o.created {
		s.tail.skip(o.out.Stream)
		s.streams.Notify(streamTopic(o.out.Stream))
	}
}

// ProposeTask implements [store.BusStore.ProposeTask] through the group-commit writer.
func (s *Store) ProposeTask(ctx context.Context, p store.TaskProposalWrite) (store.TaskProposal, bool, error) {
	if err := store.ValidateProposal(p); err != nil {
		return store.TaskProposal{}, false, err
	}
	o := &proposeOp{opBase: newOpBase(ctx), p: p}
	if err := s.submit(ctx, o, o.done); err != nil {
		return store.TaskProposal{}, false, err
	}
	return o.out, o.created, nil
}

// expireMsgOp is one ExpireMessages call.
type expireMsgOp struct {
	opBase
	now     int64
	limit   int
	deleted int
}

func (o *expireMsgOp) weight() int { return 1 }

func (o *expireMsgOp) exec(ctx context.Context, w *writer, g *groupState) error {
	if _, err := w.bus.expireReceipts.ExecContext(ctx, o.now, o.limit); err != nil {
		return fmt.Errorf("sqlite: expire receipts: %w", err)
	}
	res, err := w.bus.expireMessages.ExecContext(ctx, o.now, o.limit)
	if err != nil {
		return fmt.Errorf("sqlite: expire messages: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: expire messages: %w", err)
	}
	o.deleted = int(n)
	if n > 0 {
		w.dropped = true
		g.items += int(n)
		g.wrote = true
	}
	return nil
}

func (o *expireMsgOp) notify(*Store) {}

// ExpireMessages implements [store.BusStore.ExpireMessages] through the group-commit writer.
func (s *Store) ExpireMessages(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return 0, err
	}
	o := &expireMsgOp{opBase: newOpBase(ctx), now: nanos(now), limit: limit}
	if err := s.submit(ctx, o, o.done); err != nil {
		return 0, err
	}
	return o.deleted, nil
}

// SubscribeStream implements [store.BusStore.SubscribeStream] in process: the writer notifies
// after COMMIT and before answering the caller.
func (s *Store) SubscribeStream(stream store.StreamKey) (<-chan struct{}, func()) {
	org, key := streamTopic(stream)
	return s.streams.Subscribe(org, key)
}

// BusSubscribers returns the number of live stream subscriptions (relay metric `subscribers`).
func (s *Store) BusSubscribers() int { return s.streams.Subscribers() }

// The reader pool's bus statements (also checked by TestQueryPlans).
const (
	qStreamRow    = `SELECT id, last_seq FROM bus_streams WHERE network = ? AND org = ? AND name = ?`
	qMessageByGID = `SELECT ` + msgCols + `, ` + streamCols + ` FROM bus_messages m JOIN bus_streams s ON s.id = m.stream WHERE m.gid = ?`
	// The S9 key is the UNIQUE (sender_org, sender_instance, client_msg_id) of bus_messages.
	qMessageByClient = `SELECT ` + msgCols + `, ` + streamCols + ` FROM bus_messages m JOIN bus_streams s ON s.id = m.stream
		WHERE m.sender_org = ? AND m.sender_instance = ? AND m.client_msg_id = ?`
	qStreamTasks  = `SELECT ` + propCols + ` FROM task_proposals p WHERE p.stream = ? AND p.seq > ? ORDER BY p.seq LIMIT ?`
	qDueQuestions = `SELECT ` + msgCols + `, ` + streamCols + ` FROM bus_messages m JOIN bus_streams s ON s.id = m.stream
		WHERE m.pending = 1 AND m.deadline <= ? AND (m.expires_at = 0 OR m.expires_at > ` + nowParam + `) ORDER BY m.deadline, m.id LIMIT ?`
	qListProposals = `SELECT ` + propCols + `, ` + streamCols + ` FROM task_proposals p JOIN bus_streams s ON s.id = p.stream
		WHERE p.org = ? AND p.id > ? ORDER BY p.id LIMIT ?`
)

// readStreamID finds the stream's row with st (the pool's statement or a transaction's); ok is
// false when it has none.
func (s *Store) readStreamID(ctx context.Context, st *sql.Stmt, k store.StreamKey) (id, last int64, ok bool, err error) {
	err = st.QueryRowContext(ctx, k.Network, k.Org, k.Name).Scan(&id, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, s.readErr(err)
	}
	return id, last, true, nil
}

// GetMessage implements [store.BusStore.GetMessage] on the reader pool. Every way of not being
// there (unknown, out of scope, expired) returns the same store.ErrNotFound.
func (s *Store) GetMessage(ctx context.Context, scope store.MessageScope, gid string) (store.StoredMessage, error) {
	if err := store.ValidateScope(scope, gid); err != nil {
		return store.StoredMessage{}, err
	}
	if s.isClosed() {
		return store.StoredMessage{}, store.ErrClosed
	}
	var r msgRow
	k := &r.m.Stream
	err := s.rd.messageByGID.QueryRowContext(ctx, gid).Scan(r.dest(&k.Network, &k.Org, &k.Name)...)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	if err != nil {
		return store.StoredMessage{}, s.readErr(err)
	}
	if !scope.Includes(*k) || !visible(r.expires, s.now().UnixNano()) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	return r.message(), nil
}

// LookupClientMsg implements [store.BusStore.LookupClientMsg] on the reader pool, through the
// unique index of the S9 key. An expired message that the sweeper has not deleted yet answers
// store.ErrNotFound like a missing one.
func (s *Store) LookupClientMsg(ctx context.Context, org, instance, clientMsgID string) (store.StoredMessage, error) {
	if err := store.ValidateClientKey(org, instance, clientMsgID); err != nil {
		return store.StoredMessage{}, err
	}
	if s.isClosed() {
		return store.StoredMessage{}, store.ErrClosed
	}
	if s.clientIDs.absent(org, instance, clientMsgID) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	var r msgRow
	k := &r.m.Stream
	err := s.rd.messageByClient.QueryRowContext(ctx, org, instance, clientMsgID).Scan(r.dest(&k.Network, &k.Org, &k.Name)...)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	if err != nil {
		return store.StoredMessage{}, s.readErr(err)
	}
	if !visible(r.expires, s.now().UnixNano()) {
		return store.StoredMessage{}, store.ErrNotFound
	}
	return r.message(), nil
}

// nowParam is the bound clock reading of the expiry filters, wrapped so that SQLite does not
// compare its value with the literal of the partial index bus_messages_by_expiry
// (`expires_at > 0`): a bare `expires_at > ?` makes the query planner look at the bound value,
// which marks the prepared statement to be re-prepared (parsed and planned again) whenever
// that parameter changes — and the clock changes at every call. The CAST is a no-op on the
// integer it gets.
const nowParam = `CAST(? AS INTEGER)`

// messageSQL is the text of the ReadMessages range, with or without a thread and a viewer.
func messageSQL(thread, viewer bool) string {
	var sb strings.Builder
	sb.WriteString(`SELECT ` + msgCols + ` FROM bus_messages m WHERE m.stream = ? AND m.seq > ? AND (m.expires_at = 0 OR m.expires_at > ` + nowParam + `)`)
	if thread {
		sb.WriteString(` AND m.thread_id = ?`)
	}
	if viewer {
		sb.WriteString(` AND (m.to_instance = '' OR (m.sender_org = ? AND m.sender_instance = ?) OR (m.to_org = ? AND m.to_instance = ?))`)
	}
	sb.WriteString(` ORDER BY m.seq LIMIT ?`)
	return sb.String()
}

// messageQuery returns the variant of the ReadMessages range q needs (an index into
// readStmts.messages) and its arguments for a known stream row.
func messageQuery(streamID int64, q store.ReadQuery, now int64, limit int) (thread, viewer int, args []any) {
	args = append(make([]any, 0, 8), streamID, q.After, now)
	if q.ThreadID != "" {
		thread = 1
		args = append(args, q.ThreadID)
	}
	if v := q.Viewer; v != nil {
		viewer = 1
		args = append(args, v.Org, v.Instance, v.Org, v.Instance)
	}
	return thread, viewer, append(args, limit)
}

// readMessages runs the ReadMessages range; tx, when not nil, is the read transaction to run
// it in.
func (s *Store) readMessages(ctx context.Context, tx *sql.Tx, k store.StreamKey, streamID int64, q store.ReadQuery, now int64) (_ []store.StoredMessage, cut bool, _ error) {
	thread, viewer, args := messageQuery(streamID, q, now, q.Limit)
	st := s.rd.messages[thread][viewer]
	if tx != nil {
		st = tx.StmtContext(ctx, st)
	}
	rows, err := st.QueryContext(ctx, args...)
	out := make([]store.StoredMessage, 0, min(q.Limit, 16)) // a live read usually finds one or two
	return scanPage(s, rows, err, out, q.MaxBytes, func() (store.StoredMessage, int, error) {
		var r msgRow
		err := rows.Scan(r.dest()...)
		m := r.message()
		m.Stream = k
		return m, len(m.Data), err
	})
}

// ReadMessages implements [store.BusStore.ReadMessages] on the reader pool. Stream rows are
// never deleted and the range query is one statement, so a page is a committed prefix-closed
// set of the stream's visible messages.
func (s *Store) ReadMessages(ctx context.Context, stream store.StreamKey, q store.ReadQuery) ([]store.StoredMessage, error) {
	if err := store.ValidateReadQuery(stream, q); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	id, _, ok, err := s.readStreamID(ctx, s.rd.streamRow, stream)
	if err != nil || !ok {
		return nil, err
	}
	msgs, _, err := s.readMessages(ctx, nil, stream, id, q, s.now().UnixNano())
	return msgs, err
}

// ReadStream implements [store.BusStore.ReadStream]: the messages, task events and publishes
// are read in one read transaction (one WAL snapshot), so a commit that lands between the queries
// cannot show a later position without an earlier one.
func (s *Store) ReadStream(ctx context.Context, stream store.StreamKey, q store.ReadQuery) ([]store.StreamEntry, error) {
	if err := store.ValidateReadQuery(stream, q); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	if out, ok := s.tail.read(stream, q, s.now().UnixNano()); ok {
		return out, nil
	}
	return s.readStreamFile(ctx, stream, q)
}

// readStreamFile is ReadStream from the database, in one read transaction.
func (s *Store) readStreamFile(ctx context.Context, stream store.StreamKey, q store.ReadQuery) ([]store.StreamEntry, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.readErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	id, _, ok, err := s.readStreamID(ctx, tx.StmtContext(ctx, s.rd.streamRow), stream)
	if err != nil || !ok {
		return nil, err
	}
	now := s.now().UnixNano()
	// Each kind is read after a cursor within the byte budget; a list the budget cut is read
	// on after its last entry when the merge reaches its end, so the page is exact.
	at := func(after int64) store.ReadQuery { r := q; r.After = after; return r }
	msgs := &pageList[store.StoredMessage]{seq: func(m *store.StoredMessage) int64 { return m.Seq },
		fetch: func(after int64) ([]store.StoredMessage, bool, error) {
			return s.readMessages(ctx, tx, stream, id, at(after), now)
		}}
	pubs := &pageList[store.StoredPublish]{seq: func(p *store.StoredPublish) int64 { return p.Seq },
		fetch: func(after int64) ([]store.StoredPublish, bool, error) {
			return s.readPublishes(ctx, tx, stream, id, at(after), now)
		}}
	tasks := &pageList[store.TaskProposal]{seq: func(p *store.TaskProposal) int64 { return p.Seq },
		fetch: func(after int64) ([]store.TaskProposal, bool, error) {
			if q.ThreadID != "" {
				return nil, false, nil // task events belong to no thread
			}
			return s.readTasks(ctx, tx, stream, id, at(after))
		}}
	return mergeEntries(q, msgs, tasks, pubs)
}

// readTasks runs the ReadStream task-event range inside the read transaction, within
// q.MaxBytes (cut reports that the budget stopped it).
func (s *Store) readTasks(ctx context.Context, tx *sql.Tx, k store.StreamKey, streamID int64, q store.ReadQuery) (_ []store.TaskProposal, cut bool, _ error) {
	rows, err := tx.StmtContext(ctx, s.rd.streamTasks).QueryContext(ctx, streamID, q.After, q.Limit)
	return scanPage(s, rows, err, nil, q.MaxBytes, func() (store.TaskProposal, int, error) {
		var r propRow
		err := rows.Scan(r.dest()...)
		p := r.proposal()
		p.Stream = k
		return p, len(p.Data), err
	})
}

// scanPage reads the rows of a query (err is the query's) into out, within maxBytes
// (store.ReadQuery.MaxBytes; cut reports that the budget stopped it): next scans the current
// row and returns it with its data's size.
func scanPage[T any](s *Store, rows *sql.Rows, err error, out []T, maxBytes int, next func() (T, int, error)) (_ []T, cut bool, _ error) {
	if err != nil {
		return nil, false, s.readErr(err)
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		v, n, err := next()
		if err != nil {
			return nil, false, s.readErr(err)
		}
		if overBudget(maxBytes, len(out), size, n) {
			cut = true
			break
		}
		size += n
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.readErr(err)
	}
	return out, cut, nil
}

// overBudget reports whether an entry of n bytes, after have entries of size bytes, would
// bring a page past maxBytes (relay.md §3; the first entry always fits).
func overBudget(maxBytes, have, size, n int) bool {
	return maxBytes > 0 && have > 0 && size+n > maxBytes
}

// StreamLastSeq implements [store.BusStore.StreamLastSeq].
func (s *Store) StreamLastSeq(ctx context.Context, stream store.StreamKey) (int64, error) {
	if err := store.ValidateStream(stream); err != nil {
		return 0, err
	}
	if s.isClosed() {
		return 0, store.ErrClosed
	}
	_, last, _, err := s.readStreamID(ctx, s.rd.streamRow, stream)
	return last, err
}

// DueQuestions implements [store.BusStore.DueQuestions]. The pending flag is set for a message
// stored with a deadline and cleared by a settling answer or a proposal, and a partial index
// holds only pending rows, so the sweep never rescans settled questions.
func (s *Store) DueQuestions(ctx context.Context, now time.Time, limit int) ([]store.StoredMessage, error) {
	if err := store.ValidateSweep(now, limit); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rd.dueQuestions.QueryContext(ctx, nanos(now), s.now().UnixNano(), limit)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.StoredMessage
	for rows.Next() {
		var r msgRow
		k := &r.m.Stream
		if err := rows.Scan(r.dest(&k.Network, &k.Org, &k.Name)...); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, r.message())
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}

// ListTaskProposals implements [store.BusStore.ListTaskProposals].
func (s *Store) ListTaskProposals(ctx context.Context, org string, q store.ProposalQuery) ([]store.TaskProposal, error) {
	if err := store.ValidatePage(org, q.After, q.Limit); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, store.ErrClosed
	}
	rows, err := s.rd.listProposals.QueryContext(ctx, org, q.After, q.Limit)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []store.TaskProposal
	for rows.Next() {
		var r propRow
		k := &r.p.Stream
		if err := rows.Scan(r.dest(&k.Network, &k.Org, &k.Name)...); err != nil {
			return nil, s.readErr(err)
		}
		out = append(out, r.proposal())
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	return out, nil
}
