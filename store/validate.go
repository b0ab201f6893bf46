package store

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentwire/agentwire/envelope"
)

// MaxIDBytes bounds an org, a run ID, a channel and a swarm_id on every store (relay.md
// §5.1.1): a JetStream subject carries them encoded, and every backend refuses the same calls.
const MaxIDBytes = 512

// badID reports whether an id is empty or longer than MaxIDBytes.
func badID(id string) bool { return id == "" || len(id) > MaxIDBytes }

// idError is the ErrInvalid of a bad id (badID).
func idError(what, id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	return fmt.Errorf("%w: %s of %d bytes exceeds the %d-byte limit", ErrInvalid, what, len(id), MaxIDBytes)
}

// storedSubject reports whether the ENVOY_NOTIFICATIONS stream stores subject.
func storedSubject(subject string) bool {
	_, ok := envelope.StreamSubjectFor(subject)
	return ok
}

// ValidateAppend checks the preconditions of [RunStore.AppendRun] that need no stored state
// (check 1 of its contract) and returns an error wrapping [ErrInvalid] for the first one that
// fails. Backends call it first so that every backend refuses the same calls.
func ValidateAppend(org, runID string, req AppendRequest) error {
	if err := ValidateRunKey(org, runID); err != nil {
		return err
	}
	if req.ExpectedLastLogicalSequence < 0 {
		return fmt.Errorf("%w: expected last logical sequence %d is negative", ErrInvalid, req.ExpectedLastLogicalSequence)
	}
	if len(req.Events) == 0 {
		return fmt.Errorf("%w: empty batch", ErrInvalid)
	}
	if err := ValidateAppendEnd(req.ExpectedLastLogicalSequence, req.Status, req.Snapshot); err != nil {
		return err
	}
	return ValidateEvents(req.Events, 0)
}

// ValidateAppendEnd checks the rules of [AppendRequest] on Status and Snapshot for a batch
// appended after expected: a non-empty status, a snapshot either nil or non-empty, and one on
// the first batch of a run (expected 0).
func ValidateAppendEnd(expected int64, status string, snapshot []byte) error {
	if snapshot != nil && len(snapshot) == 0 {
		return fmt.Errorf("%w: empty snapshot", ErrInvalid)
	}
	if snapshot == nil && expected == 0 {
		return fmt.Errorf("%w: the first batch of a run carries no snapshot", ErrInvalid)
	}
	if status == "" {
		return fmt.Errorf("%w: empty status", ErrInvalid)
	}
	return nil
}

// ValidateEvents checks the arguments of [Event] (positive logical sequence, non-empty type
// and data) of events; first is the batch index of events[0], the index an error names.
func ValidateEvents(events []Event, first int) error {
	for j, e := range events {
		i := first + j
		switch {
		case e.LogicalSequence <= 0:
			return fmt.Errorf("%w: event %d: logical sequence %d is not positive", ErrInvalid, i, e.LogicalSequence)
		case e.Type == "":
			return fmt.Errorf("%w: event %d: empty type", ErrInvalid, i)
		case len(e.Data) == 0:
			return fmt.Errorf("%w: event %d: empty data", ErrInvalid, i)
		}
	}
	return nil
}

// ValidateRunKey checks that org and runID are non-empty (the scope of every [RunStore] call).
func ValidateRunKey(org, runID string) error {
	if badID(org) {
		return idError("org", org)
	}
	if badID(runID) {
		return idError("run ID", runID)
	}
	return nil
}

// ValidateCheckpoint checks the arguments of [RunStore.PutCheckpoint] that need no stored
// state: the run key, seq ≥ 1 and a non-empty snapshot.
func ValidateCheckpoint(org, runID string, seq int64, snapshot []byte) error {
	if err := ValidateRunKey(org, runID); err != nil {
		return err
	}
	if seq < 1 {
		return fmt.Errorf("%w: checkpoint sequence %d", ErrInvalid, seq)
	}
	if len(snapshot) == 0 {
		return fmt.Errorf("%w: empty checkpoint snapshot", ErrInvalid)
	}
	return nil
}

