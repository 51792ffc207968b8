package agent

import (
	"errors"
	"os"
	"syscall"
)

// spliceChunk is the most one splice moves: a pipe holds 64 KiB unless
// enlarged, so this is many pipefuls.
const spliceChunk = 1 << 20

// spliceFrom moves what the pipe src gives into the file dst with
// splice(2), the pages going from the pipe to the file inside the
// kernel: a large answer is not copied through apl's memory on its way
// to the response artifact. It stops at EOF, after max bytes, or at an
// error. ok is false when splice cannot be used between these two (dst
// not a file splice can write, src not a pipe) and nothing was moved;
// the caller then copies as usual. err is splice's own failure (the file
// could not be written); the pipe failing or closing ends the copy as
// EOF does, as it ends io.Copy.
func spliceFrom(dst, src *os.File, max int64) (n int64, ok bool, err error) {
	rc, err := src.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var wfd int
	if err := wc.Control(func(fd uintptr) { wfd = int(fd) }); err != nil {
		return 0, false, nil
	}
	// A pipe of spliceChunk rather than 64 KiB: a large answer then takes
	// a sixteenth of the splices, and of the wake-ups between the agent
	// writing and apl moving. Where the system refuses (a user's pipe
	// quota), the pipe stays as it is.
	rc.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, spliceChunk) })
	for n < max {
		var moved int64
		var serr error
		rerr := rc.Read(func(rfd uintptr) bool {
			moved, serr = syscall.Splice(int(rfd), nil, wfd, nil, int(min(spliceChunk, max-n)), spliceMove|spliceNonblock)
			return !errors.Is(serr, syscall.EAGAIN) // else wait until the pipe is readable
		})
		if serr == nil && rerr != nil {
			// The pipe failed or was closed under the read (Drain): its
			// end, as for io.Copy.
			return n, true, nil
		}
		if serr != nil {
			if n == 0 && (errors.Is(serr, syscall.EINVAL) || errors.Is(serr, syscall.ENOSYS)) {
				return 0, false, nil
			}
			return n, true, serr
		}
		if moved == 0 {
			return n, true, nil // EOF
		}
		n += moved
	}
	return n, true, nil
}

const (
	fSetPipeSize   = 1031 // F_SETPIPE_SZ
	spliceMove     = 0x1  // SPLICE_F_MOVE
	spliceNonblock = 0x2  // SPLICE_F_NONBLOCK
)
