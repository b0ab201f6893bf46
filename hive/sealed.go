package hive

import (
	"regexp"
	"strconv"

	"github.com/agentwire/agentwire/hive/wire"
)

// MaxSealedCiphertextBytes is MAX_SEALED_CIPHERTEXT_BYTES: the decoded ciphertext limit, tag
// included (hive.md §3.1).
const MaxSealedCiphertextBytes = 1048576

// SealedNonceBytes is the decoded nonce length of XChaCha20-Poly1305.
const SealedNonceBytes = 24

// SealedTagBytes is the Poly1305 tag length appended to every ciphertext.
const SealedTagBytes = 16

var contentSchemaPattern = regexp.MustCompile(`^leanctx\.hive\.[a-z0-9-]+/v[1-9][0-9]*$`)

// SealedBlobV1 is a body encrypted with the vault key of one epoch (hive.md §3.1); strict.
type SealedBlobV1 struct {
	// ContentSchema is `content_schema`: what the plaintext is
	// (`leanctx.hive.sealed-message/v1` for a message body).
	ContentSchema string
	// Epoch is `epoch`: the key epoch, from 1.
	Epoch uint64
	// Nonce is `nonce`: standard padded base64 of 24 bytes.
	Nonce string
	// Ciphertext is `ciphertext`: standard padded base64 of 16–1048576 bytes, tag included.
	Ciphertext string
}

// Validate is SealedBlobV1.validate() (§3.1), in order: content_schema id and pattern, epoch,
// nonce, ciphertext bound, then the 16-byte tag minimum.
func (s *SealedBlobV1) Validate() error {
	if err := ValidateID(s.ContentSchema, "content_schema"); err != nil {
		return err
	}
	if !contentSchemaPattern.MatchString(s.ContentSchema) {
		return verr("content_schema must be leanctx.hive.<area>/v<n>")
	}
	if s.Epoch == 0 {
		return verr("sealed epochs start at 1")
	}
	if err := ValidateB64Len(s.Nonce, SealedNonceBytes, "nonce"); err != nil {
		return err
	}
	n, err := b64Bounded(s.Ciphertext, MaxSealedCiphertextBytes, "ciphertext")
	if err != nil {
		return err
	}
	if n < SealedTagBytes {
		return verr("ciphertext is shorter than the 16 byte tag")
	}
	return nil
}

// SealedAAD is sealed_aad(vault_id, epoch, content_schema) (hive.md §3.2): the UTF-8 bytes
// `vault_id|0|epoch|content_schema`, epoch in decimal, no terminator.
func SealedAAD(vaultID string, epoch uint64, contentSchema string) []byte {
	b := make([]byte, 0, len(vaultID)+len(contentSchema)+24)
	b = append(b, vaultID...)
	b = append(b, "|0|"...)
	b = strconv.AppendUint(b, epoch, 10)
	b = append(b, '|')
	return append(b, contentSchema...)
}

var sealedFields = []string{"content_schema", "epoch", "nonce", "ciphertext"}

func (s *SealedBlobV1) decode(d *wire.Decoder) error {
	*s = SealedBlobV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "content_schema":
			seen |= 1 << 0
			return decodeString(d, &s.ContentSchema)
		case "epoch":
			seen |= 1 << 1
			v, err := d.Uint(maxU64)
			s.Epoch = v
			return err
		case "nonce":
			seen |= 1 << 2
			return decodeString(d, &s.Nonce)
		case "ciphertext":
			seen |= 1 << 3
			return decodeString(d, &s.Ciphertext)
		}
		return d.Unknown()
	})
	if err != nil {
		return err
	}
	return checkRequired(d, seen, 15, sealedFields)
}

func decodeOptSealed(d *wire.Decoder, dst **SealedBlobV1) error {
	if ok, err := d.Null(); err != nil || ok {
		*dst = nil
		return err
	}
	s := new(SealedBlobV1)
	*dst = s
	return s.decode(d)
}

func (s *SealedBlobV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("content_schema", s.ContentSchema)
	e.Uint("epoch", s.Epoch)
	e.Str("nonce", s.Nonce)
	e.Str("ciphertext", s.Ciphertext)
	e.Close()
}

// MarshalJSON writes `{"content_schema":…,"epoch":N,"nonce":…,"ciphertext":…}`.
func (s SealedBlobV1) MarshalJSON() ([]byte, error) {
	return marshalWith(96+len(s.Ciphertext), s.appendJSON)
}

// UnmarshalJSON decodes strictly (unknown members refused).
func (s *SealedBlobV1) UnmarshalJSON(data []byte) error {
	return document(data, "SealedBlobV1", s.decode)
}