// ValidateRead checks the arguments of [RunStore.ReadEvents].
func ValidateRead(org, runID string, after int64, limit int) error {
	if err := ValidateRunKey(org, runID); err != nil {
		return err
	}
	if after < 0 {
		return fmt.Errorf("%w: negative cursor %d", ErrInvalid, after)
	}
	if limit <= 0 {
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, limit)
	}
	return nil
}

// ValidateList checks the arguments of [RunStore.ListRuns] other than the cursor, whose form
// only its backend knows.
func ValidateList(org string, q ListRunsQuery) error {
	if badID(org) {
		return idError("org", org)
	}
	if q.Limit <= 0 {
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, q.Limit)
	}
	return nil
}

// ValidateStream checks a [StreamKey]: Network is NetworkOrg with a non-empty Org and Name, or
// NetworkSwarm with an empty Org (a swarm belongs to no org) and a non-empty Name.
func ValidateStream(k StreamKey) error {
	switch k.Network {
	case NetworkOrg:
		if badID(k.Org) {
			return idError("stream org", k.Org)
		}
	case NetworkSwarm:
		if k.Org != "" {
			return fmt.Errorf("%w: swarm stream keyed by org %q", ErrInvalid, k.Org)
		}
	default:
		return fmt.Errorf("%w: stream network %q is neither %q nor %q", ErrInvalid, k.Network, NetworkOrg, NetworkSwarm)
	}
	if badID(k.Name) {
		return idError("stream name", k.Name)
	}
	return nil
}

// ValidateMessage checks the preconditions of [BusStore.AppendMessage] that need no stored
// state and returns an error wrapping [ErrInvalid] for the first one that fails. Backends call
// it first so that every backend refuses the same calls.
func ValidateMessage(m MessageWrite) error {
	if err := ValidateStream(m.Stream); err != nil {
		return err
	}
	org := m.Stream.Network == NetworkOrg
	switch {
	case m.SenderOrg == "":
		return fmt.Errorf("%w: empty sender org", ErrInvalid)
	case m.SenderInstance == "":
		return fmt.Errorf("%w: empty sender instance", ErrInvalid)
	case m.ClientMsgID == "":
		return fmt.Errorf("%w: empty client_msg_id", ErrInvalid)
	case m.Type == "":
		return fmt.Errorf("%w: empty message type", ErrInvalid)
	case org && m.SenderOrg != m.Stream.Org:
		// Networks are never bridged (hive.md S2): an org's stream takes only its own sends.
		return fmt.Errorf("%w: sender org %q writes to a stream of org %q", ErrInvalid, m.SenderOrg, m.Stream.Org)
	case (m.ToOrg == "") != (m.ToInstance == ""):
		return fmt.Errorf("%w: recipient org and instance must be set together", ErrInvalid)
	case org && m.ToOrg != "" && m.ToOrg != m.Stream.Org:
		return fmt.Errorf("%w: recipient org %q on a stream of org %q", ErrInvalid, m.ToOrg, m.Stream.Org)
	case !org && !m.Deadline.IsZero():
		return fmt.Errorf("%w: task deadline on a swarm stream", ErrInvalid)
	case m.ServerTime.IsZero():
		return fmt.Errorf("%w: zero server time", ErrInvalid)
	case len(m.Data) == 0:
		return fmt.Errorf("%w: empty data", ErrInvalid)
	}
	return nil
}

// ValidateClientKey checks the S9 key of [BusStore.LookupClientMsg]: the sender's org and
// instance and the `client_msg_id`, none empty.
func ValidateClientKey(org, instance, clientMsgID string) error {
	switch {
	case org == "":
		return fmt.Errorf("%w: empty sender org", ErrInvalid)
	case instance == "":
		return fmt.Errorf("%w: empty sender instance", ErrInvalid)
	case clientMsgID == "":
		return fmt.Errorf("%w: empty client_msg_id", ErrInvalid)
	}
	return nil
}

// ValidateScope checks a [MessageScope] and a gid for [BusStore.GetMessage]: the gid must not
// be empty. An empty scope is valid and reaches nothing.
func ValidateScope(_ MessageScope, gid string) error {
	if gid == "" {
		return fmt.Errorf("%w: empty gid", ErrInvalid)
	}
	return nil
}

