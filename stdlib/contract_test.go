package stdlib_test

import (
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

// TestContractsStandAlone checks that every stdlib prompt names each field
// its step's returns requires, whatever driver its agent names: apl run
// --agent-cmd sends every agent step through a command, which is handed
// only the prompt, so the stdlib cannot count on a driver that sends the
// returns schema (lang.SchemaSender).
func TestContractsStandAlone(t *testing.T) {
	for _, n := range stdlib.Names() {
		t.Run(n, func(t *testing.T) {
			ld := loader()
			// The driver schema without its SendsSchema method: no driver
			// excuses a prompt.
			ld.Drivers = struct{ lang.DriverSchema }{ld.Drivers}
			_, diags := ld.Load(lang.StdlibPrefix + n)
			for _, d := range diags {
				t.Errorf("%s", d)
			}
		})
	}
}
