package shortlived

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// hugeBytes is how much of the heap hugePages backs with huge pages:
// validating the four stdlib playbooks allocates about 50 MB.
const hugeBytes = 64 << 20

// heapChunk is the unit in which Go maps its heap (the runtime's
// pallocChunkBytes).
const heapChunk = 4 << 20

// hugePages asks the kernel to back the next hugeBytes of the heap with
// transparent huge pages, and reports whether it asked. With the
// collector's pacing off, every page the heap touches is a fresh one, and
// on a virtual machine each first touch of a 4 KiB page costs a fault of
// 5-10 µs: 12,000 of them in a cold validate of the four stdlib
// playbooks, a third of its CPU. A 2 MiB page costs one fault for 512 of
// them.
//
// Go maps its heap without MADV_HUGEPAGE, so where the kernel gives huge
// pages only on request (transparent_hugepage/enabled is "madvise", the
// common default), the heap gets none. hugePages allocates hugeBytes
// without touching them (fresh memory is zero already), advises the
// kernel, and collects: the span goes back to the heap as free pages,
// keeping the advice, and the allocations that follow are carved from
// it, lowest address first. The collection comes while the heap holds
// almost nothing but the ballast. Where the kernel gives huge pages
// always, or never, it does nothing.
func hugePages() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return false
	}
	b := make([]byte, hugeBytes)
	// Go maps its heap in chunks of 4 MiB, so the chunk b starts in is
	// heap from its start: pages free there before b come first.
	start := uintptr(unsafe.Pointer(&b[0]))
	from := start &^ (heapChunk - 1)
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, from, start-from+hugeBytes, syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	runtime.GC()
	return errno == 0
}
