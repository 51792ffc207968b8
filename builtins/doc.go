// Package builtins holds the actions a playbook step can perform: running
// commands (Shell), and the file, JSON, hash, glob and git helpers that the
// stdlib protocols need (the Funcs registry, reached from HCL as
// `call "NAME" { ... }`). Agent drivers live in the subpackage agent.
//
// builtins never parses HCL and never decides control flow: it is handed
// already-evaluated values by the interpreter and returns results. The
// interpreter reaches it only through the types in this package, so a test
// can swap any builtin for a fake.
//
// # Commands
//
// Shell.Run runs a ShellSpec (an argv, or a bash script built with Script,
// which quotes every interpolated value for its lexical context) inside the
// project directory, in its own process group, with a timeout, capped
// output and a blocklist Policy.
// A non-zero exit is a result; only refusals, failures to start, timeouts,
// cancellation and unparsable output are errors.
//
// # Funcs
//
// Every Func takes an object of named arguments and returns an object.
// Relative paths resolve against Env.Workdir and may not leave it (see
// ResolvePath); results name paths relative to it, slash-separated.
//
//	file.sha256  {path}                         → {sha256, size}
//	file.read    {path}                         → {content, exists}
//	file.write   {path, content, mode?}         → {path, bytes}   (atomic)
//	file.append  {path, content}                → {path, bytes}
//	file.symlink {path, target}                 → {path, target}  (atomic; replaces only a symlink)
//	jsonl.append {path, record}                 → {path}
//	json.read    {path}                         → {value}
//	glob         {pattern}                      → {matches}       ("**" allowed)
//	git.head     {}                             → {sha, branch}
//	git.status   {}                             → {clean, files: [{path, status}]}
//	git.diff_stat {from?, to?}                  → {summary, files_changed, insertions, deletions}
//	git.log      {range?, max?}                 → {commits: [{sha, subject}]}
//	git.commit_range {from, to?}                → {commits: [sha]}  (oldest first)
//	git.revert   {from, to?, branch, message}   → {branch, reverted, commit}
//
// git.revert is the phase runner's ROLLBACK: a diagnostic branch at HEAD, then one
// commit undoing from..to. Nothing here ever runs `git reset --hard`.
//
// JSONToCty and CtyToJSON convert between JSON and cty values of any shape;
// WriteFileAtomic is the temp-file, fsync, rename write the run state needs
// too.
package builtins
