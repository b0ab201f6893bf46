package dispatch

import (
	"github.com/agentwire/agentwire/jsonvalue"
)

// The cross-field messages of dispatch-tools.md §5, verbatim (P12).
const (
	// MsgOwner is OWNER(requireArtifact, false)'s message (§5.2).
	MsgOwner = "Exactly one of issue and project is required; with project, artifact names the document."
	// MsgOwnerDocument is OWNER(requireArtifact, true)'s message (§5.2).
	MsgOwnerDocument = "Exactly one of issue and project is required; artifact or ref must name the document."
	// MsgComment is COMMENT's message (§5.3).
	MsgComment = MsgOwner + " turn requires reply_to_ask."
	// MsgDocEdit is DOC_EDIT's message (§5.4).
	MsgDocEdit = MsgOwnerDocument + " A precondition selects exactly one of document or blocks."
	// MsgIssueUpdate is the dispatch_issue_update rule's message (§5.5).
	MsgIssueUpdate = "Issue update requires at least one field besides issue: status, title, labels, external_links, route, parent, or components."
	// MsgEditAsk is the dispatch_edit_ask rule's message (§5.5).
	MsgEditAsk = "Ask edit requires at least one field besides ask."
	// MsgArtifact is ARTIFACT's message (§5.5).
	MsgArtifact = "Exactly one of path or content is required. " + MsgOwner
)

func isString(o *jsonvalue.Object, key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	_, ok = v.(string)
	return ok
}

func isArray(o *jsonvalue.Object, key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	_, ok = v.([]any)
	return ok
}

func isBool(o *jsonvalue.Object, key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	_, ok = v.(bool)
	return ok
}

func isObject(o *jsonvalue.Object, key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	x, ok := v.(*jsonvalue.Object)
	return ok && x != nil
}

// OwnerRule is OWNER(requireArtifact, alwaysRequireArtifact) of §5.2 over a normalized argument
// object. It passes iff (a) exactly one of issue and project is a string, or neither is and ref
// is a string; (b) with requireArtifact and project a string, artifact is a string; (c) with
// alwaysRequireArtifact, artifact or ref is a string.
func OwnerRule(o *jsonvalue.Object, requireArtifact, alwaysRequireArtifact bool) bool {
	return ownerA(o) && ownerBC(o, requireArtifact, alwaysRequireArtifact)
}

// ownerA is clause (a) of §5.2.
func ownerA(o *jsonvalue.Object) bool {
	issue, project := isString(o, "issue"), isString(o, "project")
	return issue != project || (!issue && !project && isString(o, "ref"))
}

// ownerBC is clauses (b) and (c) of §5.2.
func ownerBC(o *jsonvalue.Object, requireArtifact, alwaysRequireArtifact bool) bool {
	artifact := isString(o, "artifact")
	if requireArtifact && isString(o, "project") && !artifact {
		return false
	}
	if alwaysRequireArtifact && !artifact && !isString(o, "ref") {
		return false
	}
	return true
}

// owner returns the check of OWNER(requireArtifact, alwaysRequireArtifact).
func owner(requireArtifact, alwaysRequireArtifact bool) func(*jsonvalue.Object) bool {
	return func(o *jsonvalue.Object) bool { return OwnerRule(o, requireArtifact, alwaysRequireArtifact) }
}

// commentRest is COMMENT (§5.3) without OWNER: `turn` is absent unless `reply_to_ask` is a
// string.
func commentRest(o *jsonvalue.Object) bool { return !o.Has("turn") || isString(o, "reply_to_ask") }

// CommentRule is COMMENT (§5.3).
func CommentRule(o *jsonvalue.Object) bool { return OwnerRule(o, true, false) && commentRest(o) }

// docEditRest is DOC_EDIT (§5.4) without OWNER: a present precondition is a non-null object in
// which exactly one of `document` is a string, `blocks` is an array.
func docEditRest(o *jsonvalue.Object) bool {
	v, ok := o.Get("precondition")
	if !ok {
		return true
	}
	pre, isObj := v.(*jsonvalue.Object)
	if !isObj || pre == nil {
		return false
	}
	return isString(pre, "document") != isArray(pre, "blocks")
}

// DocEditRule is DOC_EDIT (§5.4).
func DocEditRule(o *jsonvalue.Object) bool { return OwnerRule(o, true, true) && docEditRest(o) }

// IssueUpdateRule is the dispatch_issue_update rule of §5.5: at least one of status, title,
// route and parent is a string, labels or external_links an array, or components a non-null
// object.
func IssueUpdateRule(o *jsonvalue.Object) bool {
	return isString(o, "status") || isString(o, "title") || isArray(o, "labels") ||
		isArray(o, "external_links") || isString(o, "route") || isString(o, "parent") ||
		isObject(o, "components")
}

// EditAskRule is the dispatch_edit_ask rule of §5.5: question is a string, options an array,
// multiple a boolean or urgency a string.
func EditAskRule(o *jsonvalue.Object) bool {
	return isString(o, "question") || isArray(o, "options") || isBool(o, "multiple") || isString(o, "urgency")
}

// artifactRest is ARTIFACT (§5.5) without OWNER: exactly one of path and content is a string.
func artifactRest(o *jsonvalue.Object) bool { return isString(o, "path") != isString(o, "content") }

// ArtifactRule is ARTIFACT (§5.5): exactly one of path and content is a string, and
// OWNER(false, false).
func ArtifactRule(o *jsonvalue.Object) bool { return artifactRest(o) && OwnerRule(o, false, false) }
