// Package agent calls AI agents: it defines the Driver interface and the
// drivers (command, claude-code, codex, gemini, openai, anthropic, and the
// record/replay wrappers), and the response handling every agent step needs
// regardless of driver: JSON extraction and context-budget enforcement.
//
// agent does not render prompts or check returns types against a playbook;
// the interpreter hands it a finished Request and reads the Response.
package agent
