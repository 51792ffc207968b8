package shortlived

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestMain answers for a child process that TestHeapOnHugePages starts with
// a command's name as its first argument (package init has run by then, as
// in apl): whether init prepared the heap, how many collections ran, how
// many more 60 MB of garbage brought, and the flags of the memory mapping
// that holds a fresh heap object.
func TestMain(m *testing.M) {
	if os.Getenv("SHORTLIVED_CHILD") == "" {
		os.Exit(m.Run())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	atInit := ms.NumGC
	// Larger than the rest of the heap's first 4 MB, which init had taken
	// before hugePages advised what follows.
	obj := make([]byte, 8<<20)
	flags := mappingFlags(uintptr(unsafe.Pointer(&obj[0])))
	// What validating the stdlib allocates, as garbage.
	for range 60 << 10 {
		sink = make([]byte, 1<<10)
	}
	runtime.ReadMemStats(&ms)
	fmt.Printf("prepared=%v collections=%d later=%d flags=%s\n", Prepared, atInit, ms.NumGC-atInit, flags)
	os.Exit(0)
}

var sink []byte

// mappingFlags is the VmFlags line of /proc/self/smaps for the mapping
// that holds addr.
func mappingFlags(addr uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uint64(addr) >= l && uint64(addr) < h
				continue
			}
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(flags)
		}
	}
	return "none"
}

// TestHeapOnHugePages checks that a short-lived command's heap is advised
// for transparent huge pages from the start (smaps' VmFlags "hg"), with no
// collection during package init beyond the one that frees the advised
// span, and none for the garbage of a validate of the
// stdlib; and that other commands, and a GOGC or GOMEMLIMIT the user set,
// leave the heap as Go maps it.
func TestHeapOnHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("transparent huge pages are Linux's")
	}
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("the kernel does not give huge pages on request here (%q, %v)", mode, err)
	}
	for _, tc := range []struct {
		cmd, env string
		huge     bool
	}{
		{"validate", "", true},
		{"fmt", "", true},
		{"run", "", false},
		{"validate", "GOGC=100", false},
		{"validate", "GOMEMLIMIT=1GiB", false},
	} {
		t.Run(tc.cmd+" "+tc.env, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tc.cmd)
			cmd.Env = append(os.Environ(), "SHORTLIVED_CHILD=1", "GOGC=", "GOMEMLIMIT=")
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var prepared bool
			var collections, later int
			var flags string
			if _, err := fmt.Sscanf(string(out), "prepared=%t collections=%d later=%d flags=", &prepared, &collections, &later); err != nil {
				t.Fatalf("child said %q: %v", out, err)
			}
			_, flags, _ = strings.Cut(strings.TrimSpace(string(out)), "flags=")
			huge := strings.Contains(" "+flags+" ", " hg ")
			if prepared != tc.huge || huge != tc.huge {
				t.Errorf("prepared %v, heap mapping's flags %q: want huge pages advised %v", prepared, flags, tc.huge)
			}
			// The collection that frees the advised span is the only one
			// during init: the ballast's allocation starts none.
			if tc.huge && collections > 1 {
				t.Errorf("%d collections during init, want 1 at most", collections)
			}
			if tc.huge && later > 0 {
				t.Errorf("%d collections for 60 MB of garbage, want none", later)
			}
		})
	}
}
