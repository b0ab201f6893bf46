package hive_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/agentwire/agentwire/internal/schematest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/hive/registry"
	"github.com/agentwire/agentwire/jsonvalue"
)

// hiveCorpusDir is the hive conformance corpus (conformance/hive/README.md).
const hiveCorpusDir = "../conformance/hive"

// hiveModelURL is where the tests register the model with the schema compiler.
const hiveModelURL = "https://agentwire.dev/schemas/hive.model.json"

// hiveNotExpressible lists the corpus documents the validators refuse and the schema accepts,
// each with the class of rule it cannot express; TestWireSchemaCorpus checks that the list is
// exact (every entry is such a case, and every such case is listed).
var hiveNotExpressible = map[string]string{
	// Cross-member rules of Validate (the model keeps only the network split; the other
	// combinations would multiply the variants of every message type).
	"9.4 answer without reply_to":           crossMember + ": an answer needs reply_to",
	"9.78 answer without body":              crossMember + ": an answer needs reply_to",
	"message frame answer without reply_to": crossMember + ": an answer needs reply_to",
	"9.6 answer with deadline":              crossMember + ": only questions carry a deadline",
	"9.7 offer with deadline":               crossMember + ": only questions carry a deadline",
	"deadline on a finding":                 crossMember + ": only questions carry a deadline",
	"deadline on a handoff":                 crossMember + ": only questions carry a deadline",
	"9.17 to_instance without to":           crossMember + ": to_instance needs to",
	"9.36a body and sealed":                 crossMember + ": exactly one of body and sealed (either may be null)",
	"9.36b neither body nor sealed":         crossMember + ": exactly one of body and sealed (either may be null)",
	"body and sealed null":                  crossMember + ": exactly one of body and sealed (either may be null)",
	"9.53a delivery with body and sealed":   crossMember + ": exactly one of body and sealed (either may be null)",
	"9.53b delivery with neither":           crossMember + ": exactly one of body and sealed (either may be null)",
	"publish private without to":            crossMember + ": a private publish names to",
	"hello duplicate agent_id":              crossMember + ": distinct agent_id across agents",
	"hello bad cursor channel":              outsideSubset + ": cursor keys are channels (propertyNames)",
	"publish body over 65536 bytes":         byteLimit + ": the compact body is at most 65536 bytes",
	"reference number float":                intSpelling,
	"reference number exponent":             intSpelling,
	"seq u64 max plus one":                  u64Bound,
}

// The classes of rules the schema cannot express.
const (
	crossMember   = "cross-member rule"
	intSpelling   = "integer spelling (D6): JSON Schema's integer is a value, so 1.0 and 1e2 pass"
	u64Bound      = "u64 upper bound: not emitted, IEEE doubles cannot spell 18446744073709551615"
	byteLimit     = "byte-length limit"
	outsideSubset = "keyword outside the TypeScript renderer's subset"
)

// hiveCase is one document case of the corpus.
type hiveCase struct {
	name, typ, side string
	doc             []byte
	expect          *jsonvalue.Object
}

// loadHiveDocumentCases returns the document cases of every corpus file.
func loadHiveDocumentCases(t testing.TB) []hiveCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(hiveCorpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus under %s: %v", hiveCorpusDir, err)
	}
	var out []hiveCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := jsonvalue.ParseObject(raw, f)
		if err != nil {
			t.Fatal(err)
		}
		cases, _ := root.Get("cases")
		for _, cv := range cases.([]any) {
			c := cv.(*jsonvalue.Object)
			typ := member[string](c, "type")
			if typ == "" {
				continue // a function case
			}
			hc := hiveCase{name: member[string](c, "name"), typ: typ, side: member[string](c, "side"),
				expect: member[*jsonvalue.Object](c, "expect")}
			if d, ok := c.Get("document"); ok {
				hc.doc = []byte(d.(string))
			} else if h, ok := c.Get("document_hex"); ok {
				if hc.doc, err = hex.DecodeString(h.(string)); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, hc)
		}
	}
	return out
}

func member[T any](o *jsonvalue.Object, name string) T {
	v, _ := o.Get(name)
	x, _ := v.(T)
	return x
}

var (
	compileDefs   = schematest.CompileDefs
	schemaVerdict = schematest.Verdict
)

