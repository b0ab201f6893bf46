package dispatch

import (
	"errors"
	"strings"

	"github.com/agentwire/agentwire/jsonvalue"
	ts "github.com/agentwire/agentwire/toolspec"
)

// This file holds the executor's validation pass, dispatch-tools.md §8.1–§8.4: everything the
// executor checks before it sends a request. It is pure (no I/O): the host context it reads is
// passed in.

// ErrDisabled is the configuration failure of §8.1.
//
//lint:ignore ST1005 the text is the spec's exact message
var ErrDisabled = errors.New("Dispatch is disabled; resolve both DISPATCH_URL and DISPATCH_TOKEN")

// CheckConfig is step 1 of §8.2: both DISPATCH_URL and DISPATCH_TOKEN must be non-blank, or every
// call fails with [ErrDisabled] before validation.
func CheckConfig(dispatchURL, token string) error {
	if strings.TrimSpace(dispatchURL) == "" || strings.TrimSpace(token) == "" {
		return ErrDisabled
	}
	return nil
}

// HostContext is what the executor's validation reads from its host (§8.1, §8.3).
type HostContext struct {
	// DispatchURL is the configured base URL; same-origin web links in `ref` are rewritten to
	// `dispatch://` references.
	DispatchURL string
	// LegionIssue is the LEGION_ISSUE environment variable ("" when unset).
	LegionIssue string
	// GitHubRepo is the `owner/repo` of the cwd's GitHub repository, "" when there is none.
	GitHubRepo string
}

// Owner-resolution and executor problem messages (§8.3, §8.4), verbatim.
const (
	MsgAskRefForm          = "ref must be a dispatch:// reference"
	MsgRefForm             = "ref must be a valid dispatch:// reference such as dispatch://KEY-1, dispatch://KEY-1/spec, dispatch://KEY-1/artifact/<slug>, or dispatch://PROJECT/artifact/<slug>"
	MsgIssueAndProject     = "exactly one of issue and project is required"
	MsgProjectKey          = "project must be a project key such as CORE"
	MsgIssueKey            = "issue must be a native issue key such as DSP-1 or an external owner/repo#n reference"
	MsgProjectRefDocument  = "project and ref must name the same document"
	MsgIssueRefIssue       = "issue and ref must name the same issue"
	MsgIssueRequired       = "issue is required; supply issue or set LEGION_ISSUE"
	MsgLegionIssueRepo     = "issue is required; LEGION_ISSUE needs a GitHub repository in cwd"
	MsgLegionIssueForm     = "LEGION_ISSUE must be a native issue key (e.g. LEGION-3), an external owner/repo#n reference, or a bare positive issue number"
	MsgQuoteNeedsArtifact  = "artifact is required when quote is supplied"
	MsgReplyToBoth         = "reply_to and reply_to_ask cannot both be set"
	MsgInReplyTo           = "in_reply_to must be a full message id (uuid) or a dispatch://KEY/message/<id> reference"
	MsgVersionRef          = "version and ref must name the same version"
	MsgAskRef              = "ask must be a bare ask id or a dispatch://.../ask/<id> reference"
	MsgFollowAsk           = "ask must be a full ask id (uuid) or a dispatch://.../ask/<id> reference"
	MsgCommentRef          = "comment must be a bare comment id or a dispatch://.../comment/<id> reference"
	askRefSuffix           = "; shorten the question or drop the ref"
	idSuffix               = " must be a full uuid or a prefix of at least 8 hex characters"
	composedQuestionSep    = "\n\nRef: "
	composedQuestionPrefix = "question plus ref "
)

// ownerTools are the tools whose owner is resolved (§8.3), each with its cross-field check
// evaluated with clause (a) of §5.2 treated as satisfied (for the owner-restatement rule of
// §8.2); tools whose rule has no clause (a) keep their rule.
var ownerTools = map[string]func(*jsonvalue.Object) bool{
	ToolIssueUpdate:     IssueUpdateRule,
	ToolAsk:             func(o *jsonvalue.Object) bool { return ownerBC(o, true, false) },
	ToolComment:         func(o *jsonvalue.Object) bool { return ownerBC(o, true, false) && commentRest(o) },
	ToolSuggest:         func(o *jsonvalue.Object) bool { return ownerBC(o, true, true) },
	ToolMessage:         nil,
	ToolDocEdit:         func(o *jsonvalue.Object) bool { return ownerBC(o, true, true) && docEditRest(o) },
	ToolDocRead:         func(o *jsonvalue.Object) bool { return ownerBC(o, true, false) },
	ToolRequestApproval: func(o *jsonvalue.Object) bool { return ownerBC(o, true, false) },
	ToolArtifact:        func(o *jsonvalue.Object) bool { return artifactRest(o) && ownerBC(o, false, false) },
	ToolRead:            func(o *jsonvalue.Object) bool { return ownerBC(o, true, false) },
}

