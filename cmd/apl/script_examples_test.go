package main

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExampleScripts runs the scripts in testdata/script-examples, which
// drive the playbooks of examples/ through the CLI offline: against fake
// agent programs, or by replaying the cassettes the examples ship. They
// find the examples in $EXAMPLES.
func TestExampleScripts(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	p := scriptParams(filepath.Join("testdata", "script-examples"))
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		e.Setenv("EXAMPLES", examples)
		return setup(e)
	}
	testscript.Run(t, p)
}