// hiveDef returns the definition a corpus case is checked against: $defs/<Go type> for a hive
// TYPE, the side's frame union for a bus frame decoded as one side, and "" for a leanctx TYPE.
func hiveDef(t testing.TB, c hiveCase) string {
	t.Helper()
	switch {
	case c.typ == "bus-frame" && c.side == "service":
		return "BusFrameToService"
	case c.typ == "bus-frame" && c.side == "client":
		return "BusFrameToClient"
	}
	typ, ok := registry.Lookup(c.typ)
	if !ok {
		t.Fatalf("%s: unknown TYPE %q", c.name, c.typ)
	}
	name, ok := strings.CutPrefix(typ.GoName, "hive.")
	if !ok {
		return ""
	}
	return name
}

// hiveAccepts runs the validators on a case: registry.Check, or for a bus frame with a side
// DecodeBusFrame then ValidateFrame. An ignored frame counts as not accepted: it is not a frame
// the client processes.
func hiveAccepts(c hiveCase) (bool, error) {
	if c.typ == "bus-frame" && c.side != "" {
		side := hive.AtService
		if c.side == "client" {
			side = hive.AtClient
		}
		f, err := hive.DecodeBusFrame(c.doc, side)
		if err != nil {
			return false, err
		}
		if f == nil {
			return false, errors.New("ignored")
		}
		err = hive.ValidateFrame(f)
		return err == nil, err
	}
	typ, _ := registry.Lookup(c.typ)
	_, err := typ.Check(c.doc)
	return err == nil, err
}

// TestWireSchemaCorpus replays the hive document cases of the corpus against the model: every
// document the validators accept is valid under the schema; every refused document that
// parses as strict JSON is refused by it, except the listed ones.
func TestWireSchemaCorpus(t *testing.T) {
	def := compileDefs(t, hiveModelURL, hive.WireSchema())
	corpus := schematest.Corpus{T: t, Who: "validators", ListName: "hiveNotExpressible", NotExpressible: hiveNotExpressible}
	for _, c := range loadHiveDocumentCases(t) {
		d := hiveDef(t, c)
		if d == "" {
			continue // a leanctx contract: leanctx/schema_model_test.go
		}
		valid, verr := hiveAccepts(c)
		if corpusValid := member[bool](c.expect, "valid"); corpusValid != valid {
			t.Fatalf("%s: the corpus says valid=%v, the validators %v", c.name, corpusValid, verr)
		}
		corpus.Check(c.name, d, def(d), c.doc, valid, verr)
	}
	corpus.Finish(100, 150)
}

// modelPattern returns the `pattern` at a JSON Pointer of the model (tokens, no escaping).
func modelPattern(t testing.TB, tokens ...string) *regexp.Regexp {
	t.Helper()
	var cur any = hive.WireSchema()
	for _, tok := range append(tokens, "pattern") {
		o, ok := cur.(*jsonvalue.Object)
		if !ok {
			t.Fatalf("no object at %q", tokens)
		}
		if cur, ok = o.Get(tok); !ok {
			t.Fatalf("no %q at %q", tok, tokens)
		}
	}
	return regexp.MustCompile(cur.(string))
}

// stringRules are the model's string rules, each next to the validator it expresses. exact is
// false where the schema is looser by design (validate_id's byte bound as characters).
type stringRule struct {
	name   string
	schema func(s string) bool
	valid  func(s string) bool
	exact  func(s string) bool // when the two must agree; nil: always
}

