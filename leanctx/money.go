package leanctx

import (
	"math/big"
	"math/bits"
	"strconv"

	"github.com/agentwire/agentwire/hive/wire"
)

// Int128 is a signed 128-bit integer (Rust i128) in two's complement: the value is
// Hi·2^64 + Lo. It never passes through float64 (hive.md §7.5). The zero value is 0.
type Int128 struct {
	// Hi is the upper 64 bits, signed.
	Hi int64
	// Lo is the lower 64 bits.
	Lo uint64
}

// The Int128 messages (hive.md §7.5).
const (
	msgCoefficientNotInteger = "coefficient must be an integer JSON number"
	msgCoefficientRange      = "coefficient is outside the i128 range"
)

// MaxInt128 and MinInt128 bound Int128: 2^127−1 and −2^127.
var (
	MaxInt128 = Int128{Hi: 1<<63 - 1, Lo: ^uint64(0)}
	MinInt128 = Int128{Hi: -1 << 63, Lo: 0}
)

// Int128FromInt64 widens v.
func Int128FromInt64(v int64) Int128 { return Int128{Hi: v >> 63, Lo: uint64(v)} }

// Sign returns -1, 0 or +1.
func (x Int128) Sign() int {
	switch {
	case x.Hi < 0:
		return -1
	case x.Hi == 0 && x.Lo == 0:
		return 0
	}
	return 1
}

// Cmp compares x and y (-1, 0, +1).
func (x Int128) Cmp(y Int128) int {
	switch {
	case x.Hi < y.Hi:
		return -1
	case x.Hi > y.Hi:
		return 1
	case x.Lo < y.Lo:
		return -1
	case x.Lo > y.Lo:
		return 1
	}
	return 0
}

// neg returns −x modulo 2^128.
func (x Int128) neg() Int128 {
	lo, borrow := bits.Sub64(0, x.Lo, 0)
	hi, _ := bits.Sub64(0, uint64(x.Hi), borrow)
	return Int128{Hi: int64(hi), Lo: lo}
}

// String returns the decimal form: optional `-`, digits without leading zeros.
func (x Int128) String() string { return string(x.AppendDecimal(nil)) }

// AppendDecimal appends the decimal form (the wire form of §7.5).
func (x Int128) AppendDecimal(dst []byte) []byte {
	if x.Hi == 0 {
		return strconv.AppendUint(dst, x.Lo, 10)
	}
	if x.Hi == -1 && x.Lo >= 1<<63 {
		return strconv.AppendInt(dst, int64(x.Lo), 10)
	}
	neg := x.Hi < 0
	hi, lo := uint64(x.Hi), x.Lo
	if neg {
		m := x.neg()
		hi, lo = uint64(m.Hi), m.Lo
	}
	// Repeated division of the 128-bit magnitude by 10^19.
	var digits [40]byte
	n := len(digits)
	const chunk = 10000000000000000000 // 10^19
	for hi != 0 {
		qhi := hi / chunk
		r := hi % chunk
		qlo, rem := bits.Div64(r, lo, chunk)
		hi, lo = qhi, qlo
		for i := 0; i < 19; i++ {
			n--
			digits[n] = byte('0' + rem%10)
			rem /= 10
		}
	}
	for lo != 0 {
		n--
		digits[n] = byte('0' + lo%10)
		lo /= 10
	}
	for n < len(digits) && digits[n] == '0' {
		n++
	}
	if neg {
		dst = append(dst, '-')
	}
	return append(dst, digits[n:]...)
}

// Big returns x as a *big.Int.
func (x Int128) Big() *big.Int {
	b := new(big.Int).SetInt64(x.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(x.Lo))
}

