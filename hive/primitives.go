package hive

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentwire/agentwire/hive/wire"
)

// ValidationError is a validation failure (hive.md §1.1): one plain message, no code, no path.
// Error returns the message; errors.Is compares messages.
type ValidationError = wire.ValidationError

// DecodeError is a decoding failure (hive.md §0.1, §0.2): the document was refused before
// Validate could run. A value check run during decoding (UtcTimestamp) is wrapped, and Error
// returns its message unchanged; Field is the offending member's dotted path (hive.md §5.4).
type DecodeError = wire.DecodeError

// NewValidationError returns a *ValidationError with message msg.
func NewValidationError(msg string) *ValidationError { return wire.NewValidationError(msg) }

func verr(msg string) error { return wire.NewValidationError(msg) }

// MaxIdentifierLength is MAX_IDENTIFIER_LENGTH: the byte limit of validate_id (hive.md §1.2).
const MaxIdentifierLength = 256

// ValidateID is validate_id(value, name) (hive.md §1.2): an opaque identifier must not be blank
// (`<name> must not be empty`), must be at most 256 bytes (`<name> exceeds the 256 byte limit`),
// valid UTF-8 (`<name> must be valid UTF-8`) and free of Cc control characters (`<name> must not
// contain control characters`), checked in that order. The value is never altered.
func ValidateID(value, name string) error {
	if isBlank(value) {
		return verr(name + " must not be empty")
	}
	if len(value) > MaxIdentifierLength {
		return verr(name + " exceeds the 256 byte limit")
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < 0x20 || c == 0x7f {
			// Valid UTF-8 is checked first: scan the rest for invalid sequences.
			if !utf8.ValidString(value) {
				return verr(name + " must be valid UTF-8")
			}
			return verr(name + " must not contain control characters")
		}
		if c >= utf8.RuneSelf {
			return validateIDSlow(value, name)
		}
	}
	return nil
}

func validateIDSlow(value, name string) error {
	if !utf8.ValidString(value) {
		return verr(name + " must be valid UTF-8")
	}
	for _, r := range value {
		if unicode.IsControl(r) {
			return verr(name + " must not contain control characters")
		}
	}
	return nil
}

// isBlank reports strings.TrimSpace(s) == "" without allocating.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			continue
		}
		if s[i] < utf8.RuneSelf {
			return false
		}
		return strings.TrimSpace(s[i:]) == ""
	}
	return true
}

// ValidateText is validate_text(text, max_chars, field, required) (hive.md §1.3): when required,
// blank text fails (`<field> must not be empty`); then invalid UTF-8 (`<field> must be valid
// UTF-8`), more than maxChars Unicode scalar values (`<field> exceeds the <max_chars> character
// limit`) and a Cc control character other than LF, CR and TAB (`<field> must not contain
// control characters`).
func ValidateText(text string, maxChars int, field string, required bool) error {
	if required && isBlank(text) {
		return verr(field + " must not be empty")
	}
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii && !utf8.ValidString(text) {
		return verr(field + " must be valid UTF-8")
	}
	count := len(text)
	if !ascii {
		count = utf8.RuneCountInString(text)
	}
	if count > maxChars {
		return verr(field + " exceeds the " + strconv.Itoa(maxChars) + " character limit")
	}
	if ascii {
		for i := 0; i < len(text); i++ {
			c := text[i]
			if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f {
				return verr(field + " must not contain control characters")
			}
		}
		return nil
	}
	for _, r := range text {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return verr(field + " must not contain control characters")
		}
	}
	return nil
}

// RequireSchema is require_schema(actual, expected) (hive.md §1.4): exact byte equality, else
// `schema must be <expected>`.
func RequireSchema(actual, expected string) error {
	if actual != expected {
		return verr("schema must be " + expected)
	}
	return nil
}

// The two UtcTimestamp messages (hive.md §1.5).
const (
	msgTimestampSyntax   = "UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax"
	msgTimestampCalendar = "UtcTimestamp contains an invalid calendar or clock value"
)

// UtcTimestamp is a UTC instant written exactly as the 20 bytes `YYYY-MM-DDTHH:MM:SSZ` (hive.md
// §1.5). It is checked when decoded and by NewUtcTimestamp; the zero value is invalid and
// refuses to encode. Byte order equals chronological order, so values compare as strings.
type UtcTimestamp struct{ s string }

