package main

import (
	"strings"
	"testing"
)

// apl worker refuses a negative --max-steps before it dials the cluster.
func TestWorkerMaxStepsNegative(t *testing.T) {
	e, _, _ := testEnv()
	err := (&workerCmd{TemporalAddress: "localhost:1", MaxSteps: -1}).Run(e)
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), "--max-steps -1") {
		t.Errorf("apl worker --max-steps -1: exit %d, %v", exitOf(err), err)
	}
}
