//go:build !linux

package proc

import "os"

// pipe is os.Pipe where pipe2 is missing: both ends in the poller.
func pipe(in bool) (r, w *os.File, err error) { return os.Pipe() }
