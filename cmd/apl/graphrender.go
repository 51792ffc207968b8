package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// dotCommand is Graphviz's layout program; tests point it elsewhere.
var dotCommand = "dot"

// renderDot lays out a DOT graph with Graphviz and returns the image in
// format (svg or png). Without Graphviz it says which package to install,
// with exit code 3: apl cannot do the work itself.
func renderDot(src, format string) ([]byte, error) {
	path, err := exec.LookPath(dotCommand)
	if err != nil {
		return nil, exitWith(exitInternal, fmt.Errorf("--format %s needs Graphviz's dot command, which is not installed; install the graphviz package (apt-get install graphviz, brew install graphviz, choco install graphviz), or print DOT with --format dot and render it elsewhere", format))
	}
	cmd := exec.Command(path, "-T"+format)
	cmd.Stdin = strings.NewReader(src)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if msg == "" || !errors.As(err, &ee) {
			msg = err.Error()
		}
		return nil, exitWith(exitInternal, fmt.Errorf("dot -T%s: %s", format, msg))
	}
	return out.Bytes(), nil
}

// writeOutput writes a graph to the --output file.
func writeOutput(name string, data []byte) error {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return exitWith(exitInternal, err)
	}
	return nil
}
