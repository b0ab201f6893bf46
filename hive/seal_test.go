package hive_test

import (
	"bytes"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/agentwire/agentwire/hive"
)

const sealVault = "3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42"

// sealVector is hive/testdata/sealed/message-v1.json: a test vector computed independently with
// libsodium's crypto_aead_xchacha20poly1305_ietf_encrypt.
type sealVector struct {
	KeyHex    string          `json:"key_hex"`
	NonceHex  string          `json:"nonce_hex"`
	VaultID   string          `json:"vault_id"`
	Epoch     uint64          `json:"epoch"`
	AAD       string          `json:"aad"`
	Plaintext string          `json:"plaintext"`
	Sealed    json.RawMessage `json:"sealed"`
}

func loadSealVector(t testing.TB) (v sealVector, key, nonce []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sealed", "message-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if key, err = hex.DecodeString(v.KeyHex); err != nil {
		t.Fatal(err)
	}
	if nonce, err = hex.DecodeString(v.NonceHex); err != nil {
		t.Fatal(err)
	}
	return v, key, nonce
}

// vectorBody is the MessageBodyV1 of the test vector.
func vectorBody() hive.MessageBodyV1 {
	return hive.MessageBodyV1{
		Text: "Rotate the payments key at 18:00 — epoch 3 ends.",
		References: []hive.MessageReferenceV1{
			hive.ReferenceTask{Number: 42},
			hive.ReferenceCommit{ID: "9fceb02"},
		},
	}
}

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, hive.VaultKeyBytes) }

func encodeBody(t testing.TB, b hive.MessageBodyV1) string {
	t.Helper()
	out, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// sealRaw encrypts arbitrary plaintext as a blob labelled label, under the AAD of aadSchema.
func sealRaw(t testing.TB, key []byte, vaultID string, epoch uint64, label, aadSchema string, nonce, plaintext []byte) hive.SealedBlobV1 {
	t.Helper()
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	ct := aead.Seal(nil, nonce, plaintext, hive.SealedAAD(vaultID, epoch, aadSchema))
	return hive.SealedBlobV1{
		ContentSchema: label,
		Epoch:         epoch,
		Nonce:         base64.StdEncoding.EncodeToString(nonce),
		Ciphertext:    base64.StdEncoding.EncodeToString(ct),
	}
}

func TestSealVector(t *testing.T) {
	v, key, nonce := loadSealVector(t)
	want, err := os.ReadFile(filepath.Join("testdata", "sealed", "message-v1.sealed.json"))
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.TrimSuffix(want, []byte("\n"))
	if got := string(hive.SealedAAD(v.VaultID, v.Epoch, hive.SealedMessageSchema)); got != v.AAD {
		t.Fatalf("AAD %q, want %q", got, v.AAD)
	}
	body := vectorBody()
	if got := encodeBody(t, body); got != v.Plaintext {
		t.Fatalf("plaintext %s, want %s", got, v.Plaintext)
	}
	blob, err := hive.SealMessageBody(key, v.VaultID, v.Epoch, body, bytes.NewReader(nonce))
	if err != nil {
		t.Fatal(err)
	}
	got, err := blob.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("sealed\n got %s\nwant %s", got, want)
	}
	if !bytes.Equal(v.Sealed, want) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, v.Sealed); err != nil || !bytes.Equal(compact.Bytes(), want) {
			t.Fatalf("message-v1.json and message-v1.sealed.json disagree")
		}
	}
	var decoded hive.SealedBlobV1
	if err := decoded.UnmarshalJSON(want); err != nil {
		t.Fatal(err)
	}
	opened, err := hive.OpenMessageBody(key, v.VaultID, decoded)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeBody(t, opened); got != v.Plaintext {
		t.Fatalf("opened %s, want %s", got, v.Plaintext)
	}
}

