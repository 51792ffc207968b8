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

// reads says, for every builtin of Funcs, whether it only reads. The
// result types are the signatures' (signature.go). A test keeps it
// complete.
var reads = map[string]bool{
	"file.sha256": true, "file.read": true, "file.write": false, "file.append": false,
	"jsonl.append": false, "json.read": true, "glob": true,
	"git.head": true, "git.status": true, "git.diff_stat": true, "git.log": true,
	"git.commit_range": true, "git.revert": false,
}

// Declaration returns what the builtin name declares of itself. A builtin
// it does not know (one a caller registered) is taken to write, with a
// result of any type: the safe guess for a run that must change nothing.
func Declaration(name string) Declared {
	sig, known := signatures[name]
	r, ok := reads[name]
	if !ok || !known {
		return Declared{Result: cty.DynamicPseudoType}
	}
	return Declared{Reads: r, Result: sig.Result}
}
