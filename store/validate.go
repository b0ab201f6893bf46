package store

import (
	"fmt"
)

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
	if len(req.Snapshot) == 0 {
		return fmt.Errorf("%w: empty snapshot", ErrInvalid)
	}
	if req.Status == "" {
		return fmt.Errorf("%w: empty status", ErrInvalid)
	}
	for i, e := range req.Events {
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
	if org == "" {
		return fmt.Errorf("%w: empty org", ErrInvalid)
	}
	if runID == "" {
		return fmt.Errorf("%w: empty run ID", ErrInvalid)
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
	if org == "" {
		return fmt.Errorf("%w: empty org", ErrInvalid)
	}
	if q.Limit <= 0 {
		return fmt.Errorf("%w: limit %d is not positive", ErrInvalid, q.Limit)
	}
	return nil
}
