//go:build !unix

package agent

import "os/exec"

// ownProcessGroup does nothing where there are no process groups; the
// default cancellation kills the process itself.
func ownProcessGroup(cmd *exec.Cmd) {}