func stringRules(t testing.TB) []stringRule {
	id := regexp.MustCompile(hive.IdentifierPattern)
	ts := regexp.MustCompile(hive.UtcTimestampPattern)
	channel := modelPattern(t, "$defs", "Channel")
	text := modelPattern(t, "$defs", "MessageBodyV1", "properties", "text")
	nonce := modelPattern(t, "$defs", "SealedBlobV1", "properties", "nonce")
	cipher := modelPattern(t, "$defs", "SealedBlobV1", "properties", "ciphertext")
	commit := modelPattern(t, "$defs", "ReferenceCommit", "properties", "id")
	chars := func(s string) int { return len([]rune(s)) }
	return []stringRule{
		{"validate_id", func(s string) bool { return id.MatchString(s) && chars(s) <= 256 },
			func(s string) bool { return hive.ValidateID(s, "x") == nil }, func(s string) bool { return len(s) <= 256 }},
		{"UtcTimestamp", ts.MatchString, func(s string) bool { _, err := hive.NewUtcTimestamp(s); return err == nil }, nil},
		{"validate_channel", channel.MatchString, func(s string) bool { return hive.ValidateChannel(s) == nil }, nil},
		{"validate_text", func(s string) bool { return text.MatchString(s) && chars(s) <= hive.MaxMessageTextChars },
			func(s string) bool { return hive.ValidateText(s, hive.MaxMessageTextChars, "text", true) == nil }, nil},
		{"nonce", nonce.MatchString, func(s string) bool { return hive.ValidateB64Len(s, 24, "nonce") == nil }, nil},
		{"ciphertext", func(s string) bool { return cipher.MatchString(s) && len(s) >= 24 && len(s) <= 1398104 },
			func(s string) bool {
				b := hive.SealedBlobV1{ContentSchema: hive.SealedMessageSchema, Epoch: 1,
					Nonce: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", Ciphertext: s}
				return b.Validate() == nil
			}, nil},
		{"commit", commit.MatchString, func(s string) bool { return hive.ReferenceCommit{ID: s}.Validate() == nil }, nil},
	}
}

// patternSamples are strings at the edges of the rules.
var patternSamples = []string{
	"", " ", "a", "\u00a0", "a\u00a0", "\u2028", "x\u2028y", "\t", "a\tb", "\n\r\t", "a\u0007", "a\u007f",
	"a\u0085b", "\u0085", "\u3000x", "\u1680", "\u200b", "\ufeff", "é", "😀", "a😀", "\v", "x\vy",
	strings.Repeat("a", 256), strings.Repeat("a", 257), strings.Repeat("é", 128), strings.Repeat("é", 129),
	strings.Repeat("é", 4000), strings.Repeat("a", 4001), strings.Repeat(" ", 4001),
	"2026-10-21T12:00:00Z", "2026-02-29T12:00:00Z", "2028-02-29T23:59:59Z", "2000-02-29T00:00:00Z",
	"1900-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "0004-02-29T00:00:00Z", "0400-02-29T00:00:00Z",
	"2026-10-21T24:00:00Z", "2026-10-21T12:00:60Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:59Z",
	"2026-10-21t12:00:00Z", "2026-10-21T12:00:00.000Z", "2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z",
	"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g", "org:org_acme/general",
	"org:Acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general", "org:_a/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g",
	"org:o/vault:3F6C1E9A0B7D4C2E8F5A1B6C9D0E7F42/g", "org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g.h-i_j",
	"org:" + strings.Repeat("o", 65) + "/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g",
	"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX", "AAECAwQFBgcICQoL", "-_--AAECAwQFBgcICQoLDA0ODxAREhMU",
	"AAECAwQFBgcICQoLDA0ODw==", "AAECAwQFBgcICQoLDA0ODx==", "AAECAwQFBgcICQoLDA0ODxAR", "AAECAwQFBgcICQoLDA0O",
	"KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OTw==", "AAECAwQFBgcICQoLDA0ODxA=", "AAECAwQFBgcICQoLDA0ODxB=",
	"abcdef1", "ABCDEF1", "abc12", strings.Repeat("a", 64), strings.Repeat("a", 65),
}

// TestSchemaPatterns checks each string rule of the model against the validator it expresses.
func TestSchemaPatterns(t *testing.T) {
	for _, r := range stringRules(t) {
		for _, s := range patternSamples {
			checkRule(t, r, s)
		}
	}
}

func checkRule(t *testing.T, r stringRule, s string) {
	t.Helper()
	got, want := r.schema(s), r.valid(s)
	switch {
	case got == want:
	case got && (r.exact == nil || r.exact(s)):
		t.Errorf("%s %q: the schema accepts it, the validator refuses it", r.name, s)
	case !got:
		t.Errorf("%s %q: the validator accepts it, the schema refuses it", r.name, s)
	}
}

// TestUtcTimestampPatternCalendar compares the pattern with NewUtcTimestamp on every day of the
// years around the leap-year edges, and on every hour, minute and second value.
func TestUtcTimestampPatternCalendar(t *testing.T) {
	re := regexp.MustCompile(hive.UtcTimestampPattern)
	for _, year := range []int{0, 1, 4, 100, 400, 1900, 1999, 2000, 2024, 2026, 2100, 9996, 9999} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("%04d-%02d-%02dT00:00:00Z", year, month, day)
				_, err := hive.NewUtcTimestamp(s)
				if re.MatchString(s) != (err == nil) {
					t.Errorf("%s: pattern %v, NewUtcTimestamp %v", s, re.MatchString(s), err)
				}
			}
		}
	}
	for v := 0; v < 100; v++ {
		for _, s := range []string{
			fmt.Sprintf("2026-10-21T%02d:00:00Z", v), fmt.Sprintf("2026-10-21T00:%02d:00Z", v),
			fmt.Sprintf("2026-10-21T00:00:%02dZ", v),
		} {
			_, err := hive.NewUtcTimestamp(s)
			if re.MatchString(s) != (err == nil) {
				t.Errorf("%s: pattern %v, NewUtcTimestamp %v", s, re.MatchString(s), err)
			}
		}
	}
	// Sanity: the pattern agrees with time.Parse on the dates it accepts.
	if _, err := time.Parse(time.RFC3339, "2028-02-29T23:59:59Z"); err != nil || !re.MatchString("2028-02-29T23:59:59Z") {
		t.Error("2028-02-29 is a leap day")
	}
}

