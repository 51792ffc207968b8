package builtins

import (
	"github.com/zclconf/go-cty/cty"
)

// A Param is one named argument of a builtin: the type its value converts
// to, and whether a call must give it.
type Param struct {
	Name     string
	Type     cty.Type
	Required bool
}

// A Signature is what a builtin takes and what it returns, so that a
// playbook's calls can be checked before a run: argument names and types,
// and the type of the output a step's expressions read.
type Signature struct {
	Params []Param
	Result cty.Type
	// Reads is true for a builtin that changes nothing: it reads files or
	// asks git, and may run in a dry run.
	Reads bool
}

// signatures describes every builtin of NewFuncs; a test keeps the two in
// step. A record is any object, which cty cannot name, so it is
// cty.DynamicPseudoType and the builtin checks it.
var signatures = map[string]Signature{
	"file.sha256": {
		Reads:  true,
		Params: []Param{{"path", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"sha256": cty.String, "size": cty.Number}),
	},
	"file.read": {
		Reads:  true,
		Params: []Param{{"path", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"content": cty.String, "exists": cty.Bool}),
	},
	"file.write": {
		Params: []Param{{"path", cty.String, true}, {"content", cty.String, true}, {"mode", cty.String, false}},
		Result: pathBytesType,
	},
	"file.append": {
		Params: []Param{{"path", cty.String, true}, {"content", cty.String, true}},
		Result: pathBytesType,
	},
	"file.symlink": {
		Params: []Param{{"path", cty.String, true}, {"target", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"path": cty.String, "target": cty.String}),
	},
	"jsonl.append": {
		Params: []Param{{"path", cty.String, true}, {"record", cty.DynamicPseudoType, true}},
		Result: cty.Object(map[string]cty.Type{"path": cty.String}),
	},
	"json.read": {
		Reads:  true,
		Params: []Param{{"path", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"value": cty.DynamicPseudoType}),
	},
	"glob": {
		Reads:  true,
		Params: []Param{{"pattern", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"matches": cty.List(cty.String)}),
	},
	"git.head": {
		Reads:  true,
		Result: cty.Object(map[string]cty.Type{"sha": cty.String, "branch": cty.String}),
	},
	"git.status": {
		Reads:  true,
		Result: cty.Object(map[string]cty.Type{"clean": cty.Bool, "files": cty.List(statusFileType)}),
	},
	"git.diff_stat": {
		Reads:  true,
		Params: []Param{{"from", cty.String, false}, {"to", cty.String, false}},
		Result: cty.Object(map[string]cty.Type{
			"summary": cty.String, "files_changed": cty.Number, "insertions": cty.Number, "deletions": cty.Number,
		}),
	},
	"git.log": {
		Reads:  true,
		Params: []Param{{"range", cty.String, false}, {"max", cty.Number, false}},
		Result: cty.Object(map[string]cty.Type{"commits": cty.List(commitType)}),
	},
	"git.commit_range": {
		Reads:  true,
		Params: []Param{{"from", cty.String, true}, {"to", cty.String, false}},
		Result: cty.Object(map[string]cty.Type{"commits": cty.List(cty.String)}),
	},
	"git.revert": {
		Params: []Param{{"from", cty.String, true}, {"to", cty.String, false}, {"branch", cty.String, true}, {"message", cty.String, true}},
		Result: cty.Object(map[string]cty.Type{"branch": cty.String, "reverted": cty.List(cty.String), "commit": cty.String}),
	},
}

var pathBytesType = cty.Object(map[string]cty.Type{"path": cty.String, "bytes": cty.Number})

// Signature returns the signature of the named builtin, if the registry
// holds it and its signature is known (a fake registered by a test has
// none).
func (r Registry) Signature(name string) (Signature, bool) {
	if _, ok := r[name]; !ok {
		return Signature{}, false
	}
	s, ok := signatures[name]
	return s, ok
}

// Args returns the arguments of the named builtin with the type each
// converts to, and the names a call must give; ok is false when the
// signature is unknown. With Result it makes a Registry what lang's
// Loader.Signatures wants, without builtins depending on lang.
func (r Registry) Args(name string) (args map[string]cty.Type, required []string, ok bool) {
	s, ok := r.Signature(name)
	if !ok {
		return nil, nil, false
	}
	args = make(map[string]cty.Type, len(s.Params))
	for _, p := range s.Params {
		args[p.Name] = p.Type
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return args, required, true
}

// Result returns the type of the named builtin's output, or
// cty.DynamicPseudoType when its signature is unknown.
func (r Registry) Result(name string) cty.Type {
	if s, ok := r.Signature(name); ok {
		return s.Result
	}
	return cty.DynamicPseudoType
}
