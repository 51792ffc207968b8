// Package playtest runs the tests of a playbook's *_test.hcl files (see
// lang.LoadTests): each test is one run of the playbook through interp's
// public API, in a scratch directory, with its agent calls, and any shell
// or call steps it mocks, answered by fakes (an agent step's per agent,
// so that its fallback agents answer in turn). No agent is ever called and
// nothing reaches the network; shell and call steps without a mock run for
// real in the scratch directory, as go test runs the code it tests. With
// Options.NoExec no program runs at all: a shell step or git.* call
// without a mock fails its test.
//
// playtest owns the fakes and the comparison of a run with a test's
// expectations. It does not parse test files (lang does) and prints
// nothing (cmd/apl does).
package playtest