// ValidateCall is the executor's validation pass (§8.2 step 2): owner-resolution problems
// (§8.3), then the strict-parse problems (§2.3) without the owner restatements, then the
// executor argument problems (§8.4), in one list. It returns the arguments the executor builds
// its requests from — a `ref` rewritten from a same-origin web link, the `LEGION_ISSUE` fallback
// applied as `issue` — or the problems; the caller renders a refusal with spec.Refusal. args is
// a value of the jsonvalue model (pass an empty object for an absent payload). ValidateCall
// does not run [CheckConfig] (step 1) and sends nothing.
func ValidateCall(spec *ts.Spec, args any, host HostContext) (*jsonvalue.Object, ts.Problems) {
	o, isObj := args.(*jsonvalue.Object)
	if !isObj || o == nil {
		return spec.Parse(args, ts.Strict)
	}
	tool := spec.Name()
	relaxed, resolves := ownerTools[tool]
	var owner ts.Problems
	if resolves {
		o, owner = resolveOwner(spec, o, host)
	}
	out, parsed := spec.Parse(o, ts.Strict)
	problems := owner
	for _, p := range parsed {
		if len(owner) > 0 && isRestatement(p, o, relaxed) {
			continue
		}
		problems = append(problems, p)
	}
	problems = append(problems, executorChecks(tool, o, parsed)...)
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// isRestatement reports a strict-parse problem that only restates an owner-resolution problem
// (§8.2): the P1 line for issue, or the cross-field message when the check passes with clause
// (a) satisfied.
func isRestatement(p ts.Problem, o *jsonvalue.Object, relaxed func(*jsonvalue.Object) bool) bool {
	switch p.Type {
	case ts.ProblemRequired:
		return p.Path == "issue"
	case ts.ProblemCrossField:
		return relaxed != nil && relaxed(o)
	}
	return false
}

func problem(msg string) ts.Problem { return ts.Problem{Type: ts.ProblemExecutor, Message: msg} }

func stringArg(o *jsonvalue.Object, key string) (string, bool) {
	v, ok := o.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func declares(spec *ts.Spec, key string) bool {
	for _, f := range spec.Arguments() {
		if f.Key == key {
			return true
		}
	}
	return false
}

// resolveOwner applies §8.3: the ref rewrite, the owner-resolution problems in the table's
// order and the LEGION_ISSUE fallback. It returns the arguments to parse (a copy when changed).
func resolveOwner(spec *ts.Spec, o *jsonvalue.Object, host HostContext) (*jsonvalue.Object, ts.Problems) {
	tool := spec.Name()
	var problems ts.Problems
	hasRef := declares(spec, "ref")
	refText, refIsString := stringArg(o, "ref")
	refIsString = refIsString && hasRef
	if refIsString && host.DispatchURL != "" {
		if rw := RewriteWebRef(refText, host.DispatchURL); rw != refText {
			o = copyWith(o, "ref", rw)
			refText = rw
		}
	}
	var ref Ref
	refValid := false
	if refIsString {
		ref, refValid = ParseRef(refText)
		switch {
		case tool == ToolAsk:
			if !refValid {
				problems = append(problems, problem(MsgAskRefForm))
			}
		case !refValid || (tool != ToolRead && !ref.basic()):
			refValid = false
			problems = append(problems, problem(MsgRefForm))
		}
	}
	issue, issueIsString := stringArg(o, "issue")
	project, projectIsString := stringArg(o, "project")
	// Only declared arguments take part; an undeclared one is the strict parse's P4.
	projectIsString = projectIsString && declares(spec, "project")
	if issueIsString && projectIsString {
		problems = append(problems, problem(MsgIssueAndProject))
	}
	if projectIsString && !IsProjectKey(project) {
		problems = append(problems, problem(MsgProjectKey))
	}
	issueValid := false
	if issueIsString {
		if _, ext := CanonicalExternalRef(issue); IsIssueKey(issue) || ext {
			issueValid = true
		} else {
			problems = append(problems, problem(MsgIssueKey))
		}
	}
	if tool != ToolAsk && refValid {
		artifact, artifactIsString := stringArg(o, "artifact")
		artifactIsString = artifactIsString && declares(spec, "artifact")
		if projectIsString && artifactIsString &&
			(ref.Kind != RefProjectDocument || ref.Project != project || ref.Slug != artifact) {
			problems = append(problems, problem(MsgProjectRefDocument))
		}
		if issueValid && IsIssueKey(issue) && ref.Key != "" && ref.Key != issue {
			problems = append(problems, problem(MsgIssueRefIssue))
		}
	}
	if !o.Has("issue") && !(declares(spec, "project") && o.Has("project")) && !(hasRef && o.Has("ref")) {
		fallback, p := legionIssue(host)
		if p != "" {
			problems = append(problems, problem(p))
		} else {
			o = copyWith(o, "issue", fallback)
		}
	}
	return o, problems
}

// legionIssue resolves the LEGION_ISSUE fallback of §8.3: the issue to use, or a problem.
func legionIssue(host HostContext) (issue, problem string) {
	v := strings.TrimSpace(host.LegionIssue)
	switch {
	case v == "":
		return "", MsgIssueRequired
	case IsIssueKey(v):
		return v, ""
	}
	if ext, ok := CanonicalExternalRef(v); ok {
		return ext, ""
	}
	if positiveRE.MatchString(v) {
		repo := strings.TrimSpace(host.GitHubRepo)
		if repo == "" {
			return "", MsgLegionIssueRepo
		}
		if ext, ok := CanonicalExternalRef(repo + "#" + v); ok {
			return ext, ""
		}
		return "", MsgLegionIssueRepo
	}
	return "", MsgLegionIssueForm
}

// copyWith returns a copy of o with key set (appended when absent).
func copyWith(o *jsonvalue.Object, key string, v any) *jsonvalue.Object {
	c := jsonvalue.NewObject(o.Len() + 1)
	for _, m := range o.Members() {
		c.Set(m.Name, m.Value)
	}
	c.Set(key, v)
	return c
}

// shapeOK reports whether a key holds a string that passed its own shape checks.
func shapeOK(o *jsonvalue.Object, parsed ts.Problems, key string) (string, bool) {
	s, ok := stringArg(o, key)
	if !ok {
		return "", false
	}
	for _, p := range parsed {
		if p.Path == key || strings.HasPrefix(p.Path, key+".") {
			return "", false
		}
	}
	return s, true
}

// executorChecks are the argument checks of §8.4, in the table's order.
func executorChecks(tool string, o *jsonvalue.Object, parsed ts.Problems) ts.Problems {
	var problems ts.Problems
	add := func(msg string) { problems = append(problems, problem(msg)) }
	switch tool {
	case ToolAsk:
		question, qok := shapeOK(o, parsed, "question")
		ref, rok := shapeOK(o, parsed, "ref")
		if qok && rok && !strings.Contains(question, ref) {
			if l := ts.UTF16Len(question) + ts.UTF16Len(composedQuestionSep) + ts.UTF16Len(ref); l > AskQuestionMax {
				add(composedQuestionPrefix + ts.OverCapMessage(l, AskQuestionMax) + askRefSuffix)
			}
		}
	case ToolComment:
		if _, ok := shapeOK(o, parsed, "quote"); ok {
			_, artifact := stringArg(o, "artifact")
			ref, refOK := stringArg(o, "ref")
			r, parsedRef := ParseRef(ref)
			if !artifact && !(refOK && parsedRef && r.NamesDocument()) {
				add(MsgQuoteNeedsArtifact)
			}
		}
		_, a := shapeOK(o, parsed, "reply_to")
		_, b := shapeOK(o, parsed, "reply_to_ask")
		if a && b {
			add(MsgReplyToBoth)
		}
	case ToolMessage:
		if v, ok := shapeOK(o, parsed, "in_reply_to"); ok && !IsUUID(v) {
			r, isRef := ParseRef(v)
			if !isRef || r.Kind != RefIssueMessage || !IsUUID(r.ID) {
				add(MsgInReplyTo)
			}
		}
	case ToolDocRead:
		if _, ok := o.Get("version"); ok && !hasProblemAt(parsed, "version") {
			version, _ := o.Get("version")
			ref, rok := shapeOK(o, parsed, "ref")
			if r, isRef := ParseRef(ref); rok && isRef && r.Version != 0 && float64(r.Version) != version.(float64) {
				add(MsgVersionRef)
			}
		}
	case ToolEditAsk, ToolResolveAsk:
		if v, ok := shapeOK(o, parsed, "ask"); ok && strings.HasPrefix(v, refScheme) {
			r, isRef := ParseRef(v)
			switch {
			case !isRef || (r.Kind != RefIssueAsk && r.Kind != RefDocumentAsk):
				add(MsgAskRef)
			case !IsUUID(r.ID) && !IsUUIDPrefix(r.ID):
				add("ask id " + r.ID + idSuffix)
			}
		}
	case ToolFollow:
		if v, ok := shapeOK(o, parsed, "ask"); ok && !IsUUID(v) {
			r, isRef := ParseRef(v)
			if !isRef || (r.Kind != RefIssueAsk && r.Kind != RefDocumentAsk) || !IsUUID(r.ID) {
				add(MsgFollowAsk)
			}
		}
	case ToolResolveComment:
		if v, ok := shapeOK(o, parsed, "comment"); ok && !IsUUID(v) {
			r, isRef := ParseRef(v)
			switch {
			case !isRef || (r.Kind != RefIssueComment && r.Kind != RefDocumentComment):
				add(MsgCommentRef)
			case !IsUUID(r.ID) && !IsUUIDPrefix(r.ID):
				add("comment id " + r.ID + idSuffix)
			}
		}
	}
	return problems
}

func hasProblemAt(parsed ts.Problems, key string) bool {
	for _, p := range parsed {
		if p.Path == key {
			return true
		}
	}
	return false
}

// ComposeQuestion returns the question the executor sends for dispatch_ask (§8.4): the question
// followed by "\n\nRef: <ref>" unless it already contains ref.
func ComposeQuestion(question, ref string) string {
	if ref == "" || strings.Contains(question, ref) {
		return question
	}
	return question + composedQuestionSep + ref
}
