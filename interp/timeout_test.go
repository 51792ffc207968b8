package interp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
)

// shellFunc is a ShellRunner made of a function.
type shellFunc func(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error)

func (f shellFunc) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	return f(ctx, spec)
}

// A step that runs out of time says so once: which step, which limit,
// where it was set and how to change it, and nothing of the deadline
// errors beneath ("command timed out after 1m0s", "context deadline
// exceeded").
func TestTimeoutMessageNamesLimitAndWhereItIsSet(t *testing.T) {
	for _, tc := range []struct {
		name, timeout string
		want          string
	}{
		{"default", "", `step "slow" (test.hcl:2,1-12): timed out after 1m0s, the default limit of a shell command; to allow longer, set a timeout in step "slow", e.g. timeout = "5m"`},
		{"attribute", `timeout = "20ms"`, `step "slow" (test.hcl:2,1-12): timed out after 20ms, the limit set by step "slow"'s timeout attribute; raise it to allow longer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := load(t, fmt.Sprintf(`playbook "t" {}
step "slow" {
  %s
  shell { command = ["sleep", "100"] }
}
`, tc.timeout))
			sh := shellFunc(func(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
				res := builtins.ShellResult{ExitCode: -1}
				if spec.Timeout == 0 {
					// What builtins.Shell says at its default limit.
					return res, fmt.Errorf("shell: %w after %s", builtins.ErrTimeout, builtins.DefaultTimeout)
				}
				<-ctx.Done()
				return res, fmt.Errorf("shell: command stopped: %w", ctx.Err())
			})
			res, err := Start(context.Background(), pb, "t", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tc.want {
				t.Errorf("reason:\n got %s\nwant %s", res.Reason, tc.want)
			}
			for _, bad := range []string{"deadline exceeded", "command timed out"} {
				if strings.Contains(res.Reason, bad) {
					t.Errorf("reason %q says %q", res.Reason, bad)
				}
			}
		})
	}
}