func TestSealRoundTrip(t *testing.T) {
	refs := make([]hive.MessageReferenceV1, hive.MaxMessageReferences)
	for i := range refs {
		refs[i] = hive.ReferenceFact{ID: fmt.Sprintf("fact-%d", i)}
	}
	tests := []struct {
		name string
		body hive.MessageBodyV1
	}{
		{"text only", hive.MessageBodyV1{Text: "Which retry budget does payments use?"}},
		{"every reference kind", hive.MessageBodyV1{Text: "see refs", References: []hive.MessageReferenceV1{
			hive.ReferenceTask{Number: 1}, hive.ReferenceFact{ID: "f-1"}, hive.ReferenceProposal{Number: 7},
			hive.ReferenceCommit{ID: "0123456789abcdef0123456789abcdef01234567"}, hive.ReferenceHandoff{HandoffID: "h-1"},
		}}},
		{"max references", hive.MessageBodyV1{Text: "many", References: refs}},
		{"max text, escapes", hive.MessageBodyV1{Text: strings.Repeat("\"\\\u00e9\U0001F600\n", hive.MaxMessageTextChars/5)}},
		{"vector body", vectorBody()},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := testKey(byte(i + 1))
			epoch := uint64(i + 1)
			blob, err := hive.SealMessageBody(key, sealVault, epoch, tc.body, crand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if err := blob.Validate(); err != nil {
				t.Fatalf("sealed blob invalid: %v", err)
			}
			if blob.ContentSchema != hive.SealedMessageSchema || blob.Epoch != epoch {
				t.Fatalf("blob header %q %d", blob.ContentSchema, blob.Epoch)
			}
			// The blob survives its own wire form.
			wire, err := blob.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var back hive.SealedBlobV1
			if err := back.UnmarshalJSON(wire); err != nil {
				t.Fatal(err)
			}
			// It is a valid `sealed` member of an org message.
			msg := hive.AgentMessageV1{
				ClientMsgID: "01JBSEAL", Network: hive.NetworkOrg{Channel: "org:org_acme/vault:" + sealVault + "/general"},
				Type: hive.MessageTypeFinding, From: "claude-3e", Sealed: &back,
			}
			if err := msg.Validate(); err != nil {
				t.Fatalf("sealed message invalid: %v", err)
			}
			opened, err := hive.OpenMessageBody(key, sealVault, back)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := encodeBody(t, opened), encodeBody(t, tc.body); got != want {
				t.Fatalf("opened %s, want %s", got, want)
			}
		})
	}
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("entropy source failed") }

func TestSealRefuses(t *testing.T) {
	good := vectorBody()
	tests := []struct {
		name    string
		key     []byte
		vault   string
		epoch   uint64
		body    hive.MessageBodyV1
		rand    io.Reader
		want    string
		isValid bool // the error is a *ValidationError
	}{
		{"empty text", testKey(1), sealVault, 1, hive.MessageBodyV1{}, nil, "text must not be empty", true},
		{"text too long", testKey(1), sealVault, 1, hive.MessageBodyV1{Text: strings.Repeat("a", hive.MaxMessageTextChars+1)}, nil, "text exceeds the 4000 character limit", true},
		{"bad reference", testKey(1), sealVault, 1, hive.MessageBodyV1{Text: "x", References: []hive.MessageReferenceV1{hive.ReferenceTask{}}}, nil, "", true},
		{"nil reference", testKey(1), sealVault, 1, hive.MessageBodyV1{Text: "x", References: []hive.MessageReferenceV1{nil}}, nil, "references must not hold nil", true},
		{"body checked before key", nil, "", 0, hive.MessageBodyV1{}, nil, "text must not be empty", true},
		{"epoch 0", testKey(1), sealVault, 0, good, nil, "sealed epochs start at 1", true},
		{"vault uppercase", testKey(1), strings.ToUpper(sealVault), 1, good, nil, "vault_id must be 32 lowercase hex", true},
		{"vault short", testKey(1), sealVault[:31], 1, good, nil, "vault_id must be 32 lowercase hex", true},
		{"vault empty", testKey(1), "", 1, good, nil, "vault_id must be 32 lowercase hex", true},
		{"key 31 bytes", make([]byte, 31), sealVault, 1, good, nil, "hive: the vault key must be 32 bytes", false},
		{"key 33 bytes", make([]byte, 33), sealVault, 1, good, nil, "hive: the vault key must be 32 bytes", false},
		{"key nil", nil, sealVault, 1, good, nil, "hive: the vault key must be 32 bytes", false},
		{"short nonce source", testKey(1), sealVault, 1, good, bytes.NewReader(make([]byte, 23)), "hive: reading the nonce: unexpected EOF", false},
		{"failing nonce source", testKey(1), sealVault, 1, good, errReader{}, "hive: reading the nonce: entropy source failed", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.body.Validate(hive.NetworkKindOrg).Error()
			}
			blob, err := hive.SealMessageBody(tc.key, tc.vault, tc.epoch, tc.body, tc.rand)
			if err == nil {
				t.Fatalf("sealed %+v", blob)
			}
			if err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
			var ve *hive.ValidationError
			if errors.As(err, &ve) != tc.isValid {
				t.Fatalf("ValidationError=%v, want %v", !tc.isValid, tc.isValid)
			}
			if blob != (hive.SealedBlobV1{}) {
				t.Fatalf("non-zero blob on error: %+v", blob)
			}
		})
	}
}

