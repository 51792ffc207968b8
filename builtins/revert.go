package builtins

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// git.revert {from, to?, branch, message} → {branch, reverted, commit}: the
// phase runner's ROLLBACK procedure. It records the current state on the
// diagnostic branch, then undoes the commits in from..to (default HEAD) with
// one new commit, so history is preserved; it never resets. reverted lists
// the undone commits oldest first; commit is the new HEAD. With nothing in
// the range, only the branch is created and commit is the unchanged HEAD.
//
// It refuses to start with uncommitted changes to tracked files, which
// would otherwise be folded silently into the rollback commit, and it is
// all or nothing: if the revert conflicts (or the commit is refused, by a
// hook say), the revert is aborted, the branch deleted, and the error
// carries git's explanation. Merge commits in the range cannot be reverted
// this way and fail the same way.
func (g gitFuncs) revert(ctx context.Context, env Env, a args) (cty.Value, error) {
	from, to, err := revArgs(a, true)
	if err != nil {
		return cty.NilVal, err
	}
	branch, err := a.required("branch")
	if err != nil {
		return cty.NilVal, err
	}
	if err := checkRev("branch", branch); err != nil {
		return cty.NilVal, err
	}
	message, err := a.required("message")
	if err != nil {
		return cty.NilVal, err
	}

	dirty, err := g.run(ctx, env, "status", "--porcelain=v1", "--untracked-files=no")
	if err != nil {
		return cty.NilVal, err
	}
	if dirty = strings.TrimSpace(dirty); dirty != "" {
		return cty.NilVal, fmt.Errorf("the working tree has uncommitted changes to tracked files; commit or stash them before rolling back:\n%s", dirty)
	}
	shas, err := g.revList(ctx, env, from, to)
	if err != nil {
		return cty.NilVal, err
	}
	if _, err := g.run(ctx, env, "branch", "--end-of-options", branch); err != nil {
		return cty.NilVal, fmt.Errorf("creating the diagnostic branch: %w", err)
	}
	if len(shas) > 0 {
		if _, err := g.run(ctx, env, "revert", "--no-commit", "--end-of-options", from+".."+to); err != nil {
			what := fmt.Sprintf("reverting %s..%s", from, to)
			if files, _ := g.run(ctx, env, "diff", "--name-only", "--diff-filter=U"); strings.TrimSpace(files) != "" {
				what += " conflicts in " + strings.Join(strings.Split(strings.TrimSpace(files), "\n"), ", ")
			}
			return cty.NilVal, g.undoRevert(ctx, env, branch, fmt.Errorf("%s: %w", what, err))
		}
		if _, err := g.run(ctx, env, "commit", "--allow-empty", "-m", message); err != nil {
			return cty.NilVal, g.undoRevert(ctx, env, branch, fmt.Errorf("committing the rollback: %w", err))
		}
	}
	head, err := g.run(ctx, env, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{
		"branch":   cty.StringVal(branch),
		"reverted": stringList(shas),
		"commit":   cty.StringVal(strings.TrimSpace(head)),
	}), nil
}

// undoRevert puts the repository back as it was before git.revert started
// and says so in the error; if that fails too, both failures are reported,
// since the repository then needs a human.
func (g gitFuncs) undoRevert(ctx context.Context, env Env, branch string, cause error) error {
	// Abort fails harmlessly when nothing is in progress (a merge commit
	// is refused before the revert starts).
	_, abortErr := g.run(ctx, env, "revert", "--abort")
	if abortErr != nil {
		if st, err := g.run(ctx, env, "status", "--porcelain=v1", "--untracked-files=no"); err != nil || strings.TrimSpace(st) != "" {
			return errors.Join(cause, fmt.Errorf("the revert could not be aborted; the repository needs attention: %w", abortErr))
		}
	}
	if _, err := g.run(ctx, env, "branch", "-D", "--end-of-options", branch); err != nil {
		return errors.Join(cause, fmt.Errorf("removing the diagnostic branch %q: %w", branch, err))
	}
	return fmt.Errorf("%w; the revert was aborted and the branch %q removed, so the repository is as it was", cause, branch)
}
