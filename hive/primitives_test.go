package hive

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// errText returns err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestValidationErrorEqualityComparesMessages(t *testing.T) {
	a, b := NewValidationError("x must not be empty"), NewValidationError("x must not be empty")
	if !errors.Is(a, b) {
		t.Fatal("errors.Is must compare messages")
	}
	if errors.Is(a, NewValidationError("other")) {
		t.Fatal("different messages must differ")
	}
	var ve *ValidationError
	if !errors.As(ValidateID("", "gid"), &ve) || ve.Message != "gid must not be empty" {
		t.Fatalf("ValidateID must return *ValidationError, got %#v", ve)
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"empty", "", "id must not be empty"},
		{"blank ASCII", " \t\r\n\v\f", "id must not be empty"},
		{"blank Unicode (NBSP, ideographic space, NEL)", "\u00a0\u3000\u0085", "id must not be empty"},
		{"256 bytes", strings.Repeat("a", 256), ""},
		{"257 bytes", strings.Repeat("a", 257), "id exceeds the 256 byte limit"},
		{"128 x é is 256 bytes", strings.Repeat("é", 128), ""},
		{"over 256 bytes beats control", "\x07" + strings.Repeat("a", 300), "id exceeds the 256 byte limit"},
		{"invalid UTF-8", "a\xffb", "id must be valid UTF-8"},
		{"invalid UTF-8 before a control", "\x01\xff", "id must be valid UTF-8"},
		{"NUL", "a\x00b", "id must not contain control characters"},
		{"BEL", "a\x07b", "id must not contain control characters"},
		{"LF inside", "a\nb", "id must not contain control characters"},
		{"DEL", "a\x7fb", "id must not contain control characters"},
		{"C1 NEL inside", "a\u0085b", "id must not contain control characters"},
		{"C1 U+009F", "a\u009fb", "id must not contain control characters"},
		{"inner spaces and punctuation", "a b, c & d", ""},
		{"surrounding spaces kept", " a ", ""},
		{"printable Unicode", "ünïcødé 😀", ""},
		{"format character is not Cc", "a\u200bb", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errText(ValidateID(tc.value, "id")); got != tc.want {
				t.Fatalf("ValidateID(%q) = %q, want %q", tc.value, got, tc.want)
			}
		})
	}
}

func TestValidateText(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		max      int
		required bool
		want     string
	}{
		{"required empty", "", 10, true, "f must not be empty"},
		{"required blank", " \n ", 10, true, "f must not be empty"},
		{"optional empty", "", 10, false, ""},
		{"optional blank", "   ", 10, false, ""},
		{"counts characters not bytes", strings.Repeat("é", 10), 10, true, ""},
		{"over the limit", strings.Repeat("é", 11), 10, true, "f exceeds the 10 character limit"},
		{"astral characters count once", strings.Repeat("😀", 10), 10, true, ""},
		{"LF CR TAB allowed", "a\r\nb\tc", 10, true, ""},
		{"NUL", "a\x00", 10, true, "f must not contain control characters"},
		{"DEL", "a\x7f", 10, true, "f must not contain control characters"},
		{"C1", "é\u0085", 10, true, "f must not contain control characters"},
		{"limit before control", strings.Repeat("\x07", 11), 10, true, "f exceeds the 10 character limit"},
		{"invalid UTF-8", "a\xff", 10, true, "f must be valid UTF-8"},
		{"invalid UTF-8 before the limit", strings.Repeat("a", 20) + "\xff", 10, true, "f must be valid UTF-8"},
		{"4000 x é", strings.Repeat("é", 4000), 4000, true, ""},
		{"4001 x a", strings.Repeat("a", 4001), 4000, true, "f exceeds the 4000 character limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := errText(ValidateText(tc.text, tc.max, "f", tc.required)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRequireSchema(t *testing.T) {
	if err := RequireSchema(MessageListSchema, MessageListSchema); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"leanctx.hive.message-list/v2", "leanctx.hive.message-list/v1 ", "LEANCTX.hive.message-list/v1", ""} {
		if got := errText(RequireSchema(bad, MessageListSchema)); got != "schema must be leanctx.hive.message-list/v1" {
			t.Fatalf("%q: %q", bad, got)
		}
	}
}

