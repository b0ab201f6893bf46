package hive

import (
	"strings"
	"testing"
)

func TestTaskTransitionTable(t *testing.T) {
	states := []TaskState{TaskStateNone, TaskStateProposed, TaskStateOpen, TaskStateClaimed, TaskStateSubmitted, TaskStateDone, TaskStateRejected, TaskStateCancelled, TaskStateUnknown}
	actions := []TaskAction{TaskActionPropose, TaskActionCreate, TaskActionApprove, TaskActionDecline, TaskActionClaim, TaskActionRelease, TaskActionExpire, TaskActionSubmit, TaskActionAccept, TaskActionReject, TaskActionStop}
	roles := []TaskActorRole{RolePerson, RoleAgent, RoleHolder, RoleIndependentAgent, RoleService}
	// allowed lists every (from, action, actor) → (to, event) of hive.md §6.2.
	type key struct {
		from   TaskState
		action TaskAction
		actor  TaskActorRole
	}
	type result struct {
		to    TaskState
		event TaskEventKind
	}
	allowed := map[key]result{
		{TaskStateNone, TaskActionPropose, RoleAgent}:                {TaskStateProposed, TaskEventKindProposed},
		{TaskStateNone, TaskActionPropose, RoleIndependentAgent}:     {TaskStateProposed, TaskEventKindProposed},
		{TaskStateNone, TaskActionPropose, RoleService}:              {TaskStateProposed, TaskEventKindProposed},
		{TaskStateNone, TaskActionCreate, RolePerson}:                {TaskStateOpen, TaskEventKindOpened},
		{TaskStateProposed, TaskActionApprove, RolePerson}:           {TaskStateOpen, TaskEventKindOpened},
		{TaskStateProposed, TaskActionDecline, RolePerson}:           {TaskStateRejected, TaskEventKindDecided},
		{TaskStateOpen, TaskActionClaim, RoleAgent}:                  {TaskStateClaimed, TaskEventKindClaimed},
		{TaskStateOpen, TaskActionClaim, RoleIndependentAgent}:       {TaskStateClaimed, TaskEventKindClaimed},
		{TaskStateClaimed, TaskActionRelease, RoleHolder}:            {TaskStateOpen, TaskEventKindReleased},
		{TaskStateClaimed, TaskActionRelease, RolePerson}:            {TaskStateOpen, TaskEventKindReleased},
		{TaskStateClaimed, TaskActionExpire, RoleService}:            {TaskStateOpen, TaskEventKindReleased},
		{TaskStateClaimed, TaskActionSubmit, RoleHolder}:             {TaskStateSubmitted, TaskEventKindSubmitted},
		{TaskStateSubmitted, TaskActionAccept, RolePerson}:           {TaskStateDone, TaskEventKindDecided},
		{TaskStateSubmitted, TaskActionAccept, RoleIndependentAgent}: {TaskStateDone, TaskEventKindDecided},
		{TaskStateSubmitted, TaskActionAccept, RoleService}:          {TaskStateDone, TaskEventKindDecided},
		{TaskStateSubmitted, TaskActionReject, RolePerson}:           {TaskStateOpen, TaskEventKindDecided},
		{TaskStateSubmitted, TaskActionReject, RoleIndependentAgent}: {TaskStateOpen, TaskEventKindDecided},
		{TaskStateProposed, TaskActionStop, RolePerson}:              {TaskStateCancelled, TaskEventKindCancelled},
		{TaskStateOpen, TaskActionStop, RolePerson}:                  {TaskStateCancelled, TaskEventKindCancelled},
		{TaskStateClaimed, TaskActionStop, RolePerson}:               {TaskStateCancelled, TaskEventKindCancelled},
	}
	for _, from := range states {
		for _, action := range actions {
			for _, actor := range roles {
				to, ev, err := CheckTaskTransition(from, action, actor)
				want, ok := allowed[key{from, action, actor}]
				if ok != (err == nil) || (ok && (to != want.to || ev != want.event)) {
					t.Errorf("%q %s by %s: got %s/%s/%v, want allowed=%v %v", from, action, actor, to, ev, err, ok, want)
				}
				if TaskTransitionAllowed(from, action, actor) != ok {
					t.Errorf("TaskTransitionAllowed disagrees for %q %s %s", from, action, actor)
				}
			}
		}
	}
	why := []struct {
		from   TaskState
		action TaskAction
		actor  TaskActorRole
		want   string
	}{
		{TaskStateDone, TaskActionReject, RolePerson, "the task is done and admits no further transition"},
		{TaskStateUnknown, TaskActionClaim, RoleAgent, "the task state unknown is unknown"},
		{TaskStateProposed, TaskActionClaim, RoleAgent, "cannot claim a proposed task"},
		{TaskStateNone, TaskActionClaim, RoleAgent, "cannot claim no task"},
		{TaskStateClaimed, TaskActionSubmit, RoleAgent, "only the holder may submit a claimed task"},
		{TaskStateClaimed, TaskActionRelease, RoleAgent, "only the holder or the person may release a claimed task"},
		{TaskStateSubmitted, TaskActionAccept, RoleHolder, "only the person, the independent agent or the service may accept a submitted task"},
	}
	for _, tc := range why {
		_, _, err := CheckTaskTransition(tc.from, tc.action, tc.actor)
		te, ok := err.(*TransitionError)
		if !ok || te.Message != tc.want || te.From != tc.from || te.Action != tc.action || te.Actor != tc.actor {
			t.Errorf("%s %s %s: %v, want %q", tc.from, tc.action, tc.actor, err, tc.want)
		}
	}
	for _, s := range states {
		if s.Terminal() != (s == TaskStateDone || s == TaskStateRejected || s == TaskStateCancelled) {
			t.Errorf("Terminal(%s)", s)
		}
	}
}

func TestTaskActorValidate(t *testing.T) {
	tests := []struct {
		name string
		a    TaskActorV1
		want string
	}{
		{"agent", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr("codex-85"), InstanceID: ptr("inst_1")}, ""},
		{"agent with label", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr("codex-85"), Label: ptr("CI")}, ""},
		{"agent without agent", TaskActorV1{Kind: TaskActorKindAgent}, "agent actors name an agent"},
		{"agent blank", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr(" ")}, "agent must not be empty"},
		{"agent instance", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr("a"), InstanceID: ptr("")}, "instance_id must not be empty"},
		{"agent label", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr("a"), Label: ptr("")}, "label must not be empty"},
		{"agent long label", TaskActorV1{Kind: TaskActorKindAgent, Agent: ptr("a"), Label: ptr(strings.Repeat("é", 129))}, "label exceeds the 128 character limit"},
		{"person", TaskActorV1{Kind: TaskActorKindPerson, Label: ptr("Ana")}, ""},
		{"person with agent", TaskActorV1{Kind: TaskActorKindPerson, Agent: ptr("a")}, "person actors carry no agent or instance_id"},
		{"person with instance", TaskActorV1{Kind: TaskActorKindPerson, InstanceID: ptr("i"), Label: ptr("Ana")}, "person actors carry no agent or instance_id"},
		{"person without label", TaskActorV1{Kind: TaskActorKindPerson}, "person actors carry a label"},
		{"person label with control", TaskActorV1{Kind: TaskActorKindPerson, Label: ptr("A\x00")}, "label must not contain control characters"},
		{"unknown", TaskActorV1{Kind: TaskActorKindUnknown, Label: ptr("x")}, "unknown task actor"},
		{"zero kind", TaskActorV1{}, "unknown task actor"},
	}
	for _, tc := range tests {
		if got := errText(tc.a.Validate()); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