func TestOpenUndecryptable(t *testing.T) {
	key := testKey(7)
	nonce := bytes.Repeat([]byte{0x24}, hive.SealedNonceBytes)
	const epoch = 5
	good, err := hive.SealMessageBody(key, sealVault, epoch, hive.MessageBodyV1{Text: "SECRET plan"}, bytes.NewReader(nonce))
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := base64.StdEncoding.DecodeString(good.Ciphertext)
	with := func(f func(b *hive.SealedBlobV1)) hive.SealedBlobV1 { b := good; f(&b); return b }
	flip := func(i int) hive.SealedBlobV1 {
		c := bytes.Clone(ct)
		c[(i+len(c))%len(c)] ^= 0x01
		return with(func(b *hive.SealedBlobV1) { b.Ciphertext = base64.StdEncoding.EncodeToString(c) })
	}
	raw := func(plaintext string) hive.SealedBlobV1 {
		return sealRaw(t, key, sealVault, epoch, hive.SealedMessageSchema, hive.SealedMessageSchema, nonce, []byte(plaintext))
	}
	manyRefs := `{"text":"SECRET","references":[` + strings.Repeat(`{"kind":"fact","id":"SECRET"},`, hive.MaxMessageReferences) + `{"kind":"fact","id":"SECRET"}]}`
	otherSchema := "leanctx.hive.knowledge/v1"

	tests := []struct {
		name   string
		key    []byte
		vault  string
		blob   hive.SealedBlobV1
		reason hive.UndecryptableReason
		cause  string // the wrapped *ValidationError, UndecryptableBlob only
	}{
		{"key nil", nil, sealVault, good, hive.UndecryptableKey, ""},
		{"key 16 bytes", key[:16], sealVault, good, hive.UndecryptableKey, ""},
		{"key 33 bytes", append(bytes.Clone(key), 0), sealVault, good, hive.UndecryptableKey, ""},
		{"vault empty", key, "", good, hive.UndecryptableVaultID, ""},
		{"vault uppercase", key, strings.ToUpper(sealVault), good, hive.UndecryptableVaultID, ""},
		{"blob epoch 0", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Epoch = 0 }), hive.UndecryptableBlob, "sealed epochs start at 1"},
		{"blob schema pattern", key, sealVault, with(func(b *hive.SealedBlobV1) { b.ContentSchema = "sealed-message" }), hive.UndecryptableBlob, "content_schema must be leanctx.hive.<area>/v<n>"},
		{"blob schema empty", key, sealVault, with(func(b *hive.SealedBlobV1) { b.ContentSchema = "" }), hive.UndecryptableBlob, "content_schema must not be empty"},
		{"blob nonce not base64", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Nonce = "!" + b.Nonce[1:] }), hive.UndecryptableBlob, "nonce must be standard padded base64"},
		{"blob nonce 23 bytes", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Nonce = base64.StdEncoding.EncodeToString(nonce[:23]) }), hive.UndecryptableBlob, "nonce must decode to 24 bytes"},
		{"blob ciphertext short", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Ciphertext = base64.StdEncoding.EncodeToString(ct[:15]) }), hive.UndecryptableBlob, "ciphertext is shorter than the 16 byte tag"},
		{"blob ciphertext line break", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Ciphertext = b.Ciphertext[:4] + "\n" + b.Ciphertext[4:] }), hive.UndecryptableBlob, "ciphertext must be standard padded base64"},
		{"other content schema", key, sealVault, with(func(b *hive.SealedBlobV1) { b.ContentSchema = otherSchema }), hive.UndecryptableSchema, ""},
		{"wrong key", testKey(8), sealVault, good, hive.UndecryptableAuth, ""},
		{"other vault", key, "00000000000000000000000000000000", good, hive.UndecryptableAuth, ""},
		{"other epoch", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Epoch = epoch + 1 }), hive.UndecryptableAuth, ""},
		{"AAD of another schema", key, sealVault, sealRaw(t, key, sealVault, epoch, hive.SealedMessageSchema, otherSchema, nonce, []byte(`{"text":"SECRET"}`)), hive.UndecryptableAuth, ""},
		{"AAD without the literal 0", key, sealVault, func() hive.SealedBlobV1 {
			aead, _ := chacha20poly1305.NewX(key)
			c := aead.Seal(nil, nonce, []byte(`{"text":"SECRET"}`), []byte(sealVault+"|5|"+hive.SealedMessageSchema))
			return with(func(b *hive.SealedBlobV1) { b.Ciphertext = base64.StdEncoding.EncodeToString(c) })
		}(), hive.UndecryptableAuth, ""},
		{"tampered first byte", key, sealVault, flip(0), hive.UndecryptableAuth, ""},
		{"tampered last plaintext byte", key, sealVault, flip(-hive.SealedTagBytes - 1), hive.UndecryptableAuth, ""},
		{"tampered tag", key, sealVault, flip(-1), hive.UndecryptableAuth, ""},
		{"truncated", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Ciphertext = base64.StdEncoding.EncodeToString(ct[:len(ct)-1]) }), hive.UndecryptableAuth, ""},
		{"tag only", key, sealVault, with(func(b *hive.SealedBlobV1) { b.Ciphertext = base64.StdEncoding.EncodeToString(ct[len(ct)-16:]) }), hive.UndecryptableAuth, ""},
		{"tampered nonce", key, sealVault, with(func(b *hive.SealedBlobV1) {
			n := bytes.Clone(nonce)
			n[23] ^= 0x80
			b.Nonce = base64.StdEncoding.EncodeToString(n)
		}), hive.UndecryptableAuth, ""},
		{"plaintext empty", key, sealVault, raw(""), hive.UndecryptableDecode, ""},
		{"plaintext not JSON", key, sealVault, raw("SECRET"), hive.UndecryptableDecode, ""},
		{"plaintext array", key, sealVault, raw(`["SECRET"]`), hive.UndecryptableDecode, ""},
		{"plaintext unknown member", key, sealVault, raw(`{"text":"SECRET","SECRET_MEMBER":1}`), hive.UndecryptableDecode, ""},
		{"plaintext duplicate member", key, sealVault, raw(`{"text":"SECRET","text":"SECRET"}`), hive.UndecryptableDecode, ""},
		{"plaintext missing text", key, sealVault, raw(`{"references":[]}`), hive.UndecryptableDecode, ""},
		{"plaintext null references", key, sealVault, raw(`{"text":"SECRET","references":null}`), hive.UndecryptableDecode, ""},
		{"plaintext unknown reference kind", key, sealVault, raw(`{"text":"SECRET","references":[{"kind":"SECRET"}]}`), hive.UndecryptableDecode, ""},
		{"plaintext trailing data", key, sealVault, raw(`{"text":"SECRET"} SECRET`), hive.UndecryptableDecode, ""},
		{"plaintext invalid UTF-8", key, sealVault, raw("{\"text\":\"SECRET\xff\"}"), hive.UndecryptableDecode, ""},
		{"plaintext text blank", key, sealVault, raw(`{"text":"  "}`), hive.UndecryptableInvalid, ""},
		{"plaintext text too long", key, sealVault, raw(`{"text":"SECRET` + strings.Repeat("x", hive.MaxMessageTextChars) + `"}`), hive.UndecryptableInvalid, ""},
		{"plaintext bad commit id", key, sealVault, raw(`{"text":"SECRET","references":[{"kind":"commit","id":"SECRET"}]}`), hive.UndecryptableInvalid, ""},
		{"plaintext task 0", key, sealVault, raw(`{"text":"SECRET","references":[{"kind":"task","number":0}]}`), hive.UndecryptableInvalid, ""},
		{"plaintext too many references", key, sealVault, raw(manyRefs), hive.UndecryptableInvalid, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := hive.OpenMessageBody(tc.key, tc.vault, tc.blob)
			if err == nil {
				t.Fatalf("opened %+v", body)
			}
			if body.Text != "" || body.References != nil {
				t.Fatalf("plaintext returned with the error: %+v", body)
			}
			if !errors.Is(err, hive.ErrUndecryptable) {
				t.Fatalf("%v is not ErrUndecryptable", err)
			}
			var ue *hive.UndecryptableError
			if !errors.As(err, &ue) || ue.Reason != tc.reason {
				t.Fatalf("error %v, want reason %q", err, tc.reason)
			}
			want := "sealed body is undecryptable: " + string(tc.reason)
			var ve *hive.ValidationError
			if tc.cause != "" {
				want += ": " + tc.cause
				if !errors.As(err, &ve) || ve.Error() != tc.cause {
					t.Fatalf("cause %v, want ValidationError %q", errors.Unwrap(err), tc.cause)
				}
			} else if errors.As(err, &ve) || errors.Unwrap(err) != nil {
				t.Fatalf("unexpected cause %v", errors.Unwrap(err))
			}
			if err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error shows plaintext: %q", err)
			}
		})
	}
	// The fixture itself opens: every failure above comes from its one change.
	if _, err := hive.OpenMessageBody(key, sealVault, good); err != nil {
		t.Fatal(err)
	}
	if _, err := hive.OpenMessageBody(key, sealVault, raw(`{"text":"ok","references":[]}`)); err != nil {
		t.Fatal(err)
	}
}

