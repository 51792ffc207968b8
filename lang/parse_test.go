package lang

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// oneLineSrc has one-line blocks, which the loader parses by rewriting the
// file, followed by multi-line steps.
const oneLineSrc = `playbook "x" { description = "One-line blocks, then ranges." }

step "a" { shell { command = ["a"] } }

step "b" { shell { command = ["b"] } }

step "c" {
  when = "steps.a.exit_code == 0"
  shell {
    command = ["c"]
  }
  gate {
    otherwise {
      goto = "a"
      max  = 1
      on_exhausted { fail = "halt" }
    }
  }
}
`

// TestOneLineBlockDeclRanges checks that the ranges diagnostics use are
// those of the file as written.
func TestOneLineBlockDeclRanges(t *testing.T) {
	pb := loadString(t, oneLineSrc)
	for name, line := range map[string]int{"a": 3, "b": 5, "c": 7} {
		if got := pb.Step(name).DeclRange.Start.Line; got != line {
			t.Errorf("step %s: DeclRange line %d, want %d", name, got, line)
		}
	}
	if got := pb.DeclRange.Start.Line; got != 1 {
		t.Errorf("playbook DeclRange line %d, want 1", got)
	}
}

// TestOneLineBlockRuntimeRanges checks the ranges the interpreter reports
// run-time failures with (actions, expressions, conditions, gates, edges):
// after a one-line block they must still be lines of the file as written.
func TestOneLineBlockRuntimeRanges(t *testing.T) {
	pb := loadString(t, oneLineSrc)
	a, b, c := pb.Step("a"), pb.Step("b"), pb.Step("c")
	tests := []struct {
		what string
		rng  hcl.Range
		line int
	}{
		{"a's shell action", a.Action.Range(), 3},
		{"a's command", a.Action.(*Shell).Command.Range(), 3},
		{"b's shell action", b.Action.Range(), 5},
		{"b's command", b.Action.(*Shell).Command.Range(), 5},
		{"c's when", c.When.Range, 8},
		{"c's shell action", c.Action.Range(), 9},
		{"c's command", c.Action.(*Shell).Command.Range(), 10},
		{"c's gate", c.Gate.DeclRange, 12},
		{"c's goto edge", c.Edges[len(c.Edges)-1].Range, 14},
	}
	for _, tt := range tests {
		if tt.rng.Start.Line != tt.line {
			t.Errorf("%s: line %d, want %d", tt.what, tt.rng.Start.Line, tt.line)
		}
	}
}

// TestParseConfigOneLine checks the one-line forms ParseConfig accepts, and
// that every range of the tree is a place in the file as written: its line
// and column agree with its byte offset.
func TestParseConfigOneLine(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		split bool // whether the text parsed differs from src
	}{
		{"space", `step "s" { shell { command = ["/bin/true"] } }` + "\n", true},
		{"no space", `step "u" {shell {command = ["/bin/true"]}}` + "\n", true},
		{"two levels", `a { b { c { x = 1 } } }` + "\n", true},
		{"two levels no space", `a {b {c {x = 1}}}`, true},
		{"two nested blocks", `a { b { x = 1 } c "l" { y = 2 } }` + "\n", true},
		{"after multi-line", "a {\n  x = 1\n}\nb { c { y = \"é\" } }\nd {\n  e = 2\n}\n", true},
		{"strings with braces", `a { b { x = ["{ c { } }", "}}", "{"] } }` + "\n", true},
		{"template braces", `a { b { x = "${ {k = "}"}.k }%{ if true }{%{ endif }" } }` + "\n", true},
		{"object is not a block", `a { x = { b = { c = 1 } } }` + "\n", false},
		{"one-line attribute only", `a { x = 1 }` + "\n", false},
		{"heredoc", "a {\n  x = <<EOT\n  b { c { } }\n  EOT\n}\nd { e { f = 1 } }\n", true},
		{"block comment", `a { /* { */ b { x = 1 } /* } */ }` + "\n", true},
		{"line comment", "a { b { x = 1 } # }\n}\n", true},
		{"line comment slashes", "a { b { x = 1 } // c { d { } }\n}\n", true},
		{"body on the next lines", "a { b {\n    x = 1\n  }\n}\n", true},
		{"multi-line", "a {\n  b { x = 1 }\n}\n", false},
		{"nested one-liner in a multi-line body", "a {\n  b { c { x = 1 } }\n}\n", true},
		{"labels", `a "l1" l2 { b "l3" { x = 1 } }` + "\n", true},
		{"nested block after a heredoc", "a { x = <<EOT\nEOT\nb { y = 1 } }\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			text, f, diags := ParseConfig(src, "f.hcl")
			if diags.HasErrors() {
				t.Fatalf("diagnostics: %s\ntext parsed:\n%s", diags, text)
			}
			if split := string(text) != tt.src; split != tt.split {
				t.Errorf("split = %v, want %v; text parsed:\n%s", split, tt.split, text)
			}
			if string(f.Bytes) != tt.src {
				t.Errorf("file Bytes are not the source")
			}
			n := 0
			forEachRange(reflect.ValueOf(f.Body), func(r hcl.Range) {
				n++
				for _, p := range []hcl.Pos{r.Start, r.End} {
					if want := posOf(src, p.Byte); p != want {
						t.Errorf("range %s: position %+v, want %+v (%q)", r, p, want, src[:min(max(p.Byte, 0), len(src))])
					}
				}
			})
			if n == 0 {
				t.Error("no ranges checked")
			}
		})
	}
}

