package agent

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// A rawSink is the file a driver streams its raw output into
// (Request.RawFile): the answer reaches the disk as it arrives and is read
// back once, so it is in memory once, not once as it arrives and once
// more as the caller writes its artifact.
type rawSink struct {
	f    *os.File
	path string
}

func openRaw(path string) (*rawSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, fmt.Errorf("raw output file: %w", err)
	}
	return &rawSink{f: f, path: path}, nil
}

// finish closes the file and returns what it holds, in one slice of its
// size (nil when empty). kept is what a Runner that ignored
// Process.Stdout returned instead: it is written to the file and
// returned as it is.
func (s *rawSink) finish(kept []byte) ([]byte, error) {
	defer s.f.Close()
	if len(kept) > 0 {
		if _, err := s.f.Write(kept); err != nil {
			return kept, fmt.Errorf("raw output file: %w", err)
		}
		return kept, nil
	}
	fi, err := s.f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := s.f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("raw output file: %w", err)
	}
	return b, nil
}

// viewString views b as a string without copying it. b must not change
// afterwards: only bytes read back from a raw file, which nothing else
// holds, are viewed so.
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
