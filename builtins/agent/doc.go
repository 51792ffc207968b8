// Package agent calls AI agents: it defines the Driver interface and the
// drivers (command, claude-code, codex, gemini, openai, anthropic, and the
// record/replay cassette wrapper), and the response handling every agent
// step needs regardless of driver: JSON extraction (ExtractJSON),
// context-budget enforcement (EnforceBudget) and typed returns (Schema to
// ask for a shape, Decode to check and convert the answer).
//
// Files: config.go builds drivers (New); settings.go is the one list of a
// driver block's settings, which ConfigFrom reads and DriverSchema hands
// to the playbook loader; driver_*.go hold one driver each,
// with process.go running the CLI ones and driver_http.go the HTTP
// transport and its retries; cassette.go records and replays; strict.go
// turns a returns schema into the strict form codex needs; progress.go is
// what drivers tell a call's watcher while it runs (Request.Progress);
// setup.go says what a driver needs of the machine (apl doctor). The fakeserver
// package is a fake model server for tests, and the conformance package
// runs the drivers against the real CLIs pointed at it (make conformance).
//
// agent does not render prompts, read HCL or decide what a failure means
// for the run: the interpreter hands it a finished Request and a cty type,
// and reads the Response, the budgeted text and the decoded value. It never
// prints; API keys are read from the environment at each call and kept out
// of errors, responses and cassettes.
package agent
