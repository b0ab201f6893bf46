// Package registry names every top-level hive and leanctx contract by its CLI TYPE (cli.md:
// the kebab-case of the Go type name without the V1 suffix) and decodes, validates and
// re-encodes documents of that type. The CLI (`agentwire hive validate --type TYPE`) and the
// conformance runner both dispatch through it, so neither re-implements a rule.
package registry

import (
	"encoding/json"
	"slices"

	"github.com/agentwire/agentwire/hive"
	"github.com/agentwire/agentwire/leanctx"
)

// Document is a decoded contract value: it re-encodes to its wire form.
type Document interface {
	MarshalJSON() ([]byte, error)
}

// Type is one contract the registry knows.
type Type struct {
	// Name is the CLI TYPE, e.g. `agent-message`.
	Name string
	// GoName is the Go type, e.g. `hive.AgentMessageV1`.
	GoName string
	// Decode decodes one document strictly (hive.md §0.2); failures are *hive.DecodeError.
	Decode func(data []byte) (Document, error)
	// Validate runs the type's Validate (nil when the type has none).
	Validate func(doc Document) error
}

// Check decodes data and, when the type has one, runs its Validate: the verdict of
// `hive validate`.
func (t Type) Check(data []byte) (Document, error) {
	doc, err := t.Decode(data)
	if err != nil {
		return nil, err
	}
	if t.Validate != nil {
		if err := t.Validate(doc); err != nil {
			return doc, err
		}
	}
	return doc, nil
}

// decoder adapts a pointer type with UnmarshalJSON.
func decoder[T any, P interface {
	*T
	json.Unmarshaler
	Document
}]() func([]byte) (Document, error) {
	return func(data []byte) (Document, error) {
		var v T
		p := P(&v)
		if err := p.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return p, nil
	}
}

// validator adapts a pointer type with Validate.
func validator[P interface{ Validate() error }]() func(Document) error {
	return func(doc Document) error { return doc.(P).Validate() }
}

// frameDocument wraps a decoded frame.
type frameDocument struct{ hive.BusFrameV1 }

// Frame returns the frame of a bus-frame document.
func Frame(doc Document) hive.BusFrameV1 {
	if f, ok := doc.(frameDocument); ok {
		return f.BusFrameV1
	}
	return nil
}

type bodyDocument struct{ *hive.MessageBodyV1 }

type taggedDocument[T Document] struct{ v T }

// MarshalJSON encodes the wrapped tagged-enum value.
func (t taggedDocument[T]) MarshalJSON() ([]byte, error) { return t.v.MarshalJSON() }

