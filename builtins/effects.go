package builtins

import "github.com/zclconf/go-cty/cty"

// Declared is what a builtin declares of itself for a run that must not
// change the world (apl run --dry-run): whether it only reads, and the
// type of the object it returns, from which a stand-in result is made.
type Declared struct {
	// Reads is true for a builtin that changes nothing: it reads files or
	// asks git, and may run in a dry run.
	Reads bool
	// Result is the type of the builtin's result object.
	Result cty.Type
}

// Declaration returns what the builtin name declares of itself. A builtin
// it does not know (one a caller registered) is taken to write, with a
// result of any type: the safe guess for a run that must change nothing.
func Declaration(name string) Declared {
	sig, ok := signatures[name]
	if !ok {
		return Declared{Result: cty.DynamicPseudoType}
	}
	return Declared{Reads: sig.Reads, Result: sig.Result}
}
