package draw

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Render lays out a DOT graph with Graphviz's dot command, found on PATH,
// and returns the picture in format (svg or png). Without Graphviz the
// error says which package to install.
func Render(dot, format string) ([]byte, error) {
	path, err := exec.LookPath("dot")
	if err != nil {
		return nil, fmt.Errorf("--format %s needs Graphviz's dot command, which is not installed; install the graphviz package (apt-get install graphviz, brew install graphviz, choco install graphviz), or print DOT with --format dot and render it elsewhere", format)
	}
	cmd := exec.Command(path, "-T"+format)
	cmd.Stdin = strings.NewReader(dot)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if msg == "" || !errors.As(err, &ee) {
			msg = err.Error()
		}
		return nil, fmt.Errorf("dot -T%s: %s", format, msg)
	}
	return out.Bytes(), nil
}
