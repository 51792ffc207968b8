package builtins

import (
	"bytes"
	"io"
)

// liveReader passes what a command prints on to a ShellSpec's Live
// callback, a line at a time, as it reads it.
type liveReader struct {
	r      io.Reader
	stderr bool
	live   func(stderr bool, line string)
	part   []byte // a line begun but not ended
}

// reader wraps a command's pipe so that spec.Live sees its lines; the
// pipe itself when Live is not set.
func (spec ShellSpec) reader(r io.Reader, stderr bool) io.Reader {
	if spec.Live == nil {
		return r
	}
	return &liveReader{r: r, stderr: stderr, live: spec.Live}
}

func (l *liveReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := append(l.part, b[:i]...)
		l.part = l.part[:0]
		l.live(l.stderr, string(bytes.TrimSuffix(line, []byte("\r"))))
		b = b[i+1:]
	}
	l.part = append(l.part, b...)
	if err != nil && len(l.part) > 0 {
		// The stream ended (or broke) in the middle of a line.
		l.live(l.stderr, string(l.part))
		l.part = nil
	}
	return n, err
}
