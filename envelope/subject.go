package envelope

import (
	"errors"
	"strings"
)

// Subject prefixes of envelope.md §3.4 (TS names in parentheses).
const (
	// AgentTopicPrefix (AGENT_TOPIC_PREFIX) starts the direct agent lane notifications.agent.<session>.
	AgentTopicPrefix = "notifications.agent."
	// RoleTopicPrefix (ROLE_TOPIC_PREFIX) starts the role lane notifications.role.<role>.
	RoleTopicPrefix = "notifications.role."
	// GhostWisprTopicPrefix (GHOSTWISPR_TOPIC_PREFIX) starts GhostWispr subjects.
	GhostWisprTopicPrefix = "notifications.ghostwispr."
	// DispatchTopicPrefix (DISPATCH_TOPIC_PREFIX) starts every Dispatch subject (project-defined Go name).
	DispatchTopicPrefix = "notifications.dispatch."
	// DispatchIssueTopicPrefix (DISPATCH_ISSUE_TOPIC_PREFIX) starts Dispatch issue subjects
	// (project-defined Go name).
	DispatchIssueTopicPrefix = "notifications.dispatch.issue."
	// DispatchDocumentTopicPrefix (DISPATCH_DOCUMENT_TOPIC_PREFIX) starts Dispatch project-document
	// subjects (project-defined Go name).
	DispatchDocumentTopicPrefix = "notifications.dispatch.document."
	// LegionNoticeTopicPrefix (LEGION_NOTICE_TOPIC_PREFIX) starts the Legion notice family, whose
	// only member is the controller topic (project-defined Go name).
	LegionNoticeTopicPrefix = "notifications.legion."
	// ExceptionTopicPrefix (EXCEPTION_TOPIC_PREFIX, project-defined names) starts delivery-exception
	// topics notifications.envoy.exceptions.<original topic> (§5.3).
	ExceptionTopicPrefix = "notifications.envoy.exceptions."
	// AgentStreamSubjectPrefix (AGENT_STREAM_SUBJECT_PREFIX) starts the agent stream subjects,
	// outside notifications. on purpose (§5.4).
	AgentStreamSubjectPrefix = "agentstream."
)

// Prefixes used by the helpers that have no exported constant of their own in the spec.
const (
	githubTopicPrefix = "notifications.github."
	slackTopicPrefix  = "notifications.slack."
	whatsappPrefix    = "notifications.whatsapp."
)

// AgentStreamProtocol (AGENT_STREAM_PROTOCOL) is the agent stream protocol number (§5.4;
// project-defined Go name).
const AgentStreamProtocol = 1

// SubjectSegmentReplaced (TS SUBJECT_SEGMENT_REPLACED, project-defined Go name) holds, in order,
// the seven characters [SanitizeSubjectSegment] replaces with "_": `.`, space, tab, CR, LF, `*`,
// `>` (envelope.md §3.3).
const SubjectSegmentReplaced = ". \t\r\n*>"

// segmentReplacer is derived from SubjectSegmentReplaced so the set is spelled once.
var segmentReplacer = func() *strings.Replacer {
	pairs := make([]string, 0, 2*len(SubjectSegmentReplaced))
	for _, c := range SubjectSegmentReplaced {
		pairs = append(pairs, string(c), "_")
	}
	return strings.NewReplacer(pairs...)
}()

// SanitizeSubjectSegment (TS sanitizeSubjectSegment) replaces each occurrence of the seven
// characters of [SubjectSegmentReplaced] with "_" and changes nothing else (envelope.md §3.3):
// "ci.yml" → "ci_yml", "feat/foo" → "feat/foo". It is lossy on purpose ("a.b" and "a_b" collide).
func SanitizeSubjectSegment(v string) string {
	if !strings.ContainsAny(v, SubjectSegmentReplaced) {
		return v
	}
	return segmentReplacer.Replace(v)
}

