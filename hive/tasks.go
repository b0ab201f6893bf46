package hive

import (
	"github.com/agentwire/agentwire/hive/wire"
)

// TaskState is the state of a task (hive.md §6.1): lowercase wire values; any other string
// (`failed` included) decodes as TaskStateUnknown, which encodes as "unknown".
type TaskState string

// TaskState values.
const (
	// TaskStateNone is not a wire value: the "—" of §6.2, before a task exists.
	TaskStateNone TaskState = ""
	// TaskStateProposed waits for a person's approval.
	TaskStateProposed TaskState = "proposed"
	// TaskStateOpen is claimable.
	TaskStateOpen TaskState = "open"
	// TaskStateClaimed: one holder works on it under a lease.
	TaskStateClaimed TaskState = "claimed"
	// TaskStateSubmitted: a result waits for its decision.
	TaskStateSubmitted TaskState = "submitted"
	// TaskStateDone: the result was accepted (terminal).
	TaskStateDone TaskState = "done"
	// TaskStateRejected: a person declined the proposal (terminal).
	TaskStateRejected TaskState = "rejected"
	// TaskStateCancelled: a person stopped it, giving a reason (terminal).
	TaskStateCancelled TaskState = "cancelled"
	// TaskStateUnknown is any other string.
	TaskStateUnknown TaskState = "unknown"
)

var taskStates = []TaskState{TaskStateProposed, TaskStateOpen, TaskStateClaimed, TaskStateSubmitted, TaskStateDone, TaskStateRejected, TaskStateCancelled}

// Terminal reports whether s is done, rejected or cancelled.
func (s TaskState) Terminal() bool {
	return s == TaskStateDone || s == TaskStateRejected || s == TaskStateCancelled
}

// MarshalJSON writes the wire value.
func (s TaskState) MarshalJSON() ([]byte, error) { return enumMarshal(s, taskStates) }

// UnmarshalJSON reads a string; unknown strings give TaskStateUnknown.
func (s *TaskState) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "TaskState", taskStates, TaskStateUnknown, s)
}

// TaskActorKind is the `kind` of a TaskActorV1.
type TaskActorKind string

// TaskActorKind values.
const (
	// TaskActorKindAgent is an agent.
	TaskActorKindAgent TaskActorKind = "agent"
	// TaskActorKindPerson is a person.
	TaskActorKindPerson TaskActorKind = "person"
	// TaskActorKindUnknown is any other string.
	TaskActorKindUnknown TaskActorKind = "unknown"
)

var taskActorKinds = []TaskActorKind{TaskActorKindAgent, TaskActorKindPerson}

// MarshalJSON writes the wire value.
func (k TaskActorKind) MarshalJSON() ([]byte, error) { return enumMarshal(k, taskActorKinds) }

// UnmarshalJSON reads a string; unknown strings give TaskActorKindUnknown.
func (k *TaskActorKind) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "TaskActorKind", taskActorKinds, TaskActorKindUnknown, k)
}

// TaskActorV1 is who acted on a task (`by` of TaskEventV1, hive.md §6.3); lenient.
type TaskActorV1 struct {
	// Kind is `kind`.
	Kind TaskActorKind
	// Agent is `agent`: required for agents, absent for persons.
	Agent *string
	// InstanceID is `instance_id`: optional for agents, absent for persons.
	InstanceID *string
	// Label is `label`: required for persons, optional for agents.
	Label *string
}

// Validate is the standalone check of §6.3, in order.
func (a *TaskActorV1) Validate() error {
	switch a.Kind {
	case TaskActorKindAgent:
		if a.Agent == nil {
			return verr("agent actors name an agent")
		}
		if err := ValidateID(*a.Agent, "agent"); err != nil {
			return err
		}
		if a.InstanceID != nil {
			if err := ValidateID(*a.InstanceID, "instance_id"); err != nil {
				return err
			}
		}
		if a.Label != nil {
			return ValidateText(*a.Label, 128, "label", true)
		}
		return nil
	case TaskActorKindPerson:
		if a.Agent != nil || a.InstanceID != nil {
			return verr("person actors carry no agent or instance_id")
		}
		if a.Label == nil {
			return verr("person actors carry a label")
		}
		return ValidateText(*a.Label, 128, "label", true)
	}
	return verr("unknown task actor")
}

