// Command devserver runs Temporal's own server code (temporaltest: the
// frontend, history, matching and worker services over an in-memory
// SQLite store) in a process of its own, for the tests that run apl
// worker and apl run as separate processes against a real server.
//
// It prints one line, "ADDRESS NAMESPACE", once the server serves, and
// stops when its standard input closes or it is sent SIGINT or SIGTERM,
// so that a test that dies takes it down too.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	fmt.Printf("%s %s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-stop:
	case <-eof:
	}
	ts.Stop()
}