// ValidateReadQuery checks the arguments of [BusStore.ReadMessages] and [BusStore.ReadStream].
func ValidateReadQuery(k StreamKey, q ReadQuery) error {
	if err := ValidateStream(k); err != nil {
		return err
	}
	switch {
	case q.After < 0:
		return fmt.Errorf("%w: negative cursor %d", ErrInvalid, q.After)
	case q.Limit <= 0:
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, q.Limit)
	case q.Viewer != nil && (q.Viewer.Org == "" || q.Viewer.Instance == ""):
		return fmt.Errorf("%w: viewer without org or instance", ErrInvalid)
	case q.MaxBytes < 0:
		return fmt.Errorf("%w: negative byte budget %d", ErrInvalid, q.MaxBytes)
	}
	return nil
}

// ValidateReceipt checks the arguments of [BusStore.AppendReceipt].
func ValidateReceipt(k StreamKey, gid, by, state string, at time.Time) error {
	if err := ValidateStream(k); err != nil {
		return err
	}
	switch {
	case gid == "":
		return fmt.Errorf("%w: empty gid", ErrInvalid)
	case by == "":
		return fmt.Errorf("%w: empty recipient", ErrInvalid)
	case state != ReceiptDelivered && state != ReceiptRead:
		return fmt.Errorf("%w: receipt state %q is neither %q nor %q", ErrInvalid, state, ReceiptDelivered, ReceiptRead)
	case at.IsZero():
		return fmt.Errorf("%w: zero receipt time", ErrInvalid)
	}
	return nil
}

// ValidateProposal checks the arguments of [BusStore.ProposeTask].
func ValidateProposal(p TaskProposalWrite) error {
	if err := ValidateStream(p.Stream); err != nil {
		return err
	}
	switch {
	case p.Stream.Network != NetworkOrg:
		return fmt.Errorf("%w: task proposal on a %s stream", ErrInvalid, p.Stream.Network)
	case p.Vault == "":
		return fmt.Errorf("%w: empty vault", ErrInvalid)
	case p.QuestionGID == "":
		return fmt.Errorf("%w: empty question gid", ErrInvalid)
	case p.CreatedAt.IsZero():
		return fmt.Errorf("%w: zero creation time", ErrInvalid)
	case len(p.Data) == 0:
		return fmt.Errorf("%w: empty data", ErrInvalid)
	}
	return nil
}

// ValidatePage checks an org, an ID or sequence cursor and a limit ([BusStore.ListTaskProposals]
// and the other paged reads keyed by org).
func ValidatePage(org string, after int64, limit int) error {
	switch {
	case badID(org):
		return idError("org", org)
	case after < 0:
		return fmt.Errorf("%w: negative cursor %d", ErrInvalid, after)
	case limit <= 0:
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, limit)
	}
	return nil
}

// ValidateSweep checks the arguments of the expiry sweepers ([BusStore.ExpireMessages],
// [NotificationStore.ExpireEnvelopes]) and of [BusStore.DueQuestions].
func ValidateSweep(at time.Time, limit int) error {
	switch {
	case at.IsZero():
		return fmt.Errorf("%w: zero time", ErrInvalid)
	case limit <= 0:
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, limit)
	}
	return nil
}

// ValidateEnvelope checks the preconditions of [NotificationStore.AppendEnvelope].
func ValidateEnvelope(org string, e EnvelopeWrite, window time.Duration) error {
	switch {
	case badID(org):
		return idError("org", org)
	case e.Subject == "":
		return fmt.Errorf("%w: empty subject", ErrInvalid)
	case !storedSubject(e.Subject):
		// relay.md §5.1.4: only the ENVOY_NOTIFICATIONS subject list is stored, on every
		// store; other topics (role lanes, fan-out exceptions, any other notifications.*
		// subject) are relayed live and never retained (envelope.md §5.1, §5.3).
		return fmt.Errorf("%w: subject %q is not in the %s subject list", ErrInvalid, e.Subject, envelope.NotificationsStream)
	case e.StoredAt.IsZero():
		return fmt.Errorf("%w: zero stored time", ErrInvalid)
	case len(e.Data) == 0:
		return fmt.Errorf("%w: empty data", ErrInvalid)
	case window < 0:
		return fmt.Errorf("%w: negative dedupe window %v", ErrInvalid, window)
	}
	return nil
}

