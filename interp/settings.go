package interp

import (
	"github.com/apl-lang/apl/lang"
)

// fixSettings works out the playbook's settings (lang.Setting: caps,
// concurrencies, limits and time limits written over inputs) from the
// run's inputs, once, and records them in the state. A resumed run takes
// the recorded values, so that its caps stay what they were when it
// started even if the playbook changed since (apl resume --force); a
// setting the run did not record, new in the playbook, is worked out from
// the run's recorded inputs.
func (r *run) fixSettings() error {
	if r.st.Meta.Settings == nil {
		r.st.Meta.Settings = map[string]lang.Fixed{}
	}
	r.fixed = make(lang.FixedSettings, len(r.pb.Settings))
	for _, s := range r.pb.Settings {
		if f, ok := r.st.Meta.Settings[s.Name]; ok && f.Fits(s.Kind) {
			r.fixed[s] = f
			continue
		}
		f, err := s.Eval(r.inputs)
		if err != nil {
			input := ""
			if len(s.Inputs) > 0 {
				input = s.Inputs[0]
			}
			return &InputError{Input: input, Msg: err.Error()}
		}
		r.fixed[s] = f
		r.st.Meta.Settings[s.Name] = f
	}
	return nil
}
