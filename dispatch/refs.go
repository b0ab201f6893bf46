package dispatch

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// This file holds the reference grammar of dispatch-tools.md §8.3 and the id forms of §8.5.

// RefKind is the kind of target a `dispatch://` reference names (§8.3).
type RefKind uint8

// The reference forms of §8.3.
const (
	RefIssue           RefKind = iota + 1 // dispatch://KEY
	RefIssueSpec                          // dispatch://KEY/spec
	RefIssueDocument                      // dispatch://KEY/artifact/<slug>[@v<N>]
	RefProjectDocument                    // dispatch://PROJECT/artifact/<slug>[@v<N>]
	RefIssueLog                           // dispatch://KEY/log
	RefIssueChildren                      // dispatch://KEY/children
	RefIssueAsk                           // dispatch://KEY/ask/<id>
	RefIssueComment                       // dispatch://KEY/comment/<id>
	RefIssueMessage                       // dispatch://KEY/message/<id>
	RefDocumentAsk                        // dispatch://PROJECT/artifact/<slug>[@v<N>]/ask/<id>
	RefDocumentComment                    // dispatch://PROJECT/artifact/<slug>[@v<N>]/comment/<id>
)

// Ref is a parsed `dispatch://` reference.
type Ref struct {
	Kind RefKind
	// Key is the native issue key (issue forms) and Project the project key (project-document
	// forms); the other is empty.
	Key, Project string
	// Slug is the document slug (document forms) and Version its `@v<N>` (0 when absent).
	Slug    string
	Version int64
	// ID is the ask, comment or message id (targeted forms).
	ID string
}

// NamesDocument reports whether the reference names a document (`…/spec`, an issue document or
// a project document).
func (r Ref) NamesDocument() bool {
	return r.Kind == RefIssueSpec || r.Kind == RefIssueDocument || r.Kind == RefProjectDocument
}

// basic reports whether every ref-taking tool accepts the form (the first four rows of §8.3).
func (r Ref) basic() bool {
	return r.Kind >= RefIssue && r.Kind <= RefProjectDocument
}

const refScheme = "dispatch://"

var (
	issueKeyRE = regexp.MustCompile(`^[A-Z][A-Z0-9]{1,9}-[1-9][0-9]*$`)
	slugRE     = regexp.MustCompile(`^[^/@?#\s]+$`)
	versionRE  = regexp.MustCompile(`^[1-9][0-9]*$`)
	// externalRE is `<owner>/<repo>#<n>` with GitHub owner and repository names and n ≥ 1.
	externalRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#([1-9][0-9]*)$`)
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	positiveRE = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// IsIssueKey reports whether s is a native issue key `<PROJECT>-<N>` (§1): PROJECT matches
// PROJECT_KEY_PATTERN and N is a decimal integer ≥ 1 without leading zeros.
func IsIssueKey(s string) bool { return issueKeyRE.MatchString(s) }

// IsProjectKey reports whether s matches PROJECT_KEY_PATTERN.
func IsProjectKey(s string) bool { return ProjectKeyRE.MatchString(s) }

// CanonicalExternalRef canonicalizes an external issue reference `<owner>/<repo>#<n>` (§8.3):
// trimmed, owner and repository lowercased. ok is false when s is not such a reference.
func CanonicalExternalRef(s string) (ref string, ok bool) {
	m := externalRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	return strings.ToLower(m[1]) + "/" + strings.ToLower(m[2]) + "#" + m[3], true
}

// IsUUID reports whether s is a uuid in canonical textual form (hex digits matched
// case-insensitively).
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// IsUUIDPrefix reports whether s is a prefix in the sense of §8.5: 8 or more leading characters
// of a canonical uuid (hex digits, hyphens only at canonical positions), case-insensitive.
func IsUUIDPrefix(s string) bool {
	if len(s) < 8 || len(s) > 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ParseRef parses a `dispatch://` reference of §8.3; nothing may follow a form.
func ParseRef(s string) (Ref, bool) {
	rest, ok := strings.CutPrefix(s, refScheme)
	if !ok {
		return Ref{}, false
	}
	parts := strings.Split(rest, "/")
	owner := parts[0]
	isKey, isProject := IsIssueKey(owner), IsProjectKey(owner)
	if !isKey && !isProject {
		return Ref{}, false
	}
	targeted := func(kind RefKind, r Ref, id string) (Ref, bool) {
		if id == "" {
			return Ref{}, false
		}
		r.Kind, r.ID = kind, id
		return r, true
	}
	if isKey {
		r := Ref{Key: owner}
		switch {
		case len(parts) == 1:
			r.Kind = RefIssue
			return r, true
		case len(parts) == 2 && parts[1] == "spec":
			r.Kind = RefIssueSpec
			return r, true
		case len(parts) == 2 && parts[1] == "log":
			r.Kind = RefIssueLog
			return r, true
		case len(parts) == 2 && parts[1] == "children":
			r.Kind = RefIssueChildren
			return r, true
		case len(parts) == 3 && parts[1] == "artifact":
			if !r.setSlug(parts[2]) {
				return Ref{}, false
			}
			r.Kind = RefIssueDocument
			return r, true
		case len(parts) == 3 && parts[1] == "ask":
			return targeted(RefIssueAsk, r, parts[2])
		case len(parts) == 3 && parts[1] == "comment":
			return targeted(RefIssueComment, r, parts[2])
		case len(parts) == 3 && parts[1] == "message":
			return targeted(RefIssueMessage, r, parts[2])
		}
		return Ref{}, false
	}
	r := Ref{Project: owner}
	if len(parts) < 3 || parts[1] != "artifact" || !r.setSlug(parts[2]) {
		return Ref{}, false
	}
	switch {
	case len(parts) == 3:
		r.Kind = RefProjectDocument
		return r, true
	case len(parts) == 5 && parts[3] == "ask":
		return targeted(RefDocumentAsk, r, parts[4])
	case len(parts) == 5 && parts[3] == "comment":
		return targeted(RefDocumentComment, r, parts[4])
	}
	return Ref{}, false
}

// setSlug parses `<slug>[@v<N>]`.
func (r *Ref) setSlug(s string) bool {
	slug, version, hasVersion := strings.Cut(s, "@v")
	if !slugRE.MatchString(slug) {
		return false
	}
	r.Slug = slug
	if hasVersion {
		if !versionRE.MatchString(version) {
			return false
		}
		n, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return false
		}
		r.Version = n
	}
	return true
}

// RewriteWebRef rewrites a `ref` that is an http(s) URL on the scheme, host and port of
// dispatchURL (§8.3): path `/issues/<KEY>` or `/issues/<KEY>/conversation` becomes
// `dispatch://<KEY>`, and a query `ask=<id>` on such a path becomes `dispatch://<KEY>/ask/<id>`.
// Any other value is returned unchanged.
func RewriteWebRef(ref, dispatchURL string) string {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ref
	}
	base, err := url.Parse(dispatchURL)
	if err != nil || !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Hostname(), base.Hostname()) ||
		effectivePort(u) != effectivePort(base) {
		return ref
	}
	rest, ok := strings.CutPrefix(u.Path, "/issues/")
	if !ok {
		return ref
	}
	key, tail, _ := strings.Cut(rest, "/")
	if !IsIssueKey(key) || (tail != "" && tail != "conversation") {
		return ref
	}
	if ask := u.Query().Get("ask"); ask != "" {
		return refScheme + key + "/ask/" + ask
	}
	return refScheme + key
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