// Int128FromBig converts b, failing with `coefficient is outside the i128 range` when it does
// not fit.
func Int128FromBig(b *big.Int) (Int128, error) {
	if b.Cmp(MaxInt128.Big()) > 0 || b.Cmp(MinInt128.Big()) < 0 {
		return Int128{}, verr(msgCoefficientRange)
	}
	m := new(big.Int).Abs(b)
	lo := new(big.Int).And(m, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi := new(big.Int).Rsh(m, 64).Uint64()
	x := Int128{Hi: int64(hi), Lo: lo}
	if b.Sign() < 0 {
		x = x.neg()
	}
	return x, nil
}

// ParseInt128 parses the wire form of §7.5: the text must match `-?(0|[1-9][0-9]*)` (else
// `coefficient must be an integer JSON number`) and lie within the i128 range (else
// `coefficient is outside the i128 range`); `-0` is 0.
func ParseInt128(s string) (Int128, error) { return parseInt128([]byte(s)) }

func parseInt128(tok []byte) (Int128, error) {
	digits := tok
	neg := false
	if len(digits) > 0 && digits[0] == '-' {
		neg = true
		digits = digits[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return Int128{}, verr(msgCoefficientNotInteger)
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return Int128{}, verr(msgCoefficientNotInteger)
		}
	}
	// Accumulate the magnitude in 128 bits, detecting overflow beyond 2^128.
	var hi, lo uint64
	for _, c := range digits {
		h1, l1 := bits.Mul64(lo, 10)
		h2 := hi * 10
		if hi > (^uint64(0))/10 {
			return Int128{}, verr(msgCoefficientRange)
		}
		h, carry := bits.Add64(h1, h2, 0)
		if carry != 0 {
			return Int128{}, verr(msgCoefficientRange)
		}
		l, carry := bits.Add64(l1, uint64(c-'0'), 0)
		h, carry2 := bits.Add64(h, 0, carry)
		if carry2 != 0 {
			return Int128{}, verr(msgCoefficientRange)
		}
		hi, lo = h, l
	}
	// Range: magnitude ≤ 2^127−1, or ≤ 2^127 when negative.
	if hi > 1<<63 || (hi == 1<<63 && (lo != 0 || !neg)) {
		return Int128{}, verr(msgCoefficientRange)
	}
	x := Int128{Hi: int64(hi), Lo: lo}
	if neg {
		x = x.neg()
	}
	return x, nil
}

// MarshalJSON writes a bare JSON number (§7.5).
func (x Int128) MarshalJSON() ([]byte, error) { return x.AppendDecimal(nil), nil }

// UnmarshalJSON reads a JSON number token exactly (§7.5); a failure is a decode error
// wrapping the §7.5 message.
func (x *Int128) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "Int128", func(d *wire.Decoder) error { return decodeInt128(d, x) })
}

func decodeInt128(d *wire.Decoder, dst *Int128) error {
	if ok, err := d.Null(); err != nil {
		return err
	} else if ok {
		return d.NullRequired()
	}
	if !d.IsNumberStart() {
		if d.Next() == 0 {
			_, err := d.NumberToken("")
			return err
		}
		// A string, object, array or literal: consume it so syntax faults inside it come first,
		// then refuse it.
		if err := d.Skip(); err != nil {
			return err
		}
		return d.Wrap(verr(msgCoefficientNotInteger))
	}
	tok, err := d.NumberToken(msgCoefficientNotInteger)
	if err != nil {
		return err
	}
	v, err := parseInt128(tok)
	if err != nil {
		return d.Wrap(err)
	}
	*dst = v
	return nil
}

// MoneyV1 is an amount of money (hive.md §7.4): Coefficient × 10^−Scale, sub-cent precision,
// never a float; lenient.
type MoneyV1 struct {
	// Currency is `currency` (CurrencyCode; ISO 4217 by convention, not checked).
	Currency string
	// Coefficient is `coefficient` (i128).
	Coefficient Int128
	// Scale is `scale` (u8).
	Scale uint8
}

var moneyFields = []string{"currency", "coefficient", "scale"}

func (m *MoneyV1) decode(d *wire.Decoder) error {
	*m = MoneyV1{}
	var seen uint64
	err := d.Object(func(name []byte) error {
		switch string(name) {
		case "currency":
			seen |= 1
			return decodeString(d, &m.Currency)
		case "coefficient":
			seen |= 2
			return decodeInt128(d, &m.Coefficient)
		case "scale":
			seen |= 4
			v, err := d.Uint(255)
			m.Scale = uint8(v)
			return err
		}
		return d.Skip()
	})
	if err != nil {
		return err
	}
	return d.CheckRequired(seen, 7, moneyFields)
}

func (m *MoneyV1) appendJSON(e *wire.Encoder) {
	e.Open()
	e.Str("currency", m.Currency)
	e.Key("coefficient")
	e.B = m.Coefficient.AppendDecimal(e.B)
	e.Uint("scale", uint64(m.Scale))
	e.Close()
}

// MarshalJSON writes `{"currency":…,"coefficient":N,"scale":N}`.
func (m MoneyV1) MarshalJSON() ([]byte, error) { return wire.MarshalObject(96, m.appendJSON) }

// UnmarshalJSON decodes leniently.
func (m *MoneyV1) UnmarshalJSON(data []byte) error {
	return wire.DecodeDocument(data, "MoneyV1", m.decode)
}

// Rat returns the exact value Coefficient × 10^−Scale.
func (m MoneyV1) Rat() *big.Rat {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(m.Scale)), nil)
	return new(big.Rat).SetFrac(m.Coefficient.Big(), den)
}