// NewUtcTimestamp checks s with the syntax rule, then the calendar rule, of hive.md §1.5.
func NewUtcTimestamp(s string) (UtcTimestamp, error) {
	if err := checkTimestamp(s); err != nil {
		return UtcTimestamp{}, err
	}
	return UtcTimestamp{s: s}, nil
}

// MustUtcTimestamp is NewUtcTimestamp for constants; it panics on an invalid value.
func MustUtcTimestamp(s string) UtcTimestamp {
	t, err := NewUtcTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

// UtcTimestampOf formats t (converted to UTC, truncated to the second) as a UtcTimestamp. It
// panics for years outside 0001–9999, which the wire form cannot hold.
func UtcTimestampOf(t time.Time) UtcTimestamp {
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		panic("hive: UtcTimestampOf: year out of range")
	}
	return UtcTimestamp{s: t.Format("2006-01-02T15:04:05Z")}
}

// String returns the 20-byte wire form ("" for the zero value).
func (t UtcTimestamp) String() string { return t.s }

// IsZero reports whether t is the (invalid) zero value.
func (t UtcTimestamp) IsZero() bool { return t.s == "" }

// Compare orders two timestamps chronologically (-1, 0, +1).
func (t UtcTimestamp) Compare(u UtcTimestamp) int { return strings.Compare(t.s, u.s) }

// MarshalJSON writes the wire string; the zero or a hand-built invalid value fails with the
// §1.5 message.
func (t UtcTimestamp) MarshalJSON() ([]byte, error) {
	if err := checkTimestamp(t.s); err != nil {
		return nil, err
	}
	return wire.AppendString(nil, t.s), nil
}

// UnmarshalJSON reads a strict JSON string and checks it (a non-string is a decode error).
func (t *UtcTimestamp) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "UtcTimestamp", t.decode)
}

func (t *UtcTimestamp) decode(d *wire.Decoder) error {
	b, err := d.StringBytes()
	if err != nil {
		return err
	}
	if err := checkTimestampBytes(b); err != nil {
		return d.Wrap(err)
	}
	t.s = string(b)
	return nil
}

func (t UtcTimestamp) append(e *wire.Encoder, name string) {
	if err := checkTimestamp(t.s); err != nil {
		e.SetErr(err)
		return
	}
	e.Key(name)
	e.B = append(e.B, '"')
	e.B = append(e.B, t.s...)
	e.B = append(e.B, '"')
}

func appendOptTimestamp(e *wire.Encoder, name string, t *UtcTimestamp) {
	if t != nil {
		t.append(e, name)
	}
}

func decodeOptTimestamp(d *wire.Decoder, dst **UtcTimestamp) error {
	if ok, err := d.Null(); err != nil || ok {
		*dst = nil
		return err
	}
	var t UtcTimestamp
	if err := t.decode(d); err != nil {
		return err
	}
	*dst = &t
	return nil
}

func checkTimestamp(s string) error {
	if len(s) != 20 {
		return verr(msgTimestampSyntax)
	}
	var b [20]byte
	copy(b[:], s)
	return checkTimestampBytes(b[:])
}

func checkTimestampBytes(b []byte) error {
	if len(b) != 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != 'Z' {
		return verr(msgTimestampSyntax)
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if b[i] < '0' || b[i] > '9' {
			return verr(msgTimestampSyntax)
		}
	}
	year, month, day, hour, minute, second := timestampFields(b)
	if year == 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59 {
		return verr(msgTimestampCalendar)
	}
	return nil
}

