package leanctx

import (
	"encoding/json"
	"strings"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/hive/wire"
)

// Extension limits (hive.md §7.1).
const (
	MaxExtensionFields    = 256
	MaxExtensionDepth     = 8
	MaxExtensionItems     = 256
	MaxExtensionBytes     = 65536
	maxExtensionStringLen = 65536
)

// Extension is one retained unknown top-level member.
type Extension struct {
	// Key is the member name.
	Key string
	// Value is the member value in compact E3 form, numbers as written.
	Value json.RawMessage
}

// ExtensionsV1 is the ordered map of an EvidenceRefV1's retained unknown members (§7.1),
// re-emitted at top level after the known members. Every entry is checked when inserted.
type ExtensionsV1 struct {
	entries []Extension
}

// Len returns the number of entries.
func (x *ExtensionsV1) Len() int { return len(x.entries) }

// Entries returns the entries in order; callers must not modify the slice.
func (x *ExtensionsV1) Entries() []Extension { return x.entries }

// Get returns the value of key.
func (x *ExtensionsV1) Get(key string) (json.RawMessage, bool) {
	for _, e := range x.entries {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// Insert checks key and value with the §7.1 rules (except the reserved-name rule, which
// Validate of the owner applies) and sets the entry, replacing an existing key in place. value
// must be one strict JSON value.
func (x *ExtensionsV1) Insert(key string, value json.RawMessage) error {
	compact, err := wire.Compact(value, "extension")
	if err != nil {
		return err
	}
	if err := hive.ValidateID(key, "extension key"); err != nil {
		return err
	}
	for i := range x.entries {
		if x.entries[i].Key == key {
			if err := checkExtensionValue(compact); err != nil {
				return err
			}
			x.entries[i].Value = compact
			return nil
		}
	}
	if len(x.entries) >= MaxExtensionFields {
		return verr("extensions exceeds the 256 field limit")
	}
	if err := checkExtensionValue(compact); err != nil {
		return err
	}
	x.entries = append(x.entries, Extension{Key: key, Value: compact})
	return nil
}

// quoteKey renders "k" with `"` and `\` backslash-escaped (§7.1, project-defined).
func quoteKey(k string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k) + `"`
}

// checkExtensionValue applies the value rows of the §7.1 table to a compact value.
func checkExtensionValue(compact []byte) error {
	var d wire.Decoder
	d.Reset(compact, "extension")
	var inner error
	err := d.Document(func() error { return walkExtension(&d, compact, 0, &inner) })
	if inner != nil {
		return inner
	}
	return err
}

// countItems returns the number of members or elements of the container at the start of raw.
func countItems(raw []byte) int {
	var d wire.Decoder
	d.Reset(raw, "extension")
	n := 0
	if raw[0] == '{' {
		_ = d.Object(func([]byte) error { n++; return d.Skip() })
	} else {
		_ = d.Array(func(int) error { n++; return d.Skip() })
	}
	return n
}

// walkExtension checks one value at depth (the top value is 0). A rule failure is stored in
// *fail and stops the walk.
func walkExtension(d *wire.Decoder, all []byte, depth int, fail *error) error {
	stop := func(msg string) error {
		*fail = verr(msg)
		return *fail
	}
	start := d.Offset()
	switch d.Next() {
	case '{':
		if depth > MaxExtensionDepth {
			return stop("extension value exceeds nesting depth 8")
		}
		if countItems(all[start:]) > MaxExtensionItems {
			return stop("extension object exceeds field limit")
		}
		err := d.Object(func(name []byte) error {
			if err := hive.ValidateID(string(name), "extension object key"); err != nil {
				*fail = err
				return err
			}
			return walkExtension(d, all, depth+1, fail)
		})
		if err != nil {
			return err
		}
	case '[':
		if depth > MaxExtensionDepth {
			return stop("extension value exceeds nesting depth 8")
		}
		if countItems(all[start:]) > MaxExtensionItems {
			return stop("extension array exceeds item limit")
		}
		err := d.Array(func(i int) error {
			return walkExtension(d, all, depth+1, fail)
		})
		if err != nil {
			return err
		}
	case '"':
		b, err := d.StringBytes()
		if err != nil {
			return err
		}
		if len(b) > maxExtensionStringLen {
			return stop("extension string exceeds byte limit")
		}
		return nil
	default:
		return d.Skip()
	}
	if d.Offset()-start > MaxExtensionBytes {
		return stop("extension value exceeds serialized byte limit")
	}
	return nil
}

// EvidenceKind is the `kind` of an EvidenceRefV1 (PascalCase, no fallback).
type EvidenceKind string

// EvidenceKind values.
const (
	EvidenceKindProviderReceipt    EvidenceKind = "ProviderReceipt"
	EvidenceKindRuntimeLog         EvidenceKind = "RuntimeLog"
	EvidenceKindSignedBatch        EvidenceKind = "SignedBatch"
	EvidenceKindQualityMeasurement EvidenceKind = "QualityMeasurement"
	EvidenceKindExperimentOutcome  EvidenceKind = "ExperimentOutcome"
)

var evidenceKinds = []string{"ProviderReceipt", "RuntimeLog", "SignedBatch", "QualityMeasurement", "ExperimentOutcome"}

// MarshalJSON writes the value; an unknown value fails.
func (k EvidenceKind) MarshalJSON() ([]byte, error) {
	return enumMarshal(k, "EvidenceKind", evidenceKinds)
}

// UnmarshalJSON refuses any other string.
func (k *EvidenceKind) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "EvidenceKind", evidenceKinds, k)
}

