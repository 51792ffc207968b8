package lang

import (
	"encoding/json"
	"math"
)

// Bound is an upper bound on a figure of a run (agent calls, tokens, cost,
// seconds): a number, or unbounded when nothing in the playbook limits it.
type Bound struct {
	N         float64
	Unbounded bool
}

// Unbounded is the bound of a figure nothing limits.
var Unbounded = Bound{Unbounded: true}

// Exactly is the bound n.
func Exactly(n float64) Bound { return Bound{N: n} }

// Plus is the bound of a sum.
func (b Bound) Plus(o Bound) Bound {
	if b.Unbounded || o.Unbounded {
		return Unbounded
	}
	return Bound{N: b.N + o.N}
}

// Times is the bound of a product. Zero times anything is zero: a body of
// shell steps makes no agent calls however many items run it.
func (b Bound) Times(o Bound) Bound {
	if (!b.Unbounded && b.N == 0) || (!o.Unbounded && o.N == 0) {
		return Bound{}
	}
	if b.Unbounded || o.Unbounded {
		return Unbounded
	}
	return Bound{N: b.N * o.N}
}

// Less reports whether b is below o.
func (b Bound) Less(o Bound) bool {
	switch {
	case b.Unbounded:
		return false
	case o.Unbounded:
		return true
	}
	return b.N < o.N
}

// Min is the smaller bound: a cap applied to a figure.
func (b Bound) Min(o Bound) Bound {
	if o.Less(b) {
		return o
	}
	return b
}

// MarshalJSON writes a number, or the string "unbounded".
func (b Bound) MarshalJSON() ([]byte, error) {
	if b.Unbounded {
		return []byte(`"unbounded"`), nil
	}
	// Cents and seconds read better without float noise.
	return json.Marshal(math.Round(b.N*1e6) / 1e6)
}
