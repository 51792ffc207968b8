//go:build !linux

package shortlived

// hugePages does nothing: transparent huge pages are Linux's.
func hugePages() bool { return false }
