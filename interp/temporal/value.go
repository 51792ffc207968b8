package temporal

import (
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// value is a cty value on the wire: its type and its JSON, so that it
// comes back exactly as it went (a list stays a list, a number keeps its
// digits).
type value struct {
	Type  json.RawMessage `json:"type,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

func encodeValue(v cty.Value) (value, error) {
	if v == cty.NilVal {
		return value{}, nil
	}
	t, err := ctyjson.MarshalType(v.Type())
	if err != nil {
		return value{}, err
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return value{}, err
	}
	return value{Type: t, Value: b}, nil
}

func (w value) decode() (cty.Value, error) {
	if w.Type == nil {
		return cty.NilVal, nil
	}
	t, err := ctyjson.UnmarshalType(w.Type)
	if err != nil {
		return cty.NilVal, fmt.Errorf("value type: %w", err)
	}
	return ctyjson.Unmarshal(w.Value, t)
}

// encodeInputs encodes a run's inputs for its workflow input.
func encodeInputs(inputs map[string]cty.Value) (map[string]value, error) {
	out := make(map[string]value, len(inputs))
	for name, v := range inputs {
		wv, err := encodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		out[name] = wv
	}
	return out, nil
}