// SignatureStatus is the `signature_status` of an EvidenceRefV1.
type SignatureStatus string

// SignatureStatus values.
const (
	SignatureStatusVerified   SignatureStatus = "Verified"
	SignatureStatusUnverified SignatureStatus = "Unverified"
	SignatureStatusNotSigned  SignatureStatus = "NotSigned"
)

var signatureStatuses = []string{"Verified", "Unverified", "NotSigned"}

// MarshalJSON writes the value; an unknown value fails.
func (s SignatureStatus) MarshalJSON() ([]byte, error) {
	return enumMarshal(s, "SignatureStatus", signatureStatuses)
}

// UnmarshalJSON refuses any other string.
func (s *SignatureStatus) UnmarshalJSON(data []byte) error {
	return enumUnmarshal(data, "SignatureStatus", signatureStatuses, s)
}

// EvidenceRefV1 points at a piece of evidence (hive.md §7.2); lenient, and unknown members are
// retained in Extensions and re-emitted.
type EvidenceRefV1 struct {
	// SchemaVersion is `schema_version` (optional, omitted when absent; checked by Validate).
	SchemaVersion *uint32
	// Kind is `kind`.
	Kind EvidenceKind
	// URI is `uri`.
	URI string
	// Digest is `digest`.
	Digest string
	// SignatureStatus is `signature_status`.
	SignatureStatus SignatureStatus
	// MediaType is `media_type` (optional, omitted when absent).
	MediaType *string
	// Extensions holds every other member.
	Extensions ExtensionsV1
}

var evidenceFields = []string{"schema_version", "kind", "uri", "digest", "signature_status", "media_type"}

// Validate is EvidenceRefV1.validate() (§7.2), in order.
func (r *EvidenceRefV1) Validate() error {
	for _, e := range r.Extensions.entries {
		for _, f := range evidenceFields {
			if e.Key == f {
				return verr("extension key " + quoteKey(e.Key) + " collides with a reserved field")
			}
		}
	}
	if r.SchemaVersion != nil && *r.SchemaVersion != V1SchemaVersion {
		return schemaVersionError(uint64(*r.SchemaVersion))
	}
	if err := ValidateBoundedString(r.URI, "evidence uri"); err != nil {
		return err
	}
	if err := ValidateBoundedString(r.Digest, "evidence digest"); err != nil {
		return err
	}
	if r.SchemaVersion != nil && !supportedDigest(r.Digest) {
		return verr("evidence digest must contain a supported 64-digit hexadecimal digest")
	}
	if r.MediaType != nil {
		return ValidateBoundedString(*r.MediaType, "evidence media_type")
	}
	return nil
}

