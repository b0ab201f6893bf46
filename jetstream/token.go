package jetstream

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/agentwire/agentwire/store"
)

// MaxIDBytes is the longest org, run id, channel or swarm_id the store accepts (relay.md §5.1.1:
// "at most 512 bytes on every store"): its token stays well inside a NATS subject.
const MaxIDBytes = 512

// token is the subject-safe, reversible encoding of an id (relay.md §5.1.1): unpadded base64url,
// whose alphabet has neither '.', '*', '>' nor white space. The empty id encodes to "", which no
// caller passes (every id is validated non-empty first).
func token(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// untoken decodes a token written by token.
func untoken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", fmt.Errorf("jetstream: subject token %q: %w", tok, err)
	}
	return string(b), nil
}

// checkID refuses an id longer than MaxIDBytes with an error wrapping store.ErrInvalid; field
// names it the way the relay's error body does.
func checkID(field, id string) error {
	if len(id) > MaxIDBytes {
		return fmt.Errorf("%w: %s is %d bytes, longer than %d", store.ErrInvalid, field, len(id), MaxIDBytes)
	}
	return nil
}

// Subject prefixes of the AGENTWIRE_RUNS stream (relay.md §5, §5.1.2).
const (
	runsPrefix    = "agentwire.runs."
	runSnapPrefix = "agentwire.runsnap."
	runHeadPrefix = "agentwire.runhead."
)

// runSubject is agentwire.runs.<org-token>.<runId-token>: the run's event chunks.
func runSubject(org, run string) string { return runsPrefix + token(org) + "." + token(run) }

// snapSubject carries the run's checkpoint chunks.
func snapSubject(org, run string) string { return runSnapPrefix + token(org) + "." + token(run) }

// headSubject carries the run's head records: one per committed batch, the last message of it.
func headSubject(org, run string) string { return runHeadPrefix + token(org) + "." + token(run) }

// splitKey decodes the two tokens after prefix in subject (<org-token>.<id-token>).
func splitKey(subject, prefix string) (org, id string, err error) {
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", fmt.Errorf("jetstream: subject %q is not under %q", subject, prefix)
	}
	o, i, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", fmt.Errorf("jetstream: subject %q has no id token", subject)
	}
	if org, err = untoken(o); err != nil {
		return "", "", err
	}
	if id, err = untoken(i); err != nil {
		return "", "", err
	}
	return org, id, nil
}
