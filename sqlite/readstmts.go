package sqlite

import "database/sql"

// readStmts are the reader pool's statements of the bus and notification lanes, prepared once
// at Open. A *sql.Stmt of a *sql.DB prepares itself lazily on each pooled connection it runs on
// and keeps that prepared statement for the connection's life (database/sql caches it per
// connection, safe for concurrent use), and Tx.StmtContext reuses the connection's one, so no
// read parses SQL after its connection's first use. ReadMessages and ReadStream pick one of
// the four variants of the message range (with or without a thread, with or without a viewer).
type readStmts struct {
	streamRow, messageByGID, messageByClient, streamTasks *sql.Stmt
	messages                                              [2][2]*sql.Stmt // [thread][viewer]
	dueQuestions, listProposals                           *sql.Stmt
	announcedInstances, announcements, acks               *sql.Stmt
	readEnvelopes, lastEnvelope, sessionKeys              *sql.Stmt
}

func (r *readStmts) defs() []stmtDef {
	defs := []stmtDef{
		{&r.streamRow, qStreamRow},
		{&r.messageByGID, qMessageByGID},
		{&r.messageByClient, qMessageByClient},
		{&r.streamTasks, qStreamTasks},
		{&r.dueQuestions, qDueQuestions},
		{&r.listProposals, qListProposals},
		{&r.announcedInstances, qAnnouncedInstances},
		{&r.announcements, qAnnouncements},
		{&r.acks, qAcks},
		{&r.readEnvelopes, qReadEnvelopes},
		{&r.lastEnvelope, qLastEnvelope},
		{&r.sessionKeys, qSessionKeys},
	}
	for thread := range 2 {
		for viewer := range 2 {
			defs = append(defs, stmtDef{&r.messages[thread][viewer], messageSQL(thread == 1, viewer == 1)})
		}
	}
	return defs
}
