package lang

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

var retrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max", Required: true},
		{Name: "backoff"},
	},
}

// Retry re-runs a step's action after an error, waiting Backoff, doubled
// each time.
type Retry struct {
	Max     int
	Backoff time.Duration
}

func decodeRetryBlock(b *hcl.Block) (*Retry, hcl.Diagnostics) {
	content, diags := b.Body.Content(retrySchema)
	r := &Retry{}
	if a := content.Attributes["max"]; a != nil {
		n, d := constPositiveInt(a)
		diags = append(diags, d...)
		r.Max = n
	}
	if a := content.Attributes["backoff"]; a != nil {
		dur, d := constDuration(a)
		diags = append(diags, d...)
		r.Backoff = dur
	}
	return r, diags
}
