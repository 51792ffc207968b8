package agent

import "github.com/zclconf/go-cty/cty"

// CheckAnswer reports why an agent's JSON answer would not decode against
// a returns type, as Decode decodes it; nil when it would. It is what
// lang.Loader.DecodeAnswer takes, so that test files reject exactly the
// mocked answers a run would.
func CheckAnswer(answer []byte, returns cty.Type) error {
	_, err := Decode(answer, returns)
	return err
}
