package shortlived

import "os"

// Commands are the short-lived commands, by the name apl's first argument
// gives them.
var Commands = map[string]bool{"validate": true, "fmt": true, "plan": true, "graph": true, "explain": true, "diff": true}

// Limit is the heap a short-lived command grows to before it collects
// garbage at all.
const Limit = 128 << 20

// Prepared reports whether init prepared the heap of this process.
var Prepared bool

func init() {
	if len(os.Args) < 2 || !Commands[os.Args[1]] {
		return
	}
	// A GOGC or GOMEMLIMIT the user set is left alone: with it, the heap
	// is collected and reused.
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	Prepared = hugePages()
}
