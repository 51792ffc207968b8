// Package lang loads apl playbooks: it parses HCL files, decodes every block
// into an immutable Playbook, compiles every expr-lang condition once against
// a typed environment, builds the step graph and checks it.
//
// lang never runs anything. Values that depend on a run (prompt templates,
// shell arguments, outputs) stay unevaluated hcl.Expressions; the interp
// package evaluates them against its own run state, using the names and
// functions this package defines (Functions, Scope roots). Every problem is
// an hcl.Diagnostic with a source range; loading keeps going after an error
// and returns a partial Playbook with all diagnostics.
//
// ParseConfig is the HCL parser of every playbook file, test files and
// apl fmt included: it also accepts one-line blocks that hold a nested
// block, which HCL's native syntax does not, and it refuses files nested
// deeper than MaxNesting before HCL's recursive parser sees them.
//
// Loading reads files: the playbook's, its upstream's (extends), its
// sub-playbooks', its prompt files (file()) and its test files. Each must
// lie inside the playbook's Project (its git repository, once symlinks
// are resolved) or a directory the Loader allows, and is read through
// os.Root; any other path is refused with a located diagnostic before
// anything there is read, so a playbook nobody has reviewed can be
// checked without it reaching the rest of the machine.
//
// Test files (NAME_test.hcl beside a playbook) are decoded here too
// (LoadTests), against the playbook they test; interp/playtest runs them.
//
// Each block type has one file named after it (step.go, gate.go, shell.go,
// driver.go, ...) holding its struct, its schema, a package variable, and
// its decoder.
//
// A step's successors (Step.Successors) are the one statement of where
// control can go after it: the graph's edges, the cycle and reachability
// checks, the worst-path planner and the drawings (package draw) all read
// them. A block's address (BlockAddress, SplitAddress) is the one way a
// block is named, by apl explain, apl diff (package diff) and the extends
// diagnostics.
//
// The language reference is spec/language.md.
package lang