// AgentSubject (agentSubject) is notifications.agent.<session>, the direct agent lane.
func AgentSubject(session string) string { return AgentTopicPrefix + session }

// RoleSubject (project-defined) is notifications.role.<role>, the role lane.
func RoleSubject(role string) string { return RoleTopicPrefix + role }

// githubRepoPrefix is the one shared repository prefix of every GitHub helper:
// notifications.github.<S(owner)>.<S(repo)>. (envelope.md §3.5).
func githubRepoPrefix(owner, repo string) string {
	return githubTopicPrefix + SanitizeSubjectSegment(owner) + "." + SanitizeSubjectSegment(repo) + "."
}

// GithubSubject (githubSubject) is notifications.github.<S(owner)>.<S(repo)>.<kind>; kind is
// verbatim and may span tokens (pr.42.comment).
func GithubSubject(owner, repo, kind string) string { return githubRepoPrefix(owner, repo) + kind }

// GithubResourceSubject (githubResourceSubject) is
// notifications.github.<S(owner)>.<S(repo)>.<type>.<number>; number is a decimal string.
func GithubResourceSubject(owner, repo, resourceType, number string) string {
	return githubRepoPrefix(owner, repo) + resourceType + "." + number
}

// GithubPushSubject (githubPushSubject) is
// notifications.github.<S(owner)>.<S(repo)>.push.<refType>.<S(refName)>; refType is branch or
// tag; branch names keep "/".
func GithubPushSubject(owner, repo, refType, refName string) string {
	return githubRepoPrefix(owner, repo) + "push." + refType + "." + SanitizeSubjectSegment(refName)
}

// GithubWorkflowSubject (githubWorkflowSubject) is
// notifications.github.<S(owner)>.<S(repo)>.workflow.<S(file)>.<action>; action is requested,
// in_progress or completed.
func GithubWorkflowSubject(owner, repo, file, action string) string {
	return githubRepoPrefix(owner, repo) + "workflow." + SanitizeSubjectSegment(file) + "." + action
}

// SlackSubject (slackSubject) is notifications.slack.<team>.<channel>.<kind>, the channel topic.
func SlackSubject(team, channel, kind string) string {
	return slackTopicPrefix + team + "." + channel + "." + kind
}

// SlackThreadSubject (slackThreadSubject) is
// notifications.slack.<team>.<channel>.thread.<S(threadTs)>.<kind>; it starts with its channel
// prefix. A thread reply is published on the channel topic and the thread topic with one key.
func SlackThreadSubject(team, channel, threadTs, kind string) string {
	return slackTopicPrefix + team + "." + channel + ".thread." + SanitizeSubjectSegment(threadTs) + "." + kind
}

// GhostWisprSubject (ghostWisprSubject) is notifications.ghostwispr.<sessionID>.<kind>.
func GhostWisprSubject(sessionID, kind string) string {
	return GhostWisprTopicPrefix + sessionID + "." + kind
}

// WhatsappSubject (whatsappSubject) is notifications.whatsapp.<phone>.<jid>.<kind>; the JID is
// verbatim and may span tokens.
func WhatsappSubject(phone, jid, kind string) string {
	return whatsappPrefix + phone + "." + jid + "." + kind
}

// DispatchIssueSubject (dispatchIssueSubject; project-defined Go name) is
// notifications.dispatch.issue.<issueKey>.<type>.
func DispatchIssueSubject(issueKey, eventType string) string {
	return DispatchIssueTopicPrefix + issueKey + "." + eventType
}

// DispatchDocumentSubject (dispatchDocumentSubject; project-defined Go name) is
// notifications.dispatch.document.<project>.<slug>.<type>.
func DispatchDocumentSubject(project, slug, eventType string) string {
	return DispatchDocumentTopicPrefix + project + "." + slug + "." + eventType
}

// LegionControllerNoticeSubject (legionControllerNoticeSubject; project-defined Go name) is
// notifications.legion.<project>.controller, the only member of the Legion notice family.
func LegionControllerNoticeSubject(project string) string {
	return LegionNoticeTopicPrefix + project + ".controller"
}