func timestampFields(b []byte) (year, month, day, hour, minute, second int) {
	n := func(i, w int) int {
		v := 0
		for _, c := range b[i : i+w] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	return n(0, 4), n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2)
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%400 == 0 || (year%4 == 0 && year%100 != 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// ParseTime is parse_time(ts) (hive.md §1.5): the instant as a UTC time.Time. Both §1.5 rules
// are re-checked, so the zero value or a hand-built invalid one fails with their messages.
func ParseTime(ts UtcTimestamp) (time.Time, error) {
	if err := checkTimestamp(ts.s); err != nil {
		return time.Time{}, err
	}
	y, mo, d, h, mi, s := timestampFields([]byte(ts.s))
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC), nil
}

// Channel messages (hive.md §1.6).
const (
	msgChannelShape = "channel must be org:<org>/vault:<vault_id>/<name>"
	msgChannelOrg   = "channel org must be 1-64 of a-z, 0-9, _ and -, starting with a letter or digit"
	msgChannelVault = "channel vault_id must be 32 lowercase hex"
	msgChannelName  = "channel name must be 1-64 of a-z, 0-9, ., _ and -, starting with a letter or digit"
)

// ValidateChannel is validate_channel(channel) (hive.md §1.6): `org:<org>/vault:<vault_id>/<name>`
// with the §1.6 grammar, checked in the §1.6 order.
func ValidateChannel(channel string) error {
	_, _, _, err := ParseChannel(channel)
	return err
}

// ParseChannel applies the checks of ValidateChannel and returns the three parts.
func ParseChannel(s string) (org, vaultID, name string, err error) {
	if err := ValidateID(s, "channel"); err != nil {
		return "", "", "", err
	}
	rest, ok := strings.CutPrefix(s, "org:")
	if !ok {
		return "", "", "", verr(msgChannelShape)
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", "", "", verr(msgChannelShape)
	}
	org = rest[:i]
	rest = rest[i+1:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return "", "", "", verr(msgChannelShape)
	}
	vault := rest[:j]
	name = rest[j+1:]
	if strings.IndexByte(name, '/') >= 0 {
		return "", "", "", verr(msgChannelShape)
	}
	vaultID, ok = strings.CutPrefix(vault, "vault:")
	if !ok {
		return "", "", "", verr(msgChannelShape)
	}
	if !channelPart(org, false) {
		return "", "", "", verr(msgChannelOrg)
	}
	if len(vaultID) != 32 || !isLowerHex(vaultID) {
		return "", "", "", verr(msgChannelVault)
	}
	if !channelPart(name, true) {
		return "", "", "", verr(msgChannelName)
	}
	return org, vaultID, name, nil
}

func channelPart(s string, dot bool) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if i == 0 && !alnum {
			return false
		}
		if !alnum && c != '_' && c != '-' && !(dot && c == '.') {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
			return false
		}
	}
	return true
}

// ValidateB64Len is validate_b64_len(value, n, field) (hive.md §1.8): non-empty (`<field> must
// not be empty`), strict standard padded base64 (`<field> must be standard padded base64`),
// decoding to exactly n bytes (`<field> must decode to <n> bytes`).
func ValidateB64Len(value string, n int, field string) error {
	if value == "" {
		return verr(field + " must not be empty")
	}
	got, ok := strictBase64Len(value)
	if !ok {
		return verr(field + " must be standard padded base64")
	}
	if got != n {
		return verr(field + " must decode to " + strconv.Itoa(n) + " bytes")
	}
	return nil
}

// ValidateB64Bounded is validate_b64_bounded(value, max, field) (hive.md §1.8): non-empty, at
// most 4*ceil(max/3) characters before decoding, strict standard padded base64, at most max
// bytes decoded (`<field> exceeds the <max> byte limit`).
func ValidateB64Bounded(value string, max int, field string) error {
	_, err := b64Bounded(value, max, field)
	return err
}

func b64Bounded(value string, max int, field string) (int, error) {
	if value == "" {
		return 0, verr(field + " must not be empty")
	}
	if len(value) > 4*((max+2)/3) {
		return 0, verr(field + " exceeds the " + strconv.Itoa(max) + " byte limit")
	}
	n, ok := strictBase64Len(value)
	if !ok {
		return 0, verr(field + " must be standard padded base64")
	}
	if n > max {
		return 0, verr(field + " exceeds the " + strconv.Itoa(max) + " byte limit")
	}
	return n, nil
}

// strictBase64Len checks s as RFC 4648 §4 base64 with padding and zero pad bits (what
// base64.StdEncoding.Strict() accepts, minus its tolerance of CR and LF) and returns the decoded
// length, without decoding.
func strictBase64Len(s string) (int, bool) {
	if len(s) == 0 || len(s)%4 != 0 {
		return 0, false
	}
	pad := 0
	if s[len(s)-1] == '=' {
		pad = 1
		if s[len(s)-2] == '=' {
			pad = 2
		}
	}
	body := s[:len(s)-pad]
	for i := 0; i < len(body); i++ {
		if b64Value(body[i]) < 0 {
			return 0, false
		}
	}
	// Pad bits of the last character must be zero.
	switch pad {
	case 1:
		if b64Value(body[len(body)-1])&0x3 != 0 {
			return 0, false
		}
	case 2:
		if b64Value(body[len(body)-1])&0xF != 0 {
			return 0, false
		}
	}
	return len(s)/4*3 - pad, true
}

func b64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}
