package shortlived

import (
	"os"
	_ "unsafe" // for go:linkname
)

// Commands are the short-lived commands, by the name apl's first argument
// gives them.
var Commands = map[string]bool{"validate": true, "fmt": true, "plan": true, "graph": true, "explain": true, "diff": true}

// Limit is the heap a short-lived command grows to before it collects
// garbage at all, when called in-process (cmd/apl's shortLivedGC).
const Limit = 128 << 20

// Prepared reports whether init prepared the heap of this process: the
// ballast is in place, and the collector's pacing must be left as it is.
var Prepared bool

// ballastBytes is the size of ballast.
const ballastBytes = 128 << 20

// ballast is a heap object that is never touched, so never in memory.
// Go starts a collection when the heap has grown by GOGC percent (100) of
// what the last one found live, 4 MB at least. With the ballast live, the
// first collection comes after about 100 MB allocated, which the stdlib's
// playbooks do not reach; after it, a playbook whose live heap is L
// collects at about 2L + 256 MB of heap, that is 2L + 128 MB in memory.
// Turning the pacing off under a soft limit instead, as an in-process
// command does, collects no sooner for the stdlib but again and again
// once a large playbook's live heap nears the limit: a 10,000-step
// playbook took twice the CPU it takes with Go's default.
var ballast []byte

func init() {
	if len(os.Args) < 2 || !Commands[os.Args[1]] {
		return
	}
	// A GOGC or GOMEMLIMIT the user set is left alone, with the heap as
	// Go maps it.
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// A 32-bit address space has little room for what is never used.
	if ^uint(0)>>63 == 0 {
		return
	}
	// The pacing is off while the ballast and hugePages's span are
	// allocated: the first would start a collection of its own, the heap
	// being past its first goal (4 MB), and hugePages's would wait for it
	// and run another. hugePages's collection is then the only one, and
	// finds the ballast live; where it does not collect, the first
	// allocation after init does. The cycle saved cost about 1 ms and 100
	// page faults of a cold validate, before main runs.
	gcPercent := setGCPercent(-1)
	ballast = make([]byte, ballastBytes)
	hugePages()
	setGCPercent(gcPercent)
	Prepared = true
}

// setGCPercent is runtime/debug.SetGCPercent without runtime/debug, whose
// imports (fmt and more) would put this package's init after the packages
// that allocate in theirs. The runtime provides it under that name for
// runtime/debug (a push linkname), so a Go release that renamed it would
// fail to build apl rather than run it wrongly.
//
//go:linkname setGCPercent runtime/debug.setGCPercent
func setGCPercent(percent int32) int32
