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
)

// maxGraphWidth is the widest a drawn example may be, in pixels at
// Graphviz's default 72 dpi: a graph wider than a screen or two is one
// nobody reads.
const maxGraphWidth = 2500

// TestGraphRenderWidth draws every example with Graphviz and checks the
// picture stays narrow enough to read. Without dot it skips.
func TestGraphRenderWidth(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("graphviz not installed (no dot command); apt-get install graphviz to run this test")
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "playbook.hcl"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
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
	defer func(c string) { dotCommand = c }(dotCommand)
	dotCommand = filepath.Join(t.TempDir(), "no-dot-here")
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