// ExceptionSubject (project-defined) is notifications.envoy.exceptions.<originalTopic>, the topic
// of a delivery exception (§5.3).
func ExceptionSubject(originalTopic string) string { return ExceptionTopicPrefix + originalTopic }

// AgentStreamFramesSubject (agentStreamFramesSubject) is agentstream.<sessionID>.frames.
func AgentStreamFramesSubject(sessionID string) string {
	return AgentStreamSubjectPrefix + sessionID + ".frames"
}

// AgentStreamControlSubject (agentStreamControlSubject) is agentstream.<sessionID>.control.
func AgentStreamControlSubject(sessionID string) string {
	return AgentStreamSubjectPrefix + sessionID + ".control"
}

// SubjectHelper describes one subject helper for table-driven callers (the CLI's `subject KIND`
// and the conformance runner; project-defined).
type SubjectHelper struct {
	// Kind is the kebab-case of the Go helper name without the Subject suffix (cli.md), or
	// "sanitize-segment" for SanitizeSubjectSegment.
	Kind string
	// Params names the helper's parameters in order.
	Params []string
	// Build calls the helper; len(args) must equal len(Params).
	Build func(args ...string) string
}

// SubjectHelpers returns every subject helper of envelope.md §3.5 in the spec's table order,
// followed by sanitize-segment (§3.3).
func SubjectHelpers() []SubjectHelper {
	return []SubjectHelper{
		{"agent", []string{"session"}, func(a ...string) string { return AgentSubject(a[0]) }},
		{"role", []string{"role"}, func(a ...string) string { return RoleSubject(a[0]) }},
		{"github", []string{"owner", "repo", "kind"}, func(a ...string) string { return GithubSubject(a[0], a[1], a[2]) }},
		{"github-resource", []string{"owner", "repo", "type", "number"}, func(a ...string) string { return GithubResourceSubject(a[0], a[1], a[2], a[3]) }},
		{"github-push", []string{"owner", "repo", "refType", "refName"}, func(a ...string) string { return GithubPushSubject(a[0], a[1], a[2], a[3]) }},
		{"github-workflow", []string{"owner", "repo", "file", "action"}, func(a ...string) string { return GithubWorkflowSubject(a[0], a[1], a[2], a[3]) }},
		{"slack", []string{"team", "channel", "kind"}, func(a ...string) string { return SlackSubject(a[0], a[1], a[2]) }},
		{"slack-thread", []string{"team", "channel", "threadTs", "kind"}, func(a ...string) string { return SlackThreadSubject(a[0], a[1], a[2], a[3]) }},
		{"ghostwispr", []string{"sessionID", "kind"}, func(a ...string) string { return GhostWisprSubject(a[0], a[1]) }},
		{"whatsapp", []string{"phone", "jid", "kind"}, func(a ...string) string { return WhatsappSubject(a[0], a[1], a[2]) }},
		{"dispatch-issue", []string{"issueKey", "type"}, func(a ...string) string { return DispatchIssueSubject(a[0], a[1]) }},
		{"dispatch-document", []string{"project", "slug", "type"}, func(a ...string) string { return DispatchDocumentSubject(a[0], a[1], a[2]) }},
		{"legion-controller-notice", []string{"project"}, func(a ...string) string { return LegionControllerNoticeSubject(a[0]) }},
		{"exception", []string{"originalTopic"}, func(a ...string) string { return ExceptionSubject(a[0]) }},
		{"agent-stream-frames", []string{"sessionID"}, func(a ...string) string { return AgentStreamFramesSubject(a[0]) }},
		{"agent-stream-control", []string{"sessionID"}, func(a ...string) string { return AgentStreamControlSubject(a[0]) }},
		{"sanitize-segment", []string{"value"}, func(a ...string) string { return SanitizeSubjectSegment(a[0]) }},
	}
}

