//go:build notemporal

package main

import (
	"errors"

	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/zclconf/go-cty/cty"
)

// errNoTemporal is what the Temporal commands say in a build without
// Temporal (-tags notemporal), which spares every command the start-up
// cost of the Temporal SDK, gRPC and protobuf: their package
// initialisation runs in every process that links them.
var errNoTemporal = exitWith(exitUsage, errors.New("this apl is built without the Temporal engine (-tags notemporal); use an apl built without that tag for --engine temporal and apl worker"))

func (c *runCmd) runTemporal(e *env, inputs map[string]cty.Value, agentCmd []string) error {
	return errNoTemporal
}

func (c *resumeCmd) resumeTemporal(e *env) error { return errNoTemporal }

func (c *workerCmd) Run(e *env) error { return errNoTemporal }

func (c *cancelCmd) Run(e *env) error { return errNoTemporal }

func temporalRunsList(e *env, f temporalFlags, playbook string, asJSON bool) error {
	return errNoTemporal
}

func temporalShow(e *env, f temporalFlags, id string, asJSON bool) error { return errNoTemporal }

func (c *logsCmd) temporalLogs(e *env) error { return errNoTemporal }

func lookupTemporal(f temporalFlags, id string) (string, error) { return "", errNoTemporal }

func (e *env) uiTemporal(f temporalFlags, opts *ui.Options) (close func(), err error) {
	return nil, errNoTemporal
}