func TestSealNoncesDiffer(t *testing.T) {
	const n = 256
	key := testKey(3)
	body := hive.MessageBodyV1{Text: "same body every time"}
	nonces := make(map[string]bool, 2*n)
	cts := make(map[string]bool, 2*n)
	for i := range 2 * n {
		var r io.Reader // nil: the default CSPRNG
		if i%2 == 1 {
			r = crand.Reader
		}
		blob, err := hive.SealMessageBody(key, sealVault, 1, body, r)
		if err != nil {
			t.Fatal(err)
		}
		if nonces[blob.Nonce] || cts[blob.Ciphertext] {
			t.Fatalf("seal %d repeated a nonce or ciphertext", i)
		}
		nonces[blob.Nonce], cts[blob.Ciphertext] = true, true
	}
}

// FuzzOpenMessageBody opens arbitrary blobs under arbitrary keys (it must never panic, and every
// failure is ErrUndecryptable without a body), then seals arbitrary plaintext correctly and
// checks that OpenMessageBody accepts exactly the strict, org-valid MessageBodyV1 documents.
func FuzzOpenMessageBody(f *testing.F) {
	v, key, nonce := loadSealVector(f)
	var blob hive.SealedBlobV1
	_ = blob.UnmarshalJSON(v.Sealed)
	f.Add(key, v.VaultID, blob.ContentSchema, blob.Epoch, blob.Nonce, blob.Ciphertext, []byte(v.Plaintext))
	f.Fuzz(func(t *testing.T, key []byte, vaultID, schema string, epoch uint64, nonceB64, ciphertext string, plaintext []byte) {
		blob := hive.SealedBlobV1{ContentSchema: schema, Epoch: epoch, Nonce: nonceB64, Ciphertext: ciphertext}
		body, err := hive.OpenMessageBody(key, vaultID, blob)
		if err != nil {
			if !errors.Is(err, hive.ErrUndecryptable) {
				t.Fatalf("error %v is not ErrUndecryptable", err)
			}
			if body.Text != "" || body.References != nil {
				t.Fatalf("body returned with the error")
			}
		} else if verr := body.Validate(hive.NetworkKindOrg); verr != nil {
			t.Fatalf("opened an invalid body: %v", verr)
		}

		// Seal plaintext correctly; only its content decides the verdict.
		if len(key) != hive.VaultKeyBytes {
			key = testKey(0x5a)
		}
		if len(vaultID) != 32 || strings.Trim(vaultID, "0123456789abcdef") != "" {
			vaultID = sealVault
		}
		epoch = max(epoch, 1)
		sealed := sealRaw(t, key, vaultID, epoch, hive.SealedMessageSchema, hive.SealedMessageSchema, nonce, plaintext)
		if len(plaintext)+hive.SealedTagBytes > hive.MaxSealedCiphertextBytes {
			return
		}
		body, err = hive.OpenMessageBody(key, vaultID, sealed)
		var want hive.MessageBodyV1
		wantErr := want.UnmarshalJSON(plaintext)
		if wantErr == nil {
			wantErr = want.Validate(hive.NetworkKindOrg)
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("open error %v, but strict decode+validate says %v", err, wantErr)
		}
		if err != nil {
			var ue *hive.UndecryptableError
			if !errors.As(err, &ue) || (ue.Reason != hive.UndecryptableDecode && ue.Reason != hive.UndecryptableInvalid) {
				t.Fatalf("reason %v for a correctly sealed plaintext", err)
			}
			if err.Error() != "sealed body is undecryptable: "+string(ue.Reason) {
				t.Fatalf("error carries more than its reason: %q", err)
			}
			return
		}
		if got, want := encodeBody(t, body), encodeBody(t, want); got != want {
			t.Fatalf("opened %s, want %s", got, want)
		}
		// Resealing the opened body under the same nonce gives its compact encoding.
		again, err := hive.SealMessageBody(key, vaultID, epoch, body, bytes.NewReader(nonce))
		if err != nil {
			t.Fatal(err)
		}
		if reopened, err := hive.OpenMessageBody(key, vaultID, again); err != nil || encodeBody(t, reopened) != encodeBody(t, body) {
			t.Fatalf("reseal does not round-trip: %v", err)
		}
	})
}

