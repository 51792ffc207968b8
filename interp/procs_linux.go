package interp

import (
	"strconv"
	"syscall"
	"unsafe"
)

// clockBoottime is CLOCK_BOOTTIME, the clock the kernel stamps a process
// with when it forks it.
const clockBoottime = 7

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, which Linux
// fixes at 100 on every architecture Go supports there.
const userHZ = 100

// bootTicks is the boot clock now in the clock ticks of /proc/PID/stat's
// start time (as the kernel converts it: nanoseconds divided down, not
// rounded); "" where the clock cannot be read.
func bootTicks() string {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return ""
	}
	ns := uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
	return strconv.FormatUint(ns/(1e9/userHZ), 10)
}
