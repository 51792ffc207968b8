//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts cmd in a new process group and makes cancellation
// kill the whole group, not just its leader.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
