package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

// maxGraphWidth is the widest a drawn example may be, in pixels at
// Graphviz's default 72 dpi: a graph wider than a screen or two is one
// nobody reads.
const maxGraphWidth = 2500

// TestGraphRenderWidth draws every example and stdlib playbook with
// Graphviz and checks the picture stays narrow enough to read. Without dot
// it skips.
func TestGraphRenderWidth(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("graphviz not installed (no dot command); apt-get install graphviz to run this test")
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "playbook.hcl"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	var refs []string
	for _, p := range examples {
		refs = append(refs, filepath.Dir(p))
	}
	for _, name := range stdlibNames(t) {
		refs = append(refs, "stdlib:"+name)
	}
	for _, dir := range refs {
		t.Run(strings.TrimPrefix(filepath.Base(dir), "stdlib:"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"graph", "--format", "svg", dir}, &stdout, &stderr); code != 0 {
				t.Fatalf("apl graph --format svg %s: exit %d: %s", dir, code, stderr.String())
			}
			w, h, err := svgSize(stdout.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.0f × %.0f px", dir, w, h)
			if w > maxGraphWidth {
				t.Errorf("%s draws %.0f px wide, more than %d", dir, w, maxGraphWidth)
			}
		})
	}
}

// svgSize reads an SVG's width and height ("487pt") as pixels at 72 dpi,
// where a point is a pixel.
func svgSize(svg []byte) (w, h float64, err error) {
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = false
	for {
		tok, err := d.Token()
		if err != nil {
			return 0, 0, errors.New("no <svg> element")
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "svg" {
			continue
		}
		for _, a := range el.Attr {
			v, perr := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(a.Value, "pt"), "px"), 64)
			switch a.Name.Local {
			case "width":
				w, err = v, perr
			case "height":
				h, err = v, perr
			}
			if err != nil {
				return 0, 0, err
			}
		}
		return w, h, nil
	}
}

// TestGraphRenderWithoutDot checks that --format png without Graphviz
// says which package to install, with exit code 3.
func TestGraphRenderWithoutDot(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	pb := filepath.Join(dir, "pb.hcl")
	if err := os.WriteFile(pb, []byte("playbook \"p\" {}\nstep \"a\" {\n  shell { command = [\"true\"] }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main([]string{"graph", "--format", "png", pb}, &stdout, &stderr)
	if code != exitInternal {
		t.Errorf("exit %d, want %d", code, exitInternal)
	}
	if !strings.Contains(stderr.String(), "install the graphviz package") {
		t.Errorf("stderr does not name the package to install:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout not empty: %q", stdout.String())
	}
}

// stdlibNames lists the stdlib's playbooks, from its source directory.
func stdlibNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "..", "stdlib", "playbooks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no stdlib playbooks found")
	}
	return names
}

// graphPictures are the drawings committed for the README, by the
// playbook each draws. They are not compared byte for byte (Graphviz
// versions lay out differently): each must name every step and every gate
// rule of its playbook, so a stale one fails.
var graphPictures = map[string]string{
	"spec/phase-runner.svg": "stdlib:phase-runner",
}

// TestGraphPictures checks the README's drawings are up to date; with
// -update (and Graphviz) it draws them again.
func TestGraphPictures(t *testing.T) {
	for file, ref := range graphPictures {
		t.Run(filepath.Base(file), func(t *testing.T) {
			path := filepath.Join("..", "..", filepath.FromSlash(file))
			if *update {
				if _, err := exec.LookPath("dot"); err != nil {
					t.Skip("graphviz not installed (no dot command); apt-get install graphviz to draw " + file)
				}
				var stdout, stderr bytes.Buffer
				if code := Main([]string{"graph", "--format", "svg", ref}, &stdout, &stderr); code != 0 {
					t.Fatalf("apl graph --format svg %s: exit %d: %s", ref, code, stderr.String())
				}
				if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			svg, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; draw it with go test ./cmd/apl -run TestGraphPictures -update (or make graphs)", err)
			}
			if w, _, err := svgSize(svg); err != nil || w > maxGraphWidth {
				t.Errorf("%s: %.0f px wide (%v), more than %d", file, w, err, maxGraphWidth)
			}
			pb, diags := (&lang.Loader{Stdlib: stdlib.FS()}).Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var missing []string
			for _, s := range pb.AllSteps() {
				if !bytes.Contains(svg, []byte(">"+s.Name+"<")) {
					missing = append(missing, "step "+s.Name)
				}
				if s.Gate == nil {
					continue
				}
				for _, r := range s.Gate.Rules {
					if !bytes.Contains(svg, []byte(". "+r.Name+"<")) {
						missing = append(missing, "rule "+s.Name+"."+r.Name)
					}
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s does not draw %s: it is out of date; draw it again with go test ./cmd/apl -run TestGraphPictures -update (or make graphs)", file, strings.Join(missing, ", "))
			}
		})
	}
}
