package main

import (
	"os"

	"github.com/apl-lang/apl/cmd/internal/lsp"
)

type lspCmd struct{}

// Run serves the Language Server Protocol on stdin and stdout until the
// editor says exit. What the server has to report that is no reply goes
// to stderr, which editors keep as the server's log.
func (c *lspCmd) Run(e *env) error {
	opts := lsp.Options{Loader: *e.loader, Log: e.stderr}
	if os.Getenv("GOGC") == "" {
		opts.HeapHeadroom = lsp.HeapHeadroom // a GOGC the user set is left alone
	}
	s := lsp.NewServer(opts)
	if err := s.Serve(os.Stdin, e.stdout); err != nil {
		return exitWith(exitFailed, err)
	}
	return nil
}
