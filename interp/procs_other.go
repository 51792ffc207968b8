//go:build !linux

package interp

// bootTicks is "" where there is no /proc to compare it with.
func bootTicks() string { return "" }