func BenchmarkSealMessageBody(b *testing.B) {
	_, key, _ := loadSealVector(b)
	body := vectorBody()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hive.SealMessageBody(key, sealVault, 3, body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenMessageBody(b *testing.B) {
	v, key, _ := loadSealVector(b)
	var blob hive.SealedBlobV1
	if err := blob.UnmarshalJSON(v.Sealed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hive.OpenMessageBody(key, v.VaultID, blob); err != nil {
			b.Fatal(err)
		}
	}
}

// A sender seals a body for its org channel's vault; a receiver with the epoch's key opens it,
// and any other key (or any tampering) makes it undecryptable without showing plaintext.
func ExampleSealMessageBody() {
	channel := "org:org_acme/vault:3f6c1e9a0b7d4c2e8f5a1b6c9d0e7f42/general"
	_, vaultID, _, _ := hive.ParseChannel(channel)
	key := make([]byte, hive.VaultKeyBytes) // the vault key of epoch 3 (use a real one)
	_, _ = crand.Read(key)

	blob, err := hive.SealMessageBody(key, vaultID, 3, hive.MessageBodyV1{Text: "Rotate the key at 18:00."}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	msg := hive.AgentMessageV1{
		ClientMsgID: "01JBSEAL", Network: hive.NetworkOrg{Channel: channel},
		Type: hive.MessageTypeFinding, From: "claude-3e", Sealed: &blob,
	}
	fmt.Println("message:", msg.Validate())

	body, err := hive.OpenMessageBody(key, vaultID, blob)
	fmt.Println("opened:", body.Text, err)

	_, err = hive.OpenMessageBody(make([]byte, hive.VaultKeyBytes), vaultID, blob)
	fmt.Println(errors.Is(err, hive.ErrUndecryptable), err)
	// Output:
	// message: <nil>
	// opened: Rotate the key at 18:00. <nil>
	// true sealed body is undecryptable: authentication failed
}
