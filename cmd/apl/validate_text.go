package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
)

// writeDiags prints diagnostics, every command's the same way: each with a
// snippet of the playbook (pb's files and extra ones, such as test files),
// and starting with its place as FILE:LINE:COL, the form editors and CI
// problem matchers jump to:
//
//	bad.hcl:14:14: Error: Reference to undeclared step
//
//	  14:       goto = "plna"
//
//	There is no step named "plna". Did you mean "plan"?
func writeDiags(w io.Writer, pb *lang.Playbook, diags hcl.Diagnostics, extra ...map[string][]byte) {
	files := pb.Files()
	for _, m := range extra {
		for name, src := range m {
			files[name] = &hcl.File{Bytes: src}
		}
	}
	writeFileDiags(w, files, diags)
}

// writeFileDiags is writeDiags for files that are not a playbook's, such
// as those apl fmt reads.
func writeFileDiags(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) {
	color := false
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		color = os.Getenv("NO_COLOR") == ""
	}
	for _, d := range diags {
		var buf bytes.Buffer
		hcl.NewDiagnosticTextWriter(&buf, files, 100, color).WriteDiagnostic(d)
		out := buf.Bytes()
		if r := d.Subject; r != nil {
			out = onLine.ReplaceAllFunc(out, func(m []byte) []byte {
				if ctx := onLine.FindSubmatch(m)[1]; len(ctx) > 0 {
					return append(append([]byte("  in "), ctx...), ":\n"...)
				}
				return nil
			})
			out = append([]byte(fmt.Sprintf("%s:%d:%d: ", r.Filename, r.Start.Line, r.Start.Column)), out...)
		}
		w.Write(out)
	}
}

// onLine is the line hcl's writer names the file and line on, with the
// block the problem is in, if any; the header says where instead.
var onLine = regexp.MustCompile(`(?m)^  on .+ line \d+(?:, in (.+))?:\n`)
