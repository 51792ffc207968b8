package proc

import (
	"os"
	"syscall"
)

// pipe makes a pipe whose parent end (the write end if in, else the read
// end) is non-blocking and in the runtime's poller, so that Drain can
// close it under a blocked read, and whose child end stays blocking and
// out of the poller: os.Pipe would register both ends and exec would set
// the child's back to blocking, four system calls a pipe that a step
// pays for nothing.
func pipe(in bool) (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	parent := fds[0]
	if in {
		parent = fds[1]
	}
	if err := syscall.SetNonblock(parent, true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}