func TestUtcTimestamp(t *testing.T) {
	const syntax = "UtcTimestamp must use canonical YYYY-MM-DDTHH:MM:SSZ syntax"
	const calendar = "UtcTimestamp contains an invalid calendar or clock value"
	tests := []struct{ in, want string }{
		{"2026-10-21T12:00:00Z", ""},
		{"0001-01-01T00:00:00Z", ""},
		{"9999-12-31T23:59:59Z", ""},
		{"2028-02-29T23:59:59Z", ""},
		{"2000-02-29T00:00:00Z", ""}, // divisible by 400
		{"2026-02-29T12:00:00Z", calendar},
		{"1900-02-29T00:00:00Z", calendar}, // divisible by 100, not 400
		{"2026-04-31T00:00:00Z", calendar},
		{"2026-00-01T00:00:00Z", calendar},
		{"2026-13-01T00:00:00Z", calendar},
		{"2026-10-00T00:00:00Z", calendar},
		{"0000-01-01T00:00:00Z", calendar},
		{"2026-10-21T24:00:00Z", calendar},
		{"2026-10-21T23:60:00Z", calendar},
		{"2026-10-21T12:00:60Z", calendar},
		{"2026-10-21T12:00:00z", syntax},
		{"2026-10-21t12:00:00Z", syntax},
		{"2026-10-21 12:00:00Z", syntax},
		{"2026-10-21T12:00:00.000Z", syntax},
		{"2026-10-21T12:00:00+00:00", syntax},
		{"2026-10-21T12:00:00", syntax},
		{"２026-10-21T12:00:00Z", syntax},
		{"2026-1a-21T12:00:00Z", syntax},
		{"", syntax},
		{"2026-13-21T12:00:00z", syntax}, // syntax before calendar
	}
	for _, tc := range tests {
		ts, err := NewUtcTimestamp(tc.in)
		if got := errText(err); got != tc.want {
			t.Errorf("NewUtcTimestamp(%q) = %q, want %q", tc.in, got, tc.want)
			continue
		}
		if err != nil {
			continue
		}
		if ts.String() != tc.in {
			t.Errorf("String() = %q", ts.String())
		}
		tm, err := ParseTime(ts)
		if err != nil || tm.Format("2006-01-02T15:04:05Z") != tc.in || tm.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v", tc.in, tm, err)
		}
		if b, err := ts.MarshalJSON(); err != nil || string(b) != `"`+tc.in+`"` {
			t.Errorf("MarshalJSON = %s, %v", b, err)
		}
	}
	var zero UtcTimestamp
	if _, err := zero.MarshalJSON(); errText(err) != syntax {
		t.Fatalf("zero value encodes: %v", err)
	}
	if _, err := ParseTime(zero); errText(err) != syntax {
		t.Fatalf("ParseTime(zero) = %v", err)
	}
	var ts UtcTimestamp
	if err := ts.UnmarshalJSON([]byte(`12`)); err == nil {
		t.Fatal("a non-string must be a decode error")
	}
	var de *DecodeError
	if err := ts.UnmarshalJSON([]byte(`"2026-02-29T00:00:00Z"`)); !errors.As(err, &de) || err.Error() != calendar {
		t.Fatalf("decode wraps the calendar message: %v", err)
	}
	a, b := MustUtcTimestamp("2026-10-20T12:00:00Z"), MustUtcTimestamp("2026-10-21T00:00:00Z")
	if a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 {
		t.Fatal("byte order is chronological order")
	}
	if got := UtcTimestampOf(time.Date(2026, 10, 21, 14, 0, 0, 999, time.FixedZone("x", 2*3600))); got.String() != "2026-10-21T12:00:00Z" {
		t.Fatalf("UtcTimestampOf = %s", got)
	}
}

