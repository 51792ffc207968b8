package lang

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZSlow(t *testing.T) {
	dir := os.Getenv("SLOWDIR")
	if dir == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(dir + "/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.SplitN(string(b), "\n", 3)
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		done := make(chan struct{})
		start := time.Now()
		go func() {
			(&Loader{}).LoadSources(map[string][]byte{"fuzz.hcl": []byte(s)}, "testdata/valid")
			close(done)
		}()
		select {
		case <-done:
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Logf("%s: %v (%d bytes)", filepath.Base(f), d, len(s))
			}
		case <-time.After(5 * time.Second):
			t.Logf("HANG %s (%d bytes): %q", filepath.Base(f), len(s), s)
		}
	}
}