// FuzzSchemaPatterns checks every string rule of the model against its validator on arbitrary
// input (seeds: testdata/fuzz/FuzzSchemaPatterns).
func FuzzSchemaPatterns(f *testing.F) {
	for _, s := range patternSamples[:20] {
		f.Add(s)
	}
	rules := stringRules(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // JSON text cannot carry it (D8)
		}
		for _, r := range rules {
			checkRule(t, r, s)
		}
	})
}

// TestPatternNoneOf checks PatternNoneOf exhaustively on short strings over the words' alphabet.
func TestPatternNoneOf(t *testing.T) {
	tests := []struct {
		words    []string
		alphabet string
		maxLen   int
	}{
		{[]string{"agent", "person", "swarm"}, "agentpersonswarmx", 0},
		{[]string{"a", "ab", "b.c", "-]"}, "ab.c-]^x\n", 4},
		{[]string{""}, "ax", 3},
		{[]string{"presence_update", "presence.update", "published"}, "", 0},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(hive.PatternNoneOf(tt.words))
		check := func(s string) {
			if re.MatchString(s) == slices.Contains(tt.words, s) {
				t.Errorf("%q over %q: match %v", tt.words, s, re.MatchString(s))
			}
		}
		var gen func(prefix string, n int)
		gen = func(prefix string, n int) {
			check(prefix)
			if n == 0 {
				return
			}
			for _, c := range tt.alphabet {
				gen(prefix+string(c), n-1)
			}
		}
		gen("", tt.maxLen)
		for _, w := range tt.words {
			for i := 0; i <= len(w); i++ {
				check(w[:i])
				check(w[:i] + "x")
				check(w[:i] + "\n")
			}
			check(w + w)
		}
	}
}

// TestWireSchemaEnums checks the model's enumerations against the codecs: each value decodes as
// itself (not Unknown), in the spec's order, and the frame tags are FrameTags.
func TestWireSchemaEnums(t *testing.T) {
	defs := member[*jsonvalue.Object](hive.WireSchema(), "$defs")
	enum := func(def string) []string {
		var out []string
		for _, v := range member[[]any](member[*jsonvalue.Object](defs, def), "enum") {
			out = append(out, v.(string))
		}
		return out
	}
	if got := enum("BusFrameTag"); !slices.Equal(got, hive.FrameTags()) {
		t.Errorf("BusFrameTag %q, want %q", got, hive.FrameTags())
	}
	codes := []string{}
	for _, c := range hive.HiveErrorCodes() {
		codes = append(codes, string(c))
	}
	if got := enum("HiveErrorCode"); !slices.Equal(got, codes) {
		t.Errorf("HiveErrorCode %q, want %q", got, codes)
	}
	decoders := map[string]func([]byte) (string, error){
		"MessageType":         decodeAs[hive.MessageType],
		"NetworkKind":         decodeAs[hive.NetworkKind],
		"MessageTrust":        decodeAs[hive.MessageTrust],
		"MessageReceiptState": decodeAs[hive.MessageReceiptState],
		"TaskEventKind":       decodeAs[hive.TaskEventKind],
		"PresenceState":       decodeAs[hive.PresenceState],
		"BusPriority":         decodeAs[hive.BusPriority],
		"BusPrivacy":          decodeAs[hive.BusPrivacy],
		"ControlAction":       decodeAs[hive.ControlAction],
		"HiveErrorCode":       decodeAs[hive.HiveErrorCode],
		"HiveUploadKind":      decodeAs[hive.HiveUploadKind],
		"TaskState":           decodeAs[hive.TaskState],
		"TaskActorKind":       decodeAs[hive.TaskActorKind],
	}
	for def, decode := range decoders {
		values := enum(def)
		if len(values) == 0 {
			t.Errorf("%s has no enum", def)
		}
		for _, v := range append(values, "unknown") {
			got, err := decode([]byte(jsonvalue.Quote(v)))
			if err != nil || (got == "unknown") != (v == "unknown") {
				t.Errorf("%s %q decodes as %q (%v)", def, v, got, err)
			}
		}
	}
}