func (a *TaskActorV1) decode(d *wire.Decoder) error {
	*a = TaskActorV1{}
	seen := false
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "kind":
			seen = true
			k, err := enumDecode(d, taskActorKinds, TaskActorKindUnknown)
			a.Kind = k
			return err
		case "agent":
			return d.OptString(&a.Agent)
		case "instance_id":
			return d.OptString(&a.InstanceID)
		case "label":
			return d.OptString(&a.Label)
		}
		return d.Skip()
	})
	if err == nil && !seen {
		err = d.Missing("kind")
	}
	return err
}

func (a *TaskActorV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("kind", enumWire(a.Kind, taskActorKinds))
	e.OptStr("agent", a.Agent)
	e.OptStr("instance_id", a.InstanceID)
	e.OptStr("label", a.Label)
	e.Close()
}

// MarshalJSON writes `{"kind":…,"agent":…,"instance_id":…,"label":…}`, absent members omitted.
func (a TaskActorV1) MarshalJSON() ([]byte, error) { return marshalWith(96, a.appendJSON) }

// UnmarshalJSON decodes leniently.
func (a *TaskActorV1) UnmarshalJSON(data []byte) error {
	return document(data, "TaskActorV1", a.decode)
}

// TaskAction is an action of the §6.2 transition table.
type TaskAction string

// TaskAction values (hive.md §6.2).
const (
	// TaskActionPropose is an engine proposal or a question past its deadline (§8 S13).
	TaskActionPropose TaskAction = "propose"
	// TaskActionCreate is a task created on the web.
	TaskActionCreate TaskAction = "create"
	// TaskActionApprove approves a proposal.
	TaskActionApprove TaskAction = "approve"
	// TaskActionDecline declines a proposal.
	TaskActionDecline TaskAction = "decline"
	// TaskActionClaim claims an open task (with optin_id).
	TaskActionClaim TaskAction = "claim"
	// TaskActionRelease releases a claim.
	TaskActionRelease TaskAction = "release"
	// TaskActionExpire is a lease expiry, or a Hold/Veto/Stop ending the claim.
	TaskActionExpire TaskAction = "expire"
	// TaskActionSubmit submits one result with evidence.
	TaskActionSubmit TaskAction = "submit"
	// TaskActionAccept accepts a submitted result.
	TaskActionAccept TaskAction = "accept"
	// TaskActionReject rejects a submitted result (the task reopens).
	TaskActionReject TaskAction = "reject"
	// TaskActionStop stops the task, with a reason.
	TaskActionStop TaskAction = "stop"
)

// TaskActorRole is who performs a transition, as §6.2 distinguishes them.
type TaskActorRole string

// TaskActorRole values.
const (
	// RolePerson is a person (on the web), the owner included.
	RolePerson TaskActorRole = "person"
	// RoleAgent is an agent that neither holds the claim nor counts as independent.
	RoleAgent TaskActorRole = "agent"
	// RoleHolder is the agent holding the task's claim.
	RoleHolder TaskActorRole = "holder"
	// RoleIndependentAgent is an agent of another owner than the claiming instance.
	RoleIndependentAgent TaskActorRole = "independent_agent"
	// RoleService is the service itself (`by` absent): deadlines, lease expiry, controls and
	// auto-merge thresholds.
	RoleService TaskActorRole = "service"
)

// TaskTransition is one row of the §6.2 table.
type TaskTransition struct {
	// From is the state before (TaskStateNone: the task does not exist yet).
	From TaskState
	// Action is what happens.
	Action TaskAction
	// Actors are the roles allowed to do it.
	Actors []TaskActorRole
	// To is the state after.
	To TaskState
	// Event is the `event` the service announces.
	Event TaskEventKind
}