// TestParseConfigOneLineDiagnostics checks that diagnostics of a file with
// one-line blocks point where the problem is in the file as written.
func TestParseConfigOneLineDiagnostics(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
	}{
		{"after the blocks", "playbook \"x\" {}\n\nstep \"s\" { shell { command = [\"true\"] } }\n\nstep \"t\" {\n  x = \n}\n", 6, 7},
		{"inside a one-line block", "a { b { x = [1, ] } c { y = } }\n", 1, 29},
		{"inside, no space", "a {b {x = 1}c {y = }}\n", 1, 20},
		{"after a nested block on its line", "a {\n  b { c { x = 1 } } y = 2\n}\n", 2, 21},
		{"argument before a block", "a { x = 1 b { y = 2 } }\n", 1, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, diags := ParseConfig([]byte(tt.src), "f.hcl")
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			for _, d := range diags {
				if d.Summary == "Argument definition required" {
					t.Errorf("the one-line form is rejected: %s", d)
				}
			}
			s := diags[0].Subject
			if s.Start.Line != tt.line || s.Start.Column != tt.col {
				t.Errorf("first diagnostic at %d:%d, want %d:%d: %s", s.Start.Line, s.Start.Column, tt.line, tt.col, diags)
			}
			if want := posOf([]byte(tt.src), s.Start.Byte); s.Start != want {
				t.Errorf("diagnostic start %+v, want %+v", s.Start, want)
			}
		})
	}
}

// TestParseConfigTooDeep checks that files nested past MaxNesting are
// refused with a located error instead of overflowing the stack.
func TestParseConfigTooDeep(t *testing.T) {
	const n = 100_000
	tests := []struct {
		name string
		src  string
	}{
		{"lists", "x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"},
		{"unclosed lists", "x = " + strings.Repeat("[", n) + "\n"},
		{"objects", "x = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n"},
		{"parentheses", "x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n"},
		{"blocks", strings.Repeat("a {\n", n) + strings.Repeat("}\n", n)},
		{"one-line blocks", strings.Repeat("a { ", n) + "x = 1" + strings.Repeat(" }", n) + "\n"},
		{"templates", "x = " + strings.Repeat(`"${`, n) + "1" + strings.Repeat(`}"`, n) + "\n"},
		{"template directives", "x = \"" + strings.Repeat(`%{ if true }`, n) + strings.Repeat(`%{ endif }`, n) + "\"\n"},
		{"unary operators", "x = " + strings.Repeat("!", n) + "true\n"},
		{"negations", "x = " + strings.Repeat("- ", n) + "1\n"},
		{"conditionals", "x = " + strings.Repeat("a ? b : ", n) + "c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, f, diags := ParseConfig([]byte(tt.src), "deep.hcl")
			if f != nil {
				t.Error("a file is returned")
			}
			if len(diags) == 0 || diags[0].Summary != "Nesting too deep" {
				t.Fatalf("diagnostics %s, want Nesting too deep", diags)
			}
			s := diags[0].Subject
			if s == nil || s.Start.Byte > 13*(MaxNesting+2) {
				t.Errorf("subject %v, want the first bracket past the limit", s)
			}
		})
	}
	// As deep as allowed still parses.
	ok := "x = " + strings.Repeat("[", MaxNesting-1) + strings.Repeat("]", MaxNesting-1) + "\n"
	if _, _, diags := ParseConfig([]byte(ok), "ok.hcl"); diags.HasErrors() {
		t.Errorf("%d levels: %s", MaxNesting-1, diags)
	}
}

// TestOneLineNestedBlocksLoad loads a playbook of one-line blocks in every
// form: no space, two levels, two nested blocks on a line.
func TestOneLineNestedBlocksLoad(t *testing.T) {
	pb := loadString(t, `playbook "x" {}
step "a" {shell {command = ["a"]}}
step "b" { shell { command = ["b", "{ }"] } gate { otherwise { log = "}" } } }
step "c" {
  shell { command = ["c"] }
}
`)
	for name, line := range map[string]int{"a": 2, "b": 3, "c": 4} {
		if got := pb.Step(name).DeclRange.Start.Line; got != line {
			t.Errorf("step %s: DeclRange line %d, want %d", name, got, line)
		}
	}
	if r := pb.Step("b").Gate.DeclRange; r.Start.Line != 3 || r.Start.Column != 45 {
		t.Errorf("gate of b at %d:%d, want 3:45", r.Start.Line, r.Start.Column)
	}
}

// forEachRange calls fn with every hcl.Range reachable from v.
func forEachRange(v reflect.Value, fn func(hcl.Range)) {
	seen := map[ptrKey]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[ptrKey{v.UnsafePointer(), v.Type()}] {
				return
			}
			seen[ptrKey{v.UnsafePointer(), v.Type()}] = true
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.Type() == rangeType {
				fn(v.Interface().(hcl.Range))
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(v)
}

// posOf is the position of a byte offset in src, columns counted in
// runes (the tests' sources have no combining characters).
func posOf(src []byte, off int) hcl.Pos {
	off = min(max(off, 0), len(src))
	line, start := 1, 0
	for i, c := range src[:off] {
		if c == '\n' {
			line, start = line+1, i+1
		}
	}
	return hcl.Pos{Line: line, Column: utf8.RuneCount(src[start:off]) + 1, Byte: off}
}

// TestOneLine1000Blocks is the regression test of a file of 1,000 one-line
// blocks with a nested block: it was re-parsed once per block and, past
// 1,000 re-parses, failed with a false error.
func TestOneLine1000Blocks(t *testing.T) {
	src := oneLinePlaybook(1000)
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"oneline.hcl": src}, t.TempDir())
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := pb.Step("s999").DeclRange.Start.Line; got != 1001 {
		t.Errorf("step s999 on line %d, want 1001", got)
	}
}
