//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts cmd in a new process group, so that killGroup
// reaches everything it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to cmd's whole process group. ESRCH, nothing
// left, is the usual case once the process has exited.
func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