// ValidateEnvelopeQuery checks the arguments of [NotificationStore.ReadEnvelopes].
func ValidateEnvelopeQuery(org string, q EnvelopeQuery) error {
	if q.MaxBytes < 0 {
		return fmt.Errorf("%w: negative byte budget %d", ErrInvalid, q.MaxBytes)
	}
	return ValidatePage(org, q.After, q.Limit)
}

// ValidateAnnouncements checks the arguments of [BusStore.RecordAnnouncements].
func ValidateAnnouncements(anns []Announcement, at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("%w: zero announcement time", ErrInvalid)
	}
	for i, a := range anns {
		switch {
		case badID(a.Org):
			return fmt.Errorf("announcement %d: %w", i, idError("org", a.Org))
		case a.Instance == "":
			return fmt.Errorf("%w: announcement %d: empty instance", ErrInvalid, i)
		case a.Agent == "":
			return fmt.Errorf("%w: announcement %d: empty agent", ErrInvalid, i)
		case a.Channel == "":
			return fmt.Errorf("%w: announcement %d: empty channel", ErrInvalid, i)
		case a.Vault == "":
			return fmt.Errorf("%w: announcement %d: empty vault", ErrInvalid, i)
		}
	}
	return nil
}

// ValidateAnnouncedQuery checks the arguments of [BusStore.AnnouncedInstances].
func ValidateAnnouncedQuery(org, vault, agent string) error {
	switch {
	case badID(org):
		return idError("org", org)
	case vault == "":
		return fmt.Errorf("%w: empty vault", ErrInvalid)
	case agent == "":
		return fmt.Errorf("%w: empty agent", ErrInvalid)
	}
	return nil
}

// ValidateInstance checks an instance key (org and instance, neither empty) of
// [BusStore.Announcements], [BusStore.Acks] and [BusStore.SetAck].
func ValidateInstance(org, instance string) error {
	switch {
	case badID(org):
		return idError("org", org)
	case instance == "":
		return fmt.Errorf("%w: empty instance", ErrInvalid)
	}
	return nil
}

// ValidateAck checks the arguments of [BusStore.SetAck].
func ValidateAck(org, instance string, stream StreamKey, seq int64) error {
	if err := ValidateInstance(org, instance); err != nil {
		return err
	}
	if err := ValidateStream(stream); err != nil {
		return err
	}
	if seq <= 0 {
		return fmt.Errorf("%w: ack seq %d is not positive", ErrInvalid, seq)
	}
	return nil
}

// ValidateSession checks the scope of the session dedupe calls and their keys
// ([NotificationStore.RecordSessionDeliveries], [NotificationStore.SessionDeliveries]).
func ValidateSession(org, session string, keys []string) error {
	switch {
	case badID(org):
		return idError("org", org)
	case session == "":
		return fmt.Errorf("%w: empty session", ErrInvalid)
	}
	for i, k := range keys {
		switch {
		case k == "":
			return fmt.Errorf("%w: key %d is empty", ErrInvalid, i)
		case !utf8.ValidString(k):
			return fmt.Errorf("%w: key %d is not valid UTF-8", ErrInvalid, i)
		}
	}
	return nil
}

// ValidateSessionDeliveries checks the arguments of [NotificationStore.RecordSessionDeliveries].
func ValidateSessionDeliveries(org, session string, ds []SessionDelivery, at time.Time, window time.Duration) error {
	keys := make([]string, len(ds))
	for i, d := range ds {
		if d.Seq < 0 {
			return fmt.Errorf("%w: delivery %d: negative seq %d", ErrInvalid, i, d.Seq)
		}
		keys[i] = d.DedupeKey
	}
	if err := ValidateSession(org, session, keys); err != nil {
		return err
	}
	switch {
	case at.IsZero():
		return fmt.Errorf("%w: zero delivery time", ErrInvalid)
	case window < 0:
		return fmt.Errorf("%w: negative window %v", ErrInvalid, window)
	}
	return nil
}
