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

var pathBytesType = cty.Object(map[string]cty.Type{"path": cty.String, "bytes": cty.Number})

// declared describes every builtin of Funcs. A test keeps it complete.
var declared = map[string]Declared{
	"file.sha256":  {true, cty.Object(map[string]cty.Type{"sha256": cty.String, "size": cty.Number})},
	"file.read":    {true, cty.Object(map[string]cty.Type{"content": cty.String, "exists": cty.Bool})},
	"file.write":   {false, pathBytesType},
	"file.append":  {false, pathBytesType},
	"jsonl.append": {false, cty.Object(map[string]cty.Type{"path": cty.String})},
	"json.read":    {true, cty.Object(map[string]cty.Type{"value": cty.DynamicPseudoType})},
	"glob":         {true, cty.Object(map[string]cty.Type{"matches": cty.List(cty.String)})},

	"git.head":         {true, cty.Object(map[string]cty.Type{"sha": cty.String, "branch": cty.String})},
	"git.status":       {true, cty.Object(map[string]cty.Type{"clean": cty.Bool, "files": cty.List(statusFileType)})},
	"git.diff_stat":    {true, cty.Object(map[string]cty.Type{"summary": cty.String, "files_changed": cty.Number, "insertions": cty.Number, "deletions": cty.Number})},
	"git.log":          {true, cty.Object(map[string]cty.Type{"commits": cty.List(commitType)})},
	"git.commit_range": {true, cty.Object(map[string]cty.Type{"commits": cty.List(cty.String)})},
	"git.revert":       {false, cty.Object(map[string]cty.Type{"branch": cty.String, "reverted": cty.List(cty.String), "commit": cty.String})},
}

// Declaration returns what the builtin name declares of itself. A builtin
// it does not know (one a caller registered) is taken to write, with a
// result of any type: the safe guess for a run that must change nothing.
func Declaration(name string) Declared {
	if d, ok := declared[name]; ok {
		return d
	}
	return Declared{Result: cty.DynamicPseudoType}
}