var types = []Type{
	{Name: "agent-message", GoName: "hive.AgentMessageV1", Decode: decoder[hive.AgentMessageV1](), Validate: validator[*hive.AgentMessageV1]()},
	{Name: "message-delivery", GoName: "hive.MessageDeliveryV1", Decode: decoder[hive.MessageDeliveryV1](), Validate: validator[*hive.MessageDeliveryV1]()},
	{Name: "message-receipt", GoName: "hive.MessageReceiptV1", Decode: decoder[hive.MessageReceiptV1](), Validate: validator[*hive.MessageReceiptV1]()},
	{Name: "message-stored", GoName: "hive.MessageStoredV1", Decode: decoder[hive.MessageStoredV1]()},
	{Name: "message-status", GoName: "hive.MessageStatusV1", Decode: decoder[hive.MessageStatusV1]()},
	{Name: "message-list", GoName: "hive.MessageListV1", Decode: decoder[hive.MessageListV1](), Validate: validator[*hive.MessageListV1]()},
	{Name: "message-body", GoName: "hive.MessageBodyV1", Decode: func(data []byte) (Document, error) {
		var b hive.MessageBodyV1
		if err := b.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return bodyDocument{&b}, nil
	}, Validate: func(doc Document) error {
		// A standalone body is validated as on an org network, like a sealed plaintext (§3.2).
		return doc.(bodyDocument).Validate(hive.NetworkKindOrg)
	}},
	{Name: "network", GoName: "hive.NetworkV1", Decode: func(data []byte) (Document, error) {
		n, err := hive.DecodeNetworkV1(data)
		if err != nil {
			return nil, err
		}
		return taggedDocument[hive.NetworkV1]{n}, nil
	}, Validate: func(doc Document) error { return doc.(taggedDocument[hive.NetworkV1]).v.Validate() }},
	{Name: "message-reference", GoName: "hive.MessageReferenceV1", Decode: func(data []byte) (Document, error) {
		r, err := hive.DecodeMessageReferenceV1(data)
		if err != nil {
			return nil, err
		}
		return taggedDocument[hive.MessageReferenceV1]{r}, nil
	}, Validate: func(doc Document) error { return doc.(taggedDocument[hive.MessageReferenceV1]).v.Validate() }},
	{Name: "sender", GoName: "hive.SenderV1", Decode: func(data []byte) (Document, error) {
		s, err := hive.DecodeSenderV1(data)
		if err != nil {
			return nil, err
		}
		return taggedDocument[hive.SenderV1]{s}, nil
	}},
	{Name: "task-event", GoName: "hive.TaskEventV1", Decode: decoder[hive.TaskEventV1]()},
	{Name: "task-actor", GoName: "hive.TaskActorV1", Decode: decoder[hive.TaskActorV1](), Validate: validator[*hive.TaskActorV1]()},
	{Name: "bus-frame", GoName: "hive.BusFrameV1", Decode: func(data []byte) (Document, error) {
		f, err := hive.DecodeBusFrameByTag(data)
		if err != nil {
			return nil, err
		}
		return frameDocument{f}, nil
	}, Validate: func(doc Document) error { return hive.ValidateFrame(doc.(frameDocument).BusFrameV1) }},
	{Name: "bus-poll", GoName: "hive.BusPollV1", Decode: decoder[hive.BusPollV1](), Validate: validator[*hive.BusPollV1]()},
	{Name: "bus-events", GoName: "hive.BusEventsV1", Decode: decoder[hive.BusEventsV1](), Validate: validator[*hive.BusEventsV1]()},
	{Name: "sealed-blob", GoName: "hive.SealedBlobV1", Decode: decoder[hive.SealedBlobV1](), Validate: validator[*hive.SealedBlobV1]()},
	{Name: "error-body", GoName: "hive.HiveErrorBody", Decode: decoder[hive.HiveErrorBody]()},
	{Name: "error-detail", GoName: "hive.HiveErrorDetailV1", Decode: decoder[hive.HiveErrorDetailV1]()},
	{Name: "evidence-ref", GoName: "leanctx.EvidenceRefV1", Decode: decoder[leanctx.EvidenceRefV1](), Validate: validator[*leanctx.EvidenceRefV1]()},
	{Name: "experiment-assignment", GoName: "leanctx.ExperimentAssignmentV1", Decode: decoder[leanctx.ExperimentAssignmentV1]()},
	{Name: "evidence-gap-opened", GoName: "leanctx.EvidenceGapOpenedV1", Decode: decoder[leanctx.EvidenceGapOpenedV1]()},
	{Name: "evidence-gap-closed", GoName: "leanctx.EvidenceGapClosedV1", Decode: decoder[leanctx.EvidenceGapClosedV1]()},
	{Name: "money", GoName: "leanctx.MoneyV1", Decode: decoder[leanctx.MoneyV1]()},
	{Name: "policy-classification", GoName: "leanctx.PolicyClassification", Decode: decoder[leanctx.PolicyClassification]()},
	{Name: "savings-observation", GoName: "leanctx.SavingsObservationV1", Decode: decoder[leanctx.SavingsObservationV1]()},
	{Name: "savings-receipt", GoName: "leanctx.SavingsReceiptV1", Decode: decoder[leanctx.SavingsReceiptV1](), Validate: validator[*leanctx.SavingsReceiptV1]()},
	{Name: "context-balance", GoName: "leanctx.ContextBalanceV1", Decode: decoder[leanctx.ContextBalanceV1](), Validate: validator[*leanctx.ContextBalanceV1]()},
	{Name: "usage-breakdown", GoName: "leanctx.UsageBreakdownV1", Decode: decoder[leanctx.UsageBreakdownV1]()},
	{Name: "measured-unit", GoName: "leanctx.MeasuredUnitV1", Decode: decoder[leanctx.MeasuredUnitV1]()},
}

// Types returns every known type in a fixed order (hive contracts first, then leanctx).
func Types() []Type { return slices.Clone(types) }

// Names returns the TYPE names in the order of Types.
func Names() []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return names
}

// Lookup returns the type named name.
func Lookup(name string) (Type, bool) {
	for _, t := range types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}