// TaskTransitions is the transition table of hive.md §6.2; any other transition is refused
// (`409 invalid_state`).
var TaskTransitions = []TaskTransition{
	{TaskStateNone, TaskActionPropose, []TaskActorRole{RoleAgent, RoleIndependentAgent, RoleService}, TaskStateProposed, TaskEventKindProposed},
	{TaskStateNone, TaskActionCreate, []TaskActorRole{RolePerson}, TaskStateOpen, TaskEventKindOpened},
	{TaskStateProposed, TaskActionApprove, []TaskActorRole{RolePerson}, TaskStateOpen, TaskEventKindOpened},
	{TaskStateProposed, TaskActionDecline, []TaskActorRole{RolePerson}, TaskStateRejected, TaskEventKindDecided},
	{TaskStateOpen, TaskActionClaim, []TaskActorRole{RoleAgent, RoleIndependentAgent}, TaskStateClaimed, TaskEventKindClaimed},
	{TaskStateClaimed, TaskActionRelease, []TaskActorRole{RoleHolder, RolePerson}, TaskStateOpen, TaskEventKindReleased},
	{TaskStateClaimed, TaskActionExpire, []TaskActorRole{RoleService}, TaskStateOpen, TaskEventKindReleased},
	{TaskStateClaimed, TaskActionSubmit, []TaskActorRole{RoleHolder}, TaskStateSubmitted, TaskEventKindSubmitted},
	{TaskStateSubmitted, TaskActionAccept, []TaskActorRole{RolePerson, RoleIndependentAgent, RoleService}, TaskStateDone, TaskEventKindDecided},
	{TaskStateSubmitted, TaskActionReject, []TaskActorRole{RolePerson, RoleIndependentAgent}, TaskStateOpen, TaskEventKindDecided},
	{TaskStateProposed, TaskActionStop, []TaskActorRole{RolePerson}, TaskStateCancelled, TaskEventKindCancelled},
	{TaskStateOpen, TaskActionStop, []TaskActorRole{RolePerson}, TaskStateCancelled, TaskEventKindCancelled},
	{TaskStateClaimed, TaskActionStop, []TaskActorRole{RolePerson}, TaskStateCancelled, TaskEventKindCancelled},
}

// TransitionError explains why a transition is not allowed (project-defined wording); a
// service answers it with `409 invalid_state`.
type TransitionError struct {
	// From is the state of the refused request.
	From TaskState
	// Action is the refused action.
	Action TaskAction
	// Actor is the role that asked.
	Actor TaskActorRole
	// Message is the explanation.
	Message string
}

// Error returns Message.
func (e *TransitionError) Error() string { return e.Message }

func stateName(s TaskState) string {
	if s == TaskStateNone {
		return "no task"
	}
	return "a " + string(s) + " task"
}

// CheckTaskTransition answers whether actor may apply action to a task in state from (§6.2).
// It returns the resulting state and announced event, or a *TransitionError saying why not:
// a terminal or unknown state, an action that does not apply in that state, or an actor not
// allowed to do it.
func CheckTaskTransition(from TaskState, action TaskAction, actor TaskActorRole) (TaskState, TaskEventKind, error) {
	fail := func(msg string) (TaskState, TaskEventKind, error) {
		return from, TaskEventKindUnknown, &TransitionError{From: from, Action: action, Actor: actor, Message: msg}
	}
	if from != TaskStateNone && !enumKnown(from, taskStates) {
		return fail("the task state " + string(from) + " is unknown")
	}
	if from.Terminal() {
		return fail("the task is " + string(from) + " and admits no further transition")
	}
	var row *TaskTransition
	for i := range TaskTransitions {
		if TaskTransitions[i].From == from && TaskTransitions[i].Action == action {
			row = &TaskTransitions[i]
			break
		}
	}
	if row == nil {
		return fail("cannot " + string(action) + " " + stateName(from))
	}
	for _, r := range row.Actors {
		if r == actor {
			return row.To, row.Event, nil
		}
	}
	allowed := ""
	for i, r := range row.Actors {
		switch {
		case i == 0:
		case i == len(row.Actors)-1:
			allowed += " or "
		default:
			allowed += ", "
		}
		allowed += "the " + roleName(r)
	}
	return fail("only " + allowed + " may " + string(action) + " " + stateName(from))
}

func roleName(r TaskActorRole) string {
	if r == RoleIndependentAgent {
		return "independent agent"
	}
	return string(r)
}

// TaskTransitionAllowed reports whether CheckTaskTransition accepts the transition.
func TaskTransitionAllowed(from TaskState, action TaskAction, actor TaskActorRole) bool {
	_, _, err := CheckTaskTransition(from, action, actor)
	return err == nil
}
