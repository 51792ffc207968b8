//go:build !unix

package agent

import "os/exec"

// ownProcessGroup does nothing where there are no process groups.
func ownProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the process itself; its children cannot be reached.
func killGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}
