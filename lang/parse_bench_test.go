package lang

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// BenchmarkParseStdlib measures what parsing the stdlib costs: hcl's lexer
// alone, its parser, and the loader's own parse (ParseConfig).
func BenchmarkParseStdlib(b *testing.B) {
	files, _ := filepath.Glob("../stdlib/playbooks/*/*.hcl")
	more, _ := filepath.Glob("../stdlib/playbooks/*/tests/*.hcl")
	files = append(files, more...)
	var srcs [][]byte
	n := 0
	for _, f := range files {
		s, _ := os.ReadFile(f)
		srcs = append(srcs, s)
		n += len(s)
	}
	b.Logf("%d files, %d bytes", len(files), n)
	for _, mode := range []string{"lex", "parse", "ours"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for i, s := range srcs {
					switch mode {
					case "lex":
						hclsyntax.LexConfig(s, files[i], hcl.Pos{Line: 1, Column: 1})
					case "parse":
						hclsyntax.ParseConfig(s, files[i], hcl.Pos{Line: 1, Column: 1})
					default:
						ParseConfig(s, files[i])
					}
				}
			}
		})
	}
}

// BenchmarkLoadStdlibWarm measures a load of each stdlib playbook with
// its files already parsed (a ParseCache that holds them), which is what
// apl lsp does at each edit but the parse of the edited file: the
// decoding and the checks alone. cpu-ms/op counts every goroutine.
func BenchmarkLoadStdlibWarm(b *testing.B) {
	stdlib := os.DirFS("../stdlib/playbooks")
	for _, name := range []string{"phase-runner", "orchestrator"} {
		b.Run(name, func(b *testing.B) {
			ld := &Loader{Stdlib: stdlib, Parses: NewParseCache(64 << 20)}
			if _, diags := ld.Load("stdlib:" + name); diags.HasErrors() {
				b.Fatal(diags)
			}
			b.ReportAllocs()
			start := processCPU()
			for b.Loop() {
				ld.Load("stdlib:" + name)
			}
			b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// processCPU is the process's user and system time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
