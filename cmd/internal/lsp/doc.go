// Package lsp is apl's language server: the Language Server Protocol over
// stdio for playbooks (apl lsp). It owns the protocol (JSON-RPC 2.0 framed
// by Content-Length headers), the editor's open documents, and the
// translation between LSP positions (0-based lines, UTF-16 characters) and
// HCL ranges (1-based lines, byte offsets).
//
// It does not own the language: diagnostics are lang's, from loading the
// playbook a document belongs to exactly as apl validate does, with the
// editor's unsaved buffers in place of the files on disk. The server
// reads only what that load reads (inside the playbook's project) and the
// playbook files beside an open document, and it executes nothing. The
// one thing it writes is the embedded stdlib, read-only, into the user's
// cache directory, so that go to definition can open its files.
//
// Loads reuse the parse of every file that did not change (a
// lang.ParseCache) and the load of every sub-playbook none of whose files
// changed (lang.Loader.Subs), and at most maxBooks playbooks stay loaded,
// so that an edit costs one decode of one playbook with one file parsed,
// and memory stays bounded however many playbooks are open.
//
// The protocol is written by hand rather than taken from a library: the
// Go LSP libraries on the module proxy are stale (go.lsp.dev/protocol's
// last release is from 2022, github.com/tliron/glsp's from 2024) and
// bring logging and transport dependencies apl does not otherwise need,
// for a server whose wire format is a few hundred lines.
package lsp
