//go:build !linux

package builtins

import "context"

// execute starts argv in dir, waits for it and reads its output as Run
// describes, filling in res; it returns why the command was stopped (a
// timeout, ctx) or could not be started or waited for.
func (s *Shell) execute(ctx context.Context, spec ShellSpec, argv []string, dir string, res *ShellResult) error {
	return s.executePipes(ctx, spec, argv, dir, res)
}
