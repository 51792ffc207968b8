package lang

import (
	"os"
	"path/filepath"
	"testing"

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
