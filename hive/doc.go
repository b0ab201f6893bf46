// Package hive implements the lean-ctx-protocol 0.4.0 hive contracts (spec: hive.md): the
// shared primitives, agent messages and networks, sealed blobs, bus frames, error bodies and
// tasks.
//
// # Contract
//
// Every type has the exact wire shape of its Rust original: members in declaration order, tags
// first, absent optionals omitted (E1–E3), snake_case enum values with an Unknown fallback that
// encodes as "unknown" (E4). UnmarshalJSON decodes strictly: the strict JSON rules of package
// jsonvalue (duplicate names, invalid UTF-8, lone surrogates, depth, number range) and the
// serde-like rules D1–D9 of hive.md §0.2 (objects only, required members, null only for optional
// members, exact integers, strict types refusing unknown members, lenient types ignoring them).
// Decoding failures are *DecodeError; Validate runs the spec's checks in the spec's order and
// returns the first failure as a *ValidationError with the spec's message, byte for byte.
// Encoding never validates (E5): call Validate before sending.
//
// Tagged enums (NetworkV1, MessageReferenceV1, SenderV1, BusFrameV1) are sealed interfaces with
// one struct per variant; decode them as members of their holders or with DecodeNetworkV1,
// DecodeMessageReferenceV1, DecodeSenderV1 and DecodeBusFrame. A frame is decoded for its
// receiving side (§4.2): client→service frames strictly at the service, service→client frames
// leniently at the client, which ignores tags it does not know.
//
// Optional members are pointers (nil = absent), lists are slices (nil ≡ empty), u64 is uint64,
// and UtcTimestamp holds a checked `YYYY-MM-DDTHH:MM:SSZ` string.
//
// The core contracts of hive.md §7 (evidence, money, savings, …) are in package leanctx; the
// strict codec both packages share is package hive/wire; hive/registry maps the CLI TYPE names
// to decoders and validators.
package hive
