package interp

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Runs that start at once in one directory (a for_each's sub-runs) each
// point latest at themselves without failing: the last one wins.
func TestPointLatestConcurrently(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() { errs <- pointLatest(dir, fmt.Sprintf("run-%d", i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Readlink(filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "latest.tmp*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
