package hive

import (
	crand "crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// Sealing and opening of message bodies (hive.md §3.2).
//
// A sealed message carries, instead of `body`, a SealedBlobV1 whose plaintext is the compact
// JSON of a MessageBodyV1 (validated with `org` by the sender), encrypted with
// XChaCha20-Poly1305 under the 32-byte vault key of the blob's epoch, with a 24-byte nonce from a
// CSPRNG and the AAD SealedAAD(vault_id, epoch, content_schema). The vault key is bound to the
// vault of the message's org channel (ParseChannel gives its vault_id); choosing the key of an
// epoch is the caller's business (keys reach an instance wrapped to its X25519 key, outside
// hive.md).

// VaultKeyBytes is the length of a vault key: one 32-byte XChaCha20-Poly1305 key per epoch
// (hive.md §3).
const VaultKeyBytes = chacha20poly1305.KeySize

// ErrUndecryptable is the *undecryptable* verdict of hive.md §3.2: the receiver could not
// validate, decrypt, strictly decode or validate (with `org`) a sealed body. No plaintext is
// shown; every error OpenMessageBody returns matches it with errors.Is.
var ErrUndecryptable = errors.New("sealed body is undecryptable")

// UndecryptableReason says at which step of hive.md §3.2 "Receiving" a sealed body failed
// (project-defined: the spec only requires the single verdict undecryptable).
type UndecryptableReason string

// UndecryptableReason values, in the order of the receiving steps.
const (
	// UndecryptableKey: the key is not VaultKeyBytes long.
	UndecryptableKey UndecryptableReason = "the vault key is not 32 bytes"
	// UndecryptableVaultID: the vault_id for the AAD is not 32 lowercase hex.
	UndecryptableVaultID UndecryptableReason = "vault_id is not 32 lowercase hex"
	// UndecryptableBlob: SealedBlobV1.Validate failed; the *ValidationError is wrapped.
	UndecryptableBlob UndecryptableReason = "the sealed blob is invalid"
	// UndecryptableSchema: content_schema is not SealedMessageSchema, so the plaintext is not a
	// message body.
	UndecryptableSchema UndecryptableReason = "content_schema is not " + SealedMessageSchema
	// UndecryptableAuth: authentication failed: wrong key or epoch, a different vault_id,
	// epoch or content_schema in the AAD, or a tampered nonce or ciphertext (indistinguishable
	// by design).
	UndecryptableAuth UndecryptableReason = "authentication failed"
	// UndecryptableDecode: the plaintext does not decode strictly as a MessageBodyV1.
	UndecryptableDecode UndecryptableReason = "the plaintext is not a MessageBodyV1"
	// UndecryptableInvalid: the decoded MessageBodyV1 fails Validate(org).
	UndecryptableInvalid UndecryptableReason = "the plaintext body is invalid"
)

// UndecryptableError is the error of OpenMessageBody. It matches ErrUndecryptable with
// errors.Is and never carries plaintext: only the UndecryptableBlob reason wraps its cause (the
// blob's *ValidationError, which speaks of the public envelope). Failures after decryption drop
// their cause, because decoding and validation messages may quote member names or values of
// the plaintext.
type UndecryptableError struct {
	// Reason is the failed step.
	Reason UndecryptableReason
	cause  error
}

// Error returns "sealed body is undecryptable: <reason>", plus ": <cause>" for an invalid blob.
func (e *UndecryptableError) Error() string {
	s := ErrUndecryptable.Error() + ": " + string(e.Reason)
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Is reports whether target is ErrUndecryptable.
func (e *UndecryptableError) Is(target error) bool { return target == ErrUndecryptable }

// Unwrap returns the blob's validation error for UndecryptableBlob, else nil.
func (e *UndecryptableError) Unwrap() error { return e.cause }

func undecryptable(r UndecryptableReason, cause error) error {
	return &UndecryptableError{Reason: r, cause: cause}
}

// errSealKey is returned by SealMessageBody for a key of the wrong length.
var errSealKey = errors.New("hive: the vault key must be 32 bytes")

func validVaultID(vaultID string) bool { return len(vaultID) == 32 && isLowerHex(vaultID) }

// SealMessageBody seals body for an org channel of vault vaultID under key, the vault key of
// epoch (hive.md §3.2), and returns the `sealed` member of an AgentMessageV1:
//
//   - body.Validate(NetworkKindOrg) first; its *ValidationError is returned unchanged;
//   - epoch 0 → `sealed epochs start at 1`; vaultID must be 32 lowercase hex
//     (`vault_id must be 32 lowercase hex`, project-defined); key must be 32 bytes;
//   - plaintext: the compact JSON of body (MarshalJSON);
//   - a fresh 24-byte nonce read from rand (crypto/rand.Reader when rand is nil; pass a
//     deterministic reader only in tests: a nonce must never repeat under one key);
//   - ciphertext: XChaCha20-Poly1305 with AAD SealedAAD(vaultID, epoch, SealedMessageSchema),
//     tag appended; nonce and ciphertext in standard padded base64;
//   - content_schema SealedMessageSchema.
//
// The result passes SealedBlobV1.Validate.
func SealMessageBody(key []byte, vaultID string, epoch uint64, body MessageBodyV1, rand io.Reader) (SealedBlobV1, error) {
	if err := body.Validate(NetworkKindOrg); err != nil {
		return SealedBlobV1{}, err
	}
	if epoch == 0 {
		return SealedBlobV1{}, verr("sealed epochs start at 1")
	}
	if !validVaultID(vaultID) {
		return SealedBlobV1{}, verr("vault_id must be 32 lowercase hex")
	}
	if len(key) != VaultKeyBytes {
		return SealedBlobV1{}, errSealKey
	}
	plaintext, err := body.MarshalJSON()
	if err != nil {
		return SealedBlobV1{}, err
	}
	if len(plaintext)+SealedTagBytes > MaxSealedCiphertextBytes {
		return SealedBlobV1{}, verr("ciphertext exceeds the 1048576 byte limit")
	}
	if rand == nil {
		rand = crand.Reader
	}
	var nonce [SealedNonceBytes]byte
	if _, err := io.ReadFull(rand, nonce[:]); err != nil {
		return SealedBlobV1{}, fmt.Errorf("hive: reading the nonce: %w", err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return SealedBlobV1{}, err
	}
	aad := SealedAAD(vaultID, epoch, SealedMessageSchema)
	ct := aead.Seal(make([]byte, 0, len(plaintext)+SealedTagBytes), nonce[:], plaintext, aad)
	clear(plaintext)
	return SealedBlobV1{
		ContentSchema: SealedMessageSchema,
		Epoch:         epoch,
		Nonce:         base64.StdEncoding.EncodeToString(nonce[:]),
		Ciphertext:    base64.StdEncoding.EncodeToString(ct),
	}, nil
}

// OpenMessageBody is the receiving side of hive.md §3.2 for a sealed message of an org channel
// of vault vaultID; key is the vault key of blob.Epoch. In order: key length, vaultID shape,
// blob.Validate(), content_schema == SealedMessageSchema, XChaCha20-Poly1305 decryption with
// AAD SealedAAD(vaultID, blob.Epoch, blob.ContentSchema), strict decoding as MessageBodyV1,
// then Validate(NetworkKindOrg). Any failure returns a zero body and an *UndecryptableError
// (errors.Is(err, ErrUndecryptable)); the error never contains plaintext.
func OpenMessageBody(key []byte, vaultID string, blob SealedBlobV1) (MessageBodyV1, error) {
	if len(key) != VaultKeyBytes {
		return MessageBodyV1{}, undecryptable(UndecryptableKey, nil)
	}
	if !validVaultID(vaultID) {
		return MessageBodyV1{}, undecryptable(UndecryptableVaultID, nil)
	}
	if err := blob.Validate(); err != nil {
		return MessageBodyV1{}, undecryptable(UndecryptableBlob, err)
	}
	if blob.ContentSchema != SealedMessageSchema {
		return MessageBodyV1{}, undecryptable(UndecryptableSchema, nil)
	}
	// Validate checked both as strict padded base64 of the right lengths.
	nonce, err := base64.StdEncoding.Strict().DecodeString(blob.Nonce)
	if err != nil {
		return MessageBodyV1{}, undecryptable(UndecryptableBlob, err)
	}
	ct, err := base64.StdEncoding.Strict().DecodeString(blob.Ciphertext)
	if err != nil {
		return MessageBodyV1{}, undecryptable(UndecryptableBlob, err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return MessageBodyV1{}, undecryptable(UndecryptableKey, nil)
	}
	plaintext, err := aead.Open(ct[:0], nonce, ct, SealedAAD(vaultID, blob.Epoch, blob.ContentSchema))
	if err != nil {
		return MessageBodyV1{}, undecryptable(UndecryptableAuth, nil)
	}
	var body MessageBodyV1
	if err := body.UnmarshalJSON(plaintext); err != nil {
		clear(plaintext)
		return MessageBodyV1{}, undecryptable(UndecryptableDecode, nil)
	}
	if err := body.Validate(NetworkKindOrg); err != nil {
		clear(plaintext)
		return MessageBodyV1{}, undecryptable(UndecryptableInvalid, nil)
	}
	return body, nil
}
