package leanctx

import "github.com/agentwire/agentwire/hive/wire"

// MeasuredUnitV1 is a non-token unit of usage (hive.md §7.3); lenient.
type MeasuredUnitV1 struct {
	// UnitType is `unit_type`.
	UnitType string
	// Quantity is `quantity`.
	Quantity uint64
}

func (u *MeasuredUnitV1) decode(d *wire.Decoder) error {
	*u = MeasuredUnitV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "unit_type":
			seen |= 1
			return decodeString(d, &u.UnitType)
		case "quantity":
			seen |= 2
			return decodeU64(d, &u.Quantity)
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 3, []string{"unit_type", "quantity"})
}

func (u *MeasuredUnitV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("unit_type", u.UnitType)
	e.Uint("quantity", u.Quantity)
	e.Close()
}

// MarshalJSON writes `{"unit_type":…,"quantity":N}`.
func (u MeasuredUnitV1) MarshalJSON() ([]byte, error) { return wire.MarshalObject(48, u.appendJSON) }

// UnmarshalJSON decodes leniently.
func (u *MeasuredUnitV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "MeasuredUnitV1", u.decode)
}

// UsageBreakdownV1 is the usage of one call (hive.md §7.3); the zero value is the default;
// lenient.
type UsageBreakdownV1 struct {
	InputTokens       uint64 // `input_tokens`
	OutputTokens      uint64 // `output_tokens`
	CachedInputTokens uint64 // `cached_input_tokens`
	CacheWriteTokens  uint64 // `cache_write_tokens`
	ReasoningTokens   uint64 // `reasoning_tokens`
	// OtherUnits is `other_units` (defaulted: absent decodes as empty; omitted when empty).
	OtherUnits []MeasuredUnitV1
}

var usageFields = []string{"input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens", "reasoning_tokens", "other_units"}

func (u *UsageBreakdownV1) decode(d *wire.Decoder) error {
	*u = UsageBreakdownV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "input_tokens":
			seen |= 1 << 0
			return decodeU64(d, &u.InputTokens)
		case "output_tokens":
			seen |= 1 << 1
			return decodeU64(d, &u.OutputTokens)
		case "cached_input_tokens":
			seen |= 1 << 2
			return decodeU64(d, &u.CachedInputTokens)
		case "cache_write_tokens":
			seen |= 1 << 3
			return decodeU64(d, &u.CacheWriteTokens)
		case "reasoning_tokens":
			seen |= 1 << 4
			return decodeU64(d, &u.ReasoningTokens)
		case "other_units":
			if ok, err := d.Null(); err != nil {
				return err
			} else if ok {
				return d.NullRequired()
			}
			return d.Array(func(i int) error {
				u.OtherUnits = append(u.OtherUnits, MeasuredUnitV1{})
				return u.OtherUnits[i].decode(d)
			})
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 1<<5-1, usageFields)
}

func (u *UsageBreakdownV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Uint("input_tokens", u.InputTokens)
	e.Uint("output_tokens", u.OutputTokens)
	e.Uint("cached_input_tokens", u.CachedInputTokens)
	e.Uint("cache_write_tokens", u.CacheWriteTokens)
	e.Uint("reasoning_tokens", u.ReasoningTokens)
	if len(u.OtherUnits) > 0 {
		e.Key("other_units")
		e.B = append(e.B, '[')
		for i := range u.OtherUnits {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			u.OtherUnits[i].appendJSON(e)
		}
		e.B = append(e.B, ']')
	}
	e.Close()
}

// MarshalJSON writes the usage (other_units omitted when empty).
func (u UsageBreakdownV1) MarshalJSON() ([]byte, error) {
	return wire.MarshalObject(160, u.appendJSON)
}

// UnmarshalJSON decodes leniently.
func (u *UsageBreakdownV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "UsageBreakdownV1", u.decode)
}
