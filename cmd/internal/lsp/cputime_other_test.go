//go:build !unix

package lsp

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
