package shortlived

import "os"

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
	// Allocated first, it is live in the collection its allocation
	// starts, and no other starts before hugePages's.
	ballast = make([]byte, ballastBytes)
	hugePages()
	Prepared = true
}