func decodeAs[T ~string, P interface {
	*T
	UnmarshalJSON([]byte) error
}](data []byte) (string, error) {
	var v T
	err := P(&v).UnmarshalJSON(data)
	return string(v), err
}

// TestWireSchemaVerdicts pins schema verdicts on hand-written documents, one per rule the model
// expresses beyond plain member types, each also checked against the validators.
func TestWireSchemaVerdicts(t *testing.T) {
	def := compileDefs(t, hiveModelURL, hive.WireSchema())
	const ch = `"org:o/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/g"`
	const d = `"2026-10-20T12:00:00Z"`
	swarmMsg := `{"client_msg_id":"c","network":{"kind":"swarm","swarm_id":"s"},"type":"offer","from":"a","body":{"text":"x"}`
	delivery := func(network, from, trust string) string {
		return `{"gid":"g","seq":0,"network":` + network + `,"type":"poll","from":` + from + `,"thread_id":"g","body":{"text":""},"trust":` + trust + `,"server_time":` + d + `,"expires_at":` + d + `}`
	}
	org, swarm := `{"kind":"org","channel":`+ch+`}`, `{"kind":"swarm","swarm_id":"s"}`
	tests := []struct {
		typ, side, doc string
		valid          bool
	}{
		{"agent-message", "", swarmMsg + `}`, true},
		{"agent-message", "", swarmMsg + `,"to_instance":null,"sealed":null}`, true},
		{"agent-message", "", swarmMsg + `,"to":"b","to_instance":"i"}`, false},
		{"agent-message", "", strings.Replace(swarmMsg, `{"text":"x"}`, `{"text":"x","references":[{"kind":"proposal","number":1}]}`, 1) + `}`, true},
		{"agent-message", "", strings.Replace(swarmMsg, `{"text":"x"}`, `{"text":"x","references":[{"kind":"task","number":1}]}`, 1) + `}`, false},
		{"agent-message", "", strings.Replace(swarmMsg, `"x"`, `"\u2028"`, 1) + `}`, false},
		{"agent-message", "", strings.Replace(swarmMsg, `"x"`, `"\u200b"`, 1) + `}`, true},
		{"agent-message", "", strings.Replace(swarmMsg, `"from":"a"`, `"from":"\u00a0a\u0085"`, 1) + `}`, false},
		{"message-delivery", "", delivery(org, `{"kind":"bot","x":1}`, `"partner"`), true},
		{"message-delivery", "", delivery(org, `{"kind":"unknown"}`, `"team"`), true},
		{"message-delivery", "", delivery(org, `{"kind":"swarm","handle":"h","reputation":1}`, `"team"`), false},
		{"message-delivery", "", delivery(swarm, `{"kind":"swarm","handle":"","reputation":0}`, `"untrusted"`), true},
		{"message-delivery", "", delivery(swarm, `{"kind":"person","label":"Ana"}`, `"untrusted"`), false},
		{"message-delivery", "", delivery(swarm, `{"kind":"swarm","handle":"h","reputation":1}`, `"unknown"`), false},
		{"sender", "", `{"kind":"agent","agent":"a","instance_label":"l"}`, false},
		{"sender", "", `{"kind":"agents"}`, true},
		{"task-actor", "", `{"kind":"agent","agent":"a","label":" "}`, false},
		{"task-actor", "", `{"kind":"person","label":"Ana","agent":null}`, true},
		{"task-actor", "", `{"kind":"person","label":"Ana","instance_id":"i"}`, false},
		{"task-actor", "", `{"kind":"unknown","label":"Ana"}`, false},
		{"bus-frame", "client", `{"t":"handoff.ack","handoff_id":"h","by":"b","x":1}`, true},
		{"bus-frame", "service", `{"t":"handoff.ack","handoff_id":"h","by":"b","x":1}`, false},
		{"bus-frame", "service", `{"t":"handoff.ack","handoff_id":"h","by":"b","reason":"r"}`, false},
		{"bus-frame", "", `{"t":"presence","agent_id":"a","state":"online","profile":{"display_name":" "}}`, false},
		{"bus-frame", "", `{"t":"presence","agent_id":"a","state":"online","profile":{"roles":null}}`, false},
		{"bus-frame", "", `{"t":"publish","client_msg_id":"c","channel":` + ch + `,"from":"a","kind":"k","priority":"high","privacy":"team","body":null}`, true},
		{"bus-frame", "", `{"t":"publish","client_msg_id":"c","channel":` + ch + `,"from":"a","kind":"k","priority":"urgent","privacy":"team","body":null}`, false},
		{"bus-frame", "", `{"t":"deliver","seq":1,"channel":"c","from":"a","kind":"k","priority":"urgent","privacy":"secret","body":{},"server_time":` + d + `}`, true},
		{"bus-frame", "", `{"t":"ack","channel":` + ch + `,"seq":0}`, false},
		{"bus-frame", "", `{"t":"control","control_id":"c","action":"pause","reason":"r","issued_by":"p","seq":1,"server_time":` + d + `}`, true},
		{"bus-poll", "", `{"schema":"leanctx.hive.bus-poll/v1","frames":[{"t":"hello"},{"t":"ack","seq":"x"},{"t":""}],"cursor":""}`, true},
		{"bus-poll", "", `{"schema":"leanctx.hive.bus-poll/v1","frames":[{"t":"published"}],"cursor":""}`, false},
		{"bus-events", "", `{"schema":"leanctx.hive.bus-events/v1","channel":"","events":[{"t":"handoff.reject","handoff_id":"","by":"","reason":""}]}`, true},
		{"error-body", "", `{"error":{"code":"teapot","kind":null,"limit":1}}`, true},
		{"error-body", "", `{"error":{"code":"teapot","message":null}}`, false},
		{"sealed-blob", "", `{"content_schema":"leanctx.hive.x/v1","epoch":1,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"AAECAwQFBgcICQoLDA0ODxA="}`, true},
		{"sealed-blob", "", `{"content_schema":"leanctx.hive.x/v0","epoch":1,"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","ciphertext":"AAECAwQFBgcICQoLDA0ODxA="}`, false},
	}
	for _, tt := range tests {
		c := hiveCase{name: tt.doc, typ: tt.typ, side: tt.side, doc: []byte(tt.doc)}
		if valid, err := hiveAccepts(c); valid != tt.valid {
			t.Errorf("%s %s: the validators say %v (%v), want valid=%v", tt.typ, tt.doc, valid, err, tt.valid)
		}
		if err := schemaVerdict(t, def(hiveDef(t, c)), c.doc); (err == nil) != tt.valid {
			t.Errorf("%s %s: the schema says %v, want valid=%v", tt.typ, tt.doc, err, tt.valid)
		}
	}
}

// ExampleWireSchema lists the variants of the bus frame a client processes.
func ExampleWireSchema() {
	defs, _ := hive.WireSchema().Get("$defs")
	union, _ := defs.(*jsonvalue.Object).Get("BusFrameToClient")
	variants, _ := union.(*jsonvalue.Object).Get("oneOf")
	for _, v := range variants.([]any) {
		r, _ := v.(*jsonvalue.Object).Get("$ref")
		fmt.Println(strings.TrimPrefix(r.(string), "#/$defs/"))
	}
	// Output:
	// FramePublished
	// FrameDeliver
	// FramePresenceUpdate
	// FrameControl
	// FrameHandoffOffer
	// FrameHandoffAck
	// FrameHandoffReject
	// FrameMessageStored
	// FrameMessageDeliver
	// FrameMessageStatus
	// FrameTaskEvent
	// FrameError
}

// BenchmarkWireSchema measures building the model (the generator calls it once per render).
func BenchmarkWireSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		hive.WireSchema()
	}
}