func supportedDigest(s string) bool {
	if rest, ok := strings.CutPrefix(s, "sha256:"); ok {
		s = rest
	} else if rest, ok := strings.CutPrefix(s, "blake3:"); ok {
		s = rest
	}
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
			return false
		}
	}
	return true
}

func (r *EvidenceRefV1) decode(d *wire.Decoder) error {
	*r = EvidenceRefV1{}
	var seen uint64
	dup := func(name []byte) error {
		for _, f := range evidenceFields {
			if string(name) == f {
				return nil // a repeated known member: jsonvalue's duplicate fault
			}
		}
		return d.Wrap(verr("duplicate extension key " + quoteKey(string(name))))
	}
	err := d.ObjectDup(func(name []byte) error {
		switch string(name) {
		case "schema_version":
			if ok, err := d.Null(); err != nil || ok {
				return err
			}
			v, err := d.Uint(uint64(^uint32(0)))
			sv := uint32(v)
			r.SchemaVersion = &sv
			return err
		case "kind":
			seen |= 1 << 1
			k, err := decodeEnum[EvidenceKind](d, evidenceKinds)
			r.Kind = k
			return err
		case "uri":
			seen |= 1 << 2
			return decodeString(d, &r.URI)
		case "digest":
			seen |= 1 << 3
			return decodeString(d, &r.Digest)
		case "signature_status":
			seen |= 1 << 4
			s, err := decodeEnum[SignatureStatus](d, signatureStatuses)
			r.SignatureStatus = s
			return err
		case "media_type":
			return d.OptString(&r.MediaType)
		}
		key := string(name)
		if err := hive.ValidateID(key, "extension key"); err != nil {
			return d.Wrap(err)
		}
		if r.Extensions.Len() >= MaxExtensionFields {
			return d.Wrap(verr("extensions exceeds the 256 field limit"))
		}
		value, err := d.Capture()
		if err != nil {
			return err
		}
		if err := checkExtensionValue(value); err != nil {
			return d.Wrap(err)
		}
		r.Extensions.entries = append(r.Extensions.entries, Extension{Key: key, Value: value})
		return nil
	}, dup)
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<1|1<<2|1<<3|1<<4, evidenceFields)
}

func (r *EvidenceRefV1) appendJSON(e *wire.Encoder) {
	e.Open()
	if r.SchemaVersion != nil {
		e.Uint("schema_version", uint64(*r.SchemaVersion))
	}
	appendEnum(e, "kind", r.Kind, "EvidenceKind", evidenceKinds)
	e.Str("uri", r.URI)
	e.Str("digest", r.Digest)
	appendEnum(e, "signature_status", r.SignatureStatus, "SignatureStatus", signatureStatuses)
	e.OptStr("media_type", r.MediaType)
	for _, x := range r.Extensions.entries {
		e.Raw(x.Key, x.Value)
	}
	e.Close()
}

// MarshalJSON writes the known members in order, then the extensions.
func (r EvidenceRefV1) MarshalJSON() ([]byte, error) { return wire.MarshalObject(192, r.appendJSON) }

// UnmarshalJSON decodes leniently, retaining unknown members.
func (r *EvidenceRefV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "EvidenceRefV1", r.decode)
}

func decodeEvidenceList(d *wire.Decoder, dst *[]EvidenceRefV1) error {
	*dst = []EvidenceRefV1{}
	return d.Array(func(i int) error {
		*dst = append(*dst, EvidenceRefV1{})
		return (*dst)[i].decode(d)
	})
}

func appendEvidenceList(e *wire.Encoder, name string, list []EvidenceRefV1) {
	e.Key(name)
	e.B = append(e.B, '[')
	for i := range list {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		list[i].appendJSON(e)
	}
	e.B = append(e.B, ']')
}