func TestChannel(t *testing.T) {
	const vault = "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42"
	shape := "channel must be org:<org>/vault:<vault_id>/<name>"
	org := "channel org must be 1-64 of a-z, 0-9, _ and -, starting with a letter or digit"
	vm := "channel vault_id must be 32 lowercase hex"
	name := "channel name must be 1-64 of a-z, 0-9, ., _ and -, starting with a letter or digit"
	tests := []struct{ in, want string }{
		{"org:org_acme/vault:" + vault + "/general", ""},
		{"org:o/vault:" + vault + "/g", ""},
		{"org:" + strings.Repeat("a", 64) + "/vault:" + vault + "/" + strings.Repeat("b", 64), ""},
		{"org:9-_/vault:" + vault + "/0._-", ""},
		{"", "channel must not be empty"},
		{"org:o/vault:" + vault + "/g\x07", "channel must not contain control characters"},
		{"org:org_acme/general", shape},
		{"Org:o/vault:" + vault + "/g", shape},
		{"org:o/vault:" + vault, shape},
		{"org:o/vault:" + vault + "/g/h", shape},
		{"org:o/" + vault + "/g", shape},
		{"org:/vault:" + vault + "/g", org},
		{"org:_o/vault:" + vault + "/g", org},
		{"org:" + strings.Repeat("a", 65) + "/vault:" + vault + "/g", org},
		{"org:Acme/vault:" + vault + "/general", org},
		{"org:o/vault:" + strings.ToUpper(vault) + "/g", vm},
		{"org:o/vault:" + vault[:31] + "/g", vm},
		{"org:o/vault:3f6c1e9a-0b7d-4c2e-8f5a-1b6c9d0e7f42/g", vm},
		{"org:o/vault:" + vault + "/", name},
		{"org:o/vault:" + vault + "/General", name},
		{"org:o/vault:" + vault + "/.g", name},
		{"org:o/vault:" + vault + "/" + strings.Repeat("g", 65), name},
		{"org:O/vault:" + strings.ToUpper(vault) + "/G", org}, // org before vault before name
	}
	for _, tc := range tests {
		if got := errText(ValidateChannel(tc.in)); got != tc.want {
			t.Errorf("ValidateChannel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	o, v, n, err := ParseChannel("org:org_acme/vault:" + vault + "/general")
	if err != nil || o != "org_acme" || v != vault || n != "general" {
		t.Fatalf("ParseChannel = %q %q %q %v", o, v, n, err)
	}
}

func TestBase64(t *testing.T) {
	lenTests := []struct {
		value string
		n     int
		want  string
	}{
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", 24, ""},
		{"", 24, "nonce must not be empty"},
		{"AAECAwQFBgcICQoL", 24, "nonce must decode to 24 bytes"},
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX\n", 24, "nonce must be standard padded base64"},
		{"AAECAwQFBgcI\r\nCQoLDA0ODxAREhMUFRYX", 24, "nonce must be standard padded base64"},
		{"-_--AAECAwQFBgcICQoLDA0ODxAREhMU", 24, "nonce must be standard padded base64"},
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRY", 24, "nonce must be standard padded base64"},
		{"AB==", 1, "nonce must be standard padded base64"}, // non-zero pad bits
		{"AAF=", 2, "nonce must be standard padded base64"},
		{"AA==", 1, ""},
		{"AAE=", 2, ""},
	}
	for _, tc := range lenTests {
		if got := errText(ValidateB64Len(tc.value, tc.n, "nonce")); got != tc.want {
			t.Errorf("ValidateB64Len(%q) = %q, want %q", tc.value, got, tc.want)
		}
	}
	boundTests := []struct {
		value string
		max   int
		want  string
	}{
		{"AAAA", 3, ""},
		{"", 3, "c must not be empty"},
		{"AAAAAAAA", 3, "c exceeds the 3 byte limit"}, // too long before decoding
		{"AAA", 3, "c must be standard padded base64"},
		{"AAAAAA==", 4, ""},
		{"AAAAAAA=", 4, "c exceeds the 4 byte limit"}, // decoded length
		{"!!!!!!!!!!!!", 3, "c exceeds the 3 byte limit"},
	}
	for _, tc := range boundTests {
		if got := errText(ValidateB64Bounded(tc.value, tc.max, "c")); got != tc.want {
			t.Errorf("ValidateB64Bounded(%q, %d) = %q, want %q", tc.value, tc.max, got, tc.want)
		}
	}
}

// TestStrictBase64MatchesStdlib checks strictBase64Len against base64.StdEncoding.Strict(),
// which additionally skips CR and LF (refused here).
func TestStrictBase64MatchesStdlib(t *testing.T) {
	alphabet := "AB+/=\n"
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		n, ok := strictBase64Len(prefix)
		dec, err := base64.StdEncoding.Strict().DecodeString(prefix)
		stdOK := err == nil && prefix != "" && !strings.ContainsAny(prefix, "\r\n")
		if ok != stdOK || (ok && n != len(dec)) {
			t.Fatalf("%q: strict=%v,%d std=%v,%d", prefix, ok, n, stdOK, len(dec))
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+string(c), depth-1)
		}
	}
	walk("", 6)
}

func TestSealedAAD(t *testing.T) {
	got := string(SealedAAD("3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42", 3, SealedMessageSchema))
	if got != "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42|0|3|leanctx.hive.sealed-message/v1" {
		t.Fatal(got)
	}
	if got := string(SealedAAD("v", 18446744073709551615, "s")); got != "v|0|18446744073709551615|s" {
		t.Fatal(got)
	}
}