// LookupSubjectHelper returns the helper of [SubjectHelpers] with the given kind.
func LookupSubjectHelper(kind string) (SubjectHelper, bool) {
	for _, h := range SubjectHelpers() {
		if h.Kind == kind {
			return h, true
		}
	}
	return SubjectHelper{}, false
}

// MaxSubjectBytes is the longest valid subject in bytes (envelope.md §3.2 rule 2): 4 KiB less 64
// bytes for the rest of the longest publish line, under the broker's 4 KiB default.
const MaxSubjectBytes = 4032

// Subject validity errors of envelope.md §3.2 (project-defined messages), in rule order.
var (
	ErrSubjectEmpty          = errors.New("subject must not be empty")
	ErrSubjectTooLong        = errors.New("subject is longer than 4032 bytes")
	ErrSubjectEmptyToken     = errors.New("subject has an empty token")
	ErrSubjectWhitespace     = errors.New("subject must not contain whitespace")
	ErrSubjectWildcard       = errors.New("subject must not contain wildcards")
	ErrSubjectWildcardToken  = errors.New("subject wildcard must be a whole token")
	ErrSubjectFullWildcardAt = errors.New("subject '>' must be the last token")
)

// ValidPublishSubject returns the first failing rule of envelope.md §3.2 for a subject to publish
// on (rules 1–5), or nil. A publisher runs it on the topic before sending and does not send on
// failure.
func ValidPublishSubject(s string) error {
	if err := validSubjectCommon(s); err != nil {
		return err
	}
	if strings.ContainsAny(s, "*>") {
		return ErrSubjectWildcard
	}
	return nil
}

// ValidSubscribeSubject returns the first failing rule of envelope.md §3.2 for a subscription
// pattern (rules 1–4, 6, 7), or nil: `*` and `>` are allowed as whole tokens, `>` only last.
func ValidSubscribeSubject(s string) error {
	if err := validSubjectCommon(s); err != nil {
		return err
	}
	if !strings.ContainsAny(s, "*>") {
		return nil
	}
	// Rule 6 over every token before rule 7: the first failing rule wins, not the first token.
	for rest, more := s, true; more; {
		var tok string
		tok, rest, more = cutToken(rest)
		if len(tok) > 1 && strings.ContainsAny(tok, "*>") {
			return ErrSubjectWildcardToken
		}
	}
	for rest, more := s, true; more; {
		var tok string
		tok, rest, more = cutToken(rest)
		if tok == ">" && more {
			return ErrSubjectFullWildcardAt
		}
	}
	return nil
}

// validSubjectCommon is rules 1–4, in order.
func validSubjectCommon(s string) error {
	if s == "" {
		return ErrSubjectEmpty
	}
	if len(s) > MaxSubjectBytes {
		return ErrSubjectTooLong
	}
	if s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return ErrSubjectEmptyToken
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return ErrSubjectWhitespace
	}
	return nil
}

// MatchSubject (project-defined name) reports whether subject matches the subscription pattern
// (envelope.md §3.1): tokens are separated by ".", `*` matches exactly one token, `>` as the last
// pattern token matches one or more trailing tokens, and every other token (including `a*`, or
// `>` not in last place) is compared byte for byte. Neither argument is validated.
func MatchSubject(pattern, subject string) bool {
	// Tokens are those of strings.Split(x, "."): "" is one empty token and "a." ends with one.
	// At the top of the loop p and s each hold at least one token.
	p, s := pattern, subject
	for {
		pt, prest, pmore := cutToken(p)
		if pt == ">" && !pmore {
			return true // s holds at least one token
		}
		st, srest, smore := cutToken(s)
		if pt != "*" && pt != st {
			return false
		}
		if !pmore || !smore {
			return pmore == smore
		}
		p, s = prest, srest
	}
}

// cutToken splits s at its first ".": the token, the rest after the dot, and whether a dot was
// found (so another token follows, possibly empty).
func cutToken(s string) (tok, rest string, more bool) {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}
