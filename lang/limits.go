package lang

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var limitsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "timeout"},
		{Name: "max_retries"},
		{Name: "max_tokens"},
		{Name: "max_cost_usd"},
	},
}

var circuitBreakerSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "no_progress"},
		{Name: "same_error"},
		{Name: "cooldown"},
		{Name: "open_on"},
	},
}

var stateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true},
	},
}

// Limits are the run's caps.
type Limits struct {
	Timeout    time.Duration
	MaxRetries int
	MaxTokens  int
	MaxCostUSD float64
	DeclRange  hcl.Range
}

// CircuitBreaker opens after NoProgress consecutive steps without progress
// or SameError consecutive identical errors; after Cooldown a resumed run
// tries one step (half-open).
type CircuitBreaker struct {
	NoProgress int
	SameError  int
	Cooldown   time.Duration
	// OpenOn are error kinds (ErrorKinds) that open the breaker at once
	// when a step fails with one: a step's or a phase's token cap or
	// time limit (budget, timeout) rather than a streak.
	OpenOn    []string
	DeclRange hcl.Range
}

// decodeLimitsBlocks reads the run's caps: wall clock, total retries,
// tokens and cost.
func (l *loader) decodeLimitsBlocks(blocks []*hcl.Block) hcl.Diagnostics {
	b, diags := singleBlock("limits", blocks, "")
	if b != nil {
		lim := &Limits{DeclRange: b.DefRange}
		content, d := b.Body.Content(limitsSchema)
		diags = append(diags, d...)
		if a := content.Attributes["timeout"]; a != nil {
			lim.Timeout, d = constDuration(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["max_retries"]; a != nil {
			lim.MaxRetries, d = constPositiveInt(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["max_tokens"]; a != nil {
			lim.MaxTokens, d = constPositiveInt(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["max_cost_usd"]; a != nil {
			lim.MaxCostUSD, d = constPositiveFloat(a)
			diags = append(diags, d...)
		}
		l.pb.Limits = lim
	}
	return diags
}

// decodeCircuitBreakerBlocks reads the circuit breaker's thresholds.
func (l *loader) decodeCircuitBreakerBlocks(blocks []*hcl.Block) hcl.Diagnostics {
	b, diags := singleBlock("circuit_breaker", blocks, "")
	if b != nil {
		cb := &CircuitBreaker{NoProgress: 3, SameError: 5, Cooldown: 5 * time.Minute, DeclRange: b.DefRange}
		content, d := b.Body.Content(circuitBreakerSchema)
		diags = append(diags, d...)
		if a := content.Attributes["no_progress"]; a != nil {
			cb.NoProgress, d = constPositiveInt(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["same_error"]; a != nil {
			cb.SameError, d = constPositiveInt(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["cooldown"]; a != nil {
			cb.Cooldown, d = constDuration(a)
			diags = append(diags, d...)
		}
		if a := content.Attributes["open_on"]; a != nil {
			cb.OpenOn, d = decodeErrorKinds(a)
			diags = append(diags, d...)
		}
		l.pb.CircuitBreaker = cb
	}
	return diags
}

// decodeStateBlocks reads where the state file lives.
func (l *loader) decodeStateBlocks(blocks []*hcl.Block) hcl.Diagnostics {
	b, diags := singleBlock("state", blocks, "")
	if b != nil {
		content, d := b.Body.Content(stateSchema)
		diags = append(diags, d...)
		if a := content.Attributes["path"]; a != nil {
			p, d := constString(a)
			diags = append(diags, d...)
			if !d.HasErrors() && p == "" {
				diags = append(diags, errDiag("Invalid state path", "path must not be empty.", a.Expr.Range()))
			}
			l.pb.StatePath = p
		}
	}
	return diags
}

func constDuration(a *hcl.Attribute) (time.Duration, hcl.Diagnostics) {
	v, diags := constString(a)
	if diags.HasErrors() {
		return 0, diags
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, hcl.Diagnostics{errDiag("Invalid duration",
			fmt.Sprintf("%s must be a positive duration such as \"90s\", \"10m\" or \"24h\", not %q.", a.Name, v), a.Expr.Range())}
	}
	return d, nil
}

func constPositiveInt(a *hcl.Attribute) (int, hcl.Diagnostics) {
	v, diags := constInt(a)
	if !diags.HasErrors() && v < 1 {
		diags = append(diags, errDiag("Invalid value", fmt.Sprintf("%s must be at least 1.", a.Name), a.Expr.Range()))
	}
	return v, diags
}

func constPositiveFloat(a *hcl.Attribute) (float64, hcl.Diagnostics) {
	v, diags := constOfType(a, ctyNumber, func(v ctyValue) float64 {
		f, _ := v.AsBigFloat().Float64()
		return f
	})
	if !diags.HasErrors() && v <= 0 {
		diags = append(diags, errDiag("Invalid value", fmt.Sprintf("%s must be more than 0.", a.Name), a.Expr.Range()))
	}
	return v, diags
}

// decodeErrorKinds reads a constant list of error kinds.
func decodeErrorKinds(a *hcl.Attribute) ([]string, hcl.Diagnostics) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		return nil, hcl.Diagnostics{errDiag("Invalid error kinds",
			fmt.Sprintf("%s is a constant list of error kinds, e.g. [\"budget\", \"timeout\"].", a.Name), a.Expr.Range())}
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() || ev.Type() != cty.String {
			return nil, hcl.Diagnostics{errDiag("Invalid error kinds",
				fmt.Sprintf("%s is a constant list of error kinds, e.g. [\"budget\", \"timeout\"].", a.Name), a.Expr.Range())}
		}
		k := ev.AsString()
		if !slices.Contains(ErrorKinds, k) {
			diags = append(diags, errDiag("Unknown error kind",
				fmt.Sprintf("%q is not an error kind; the kinds are %s.%s", k, strings.Join(ErrorKinds, ", "), didYouMean(k, ErrorKinds)), a.Expr.Range()))
			continue
		}
		out = append(out, k)
	}
	return out, diags
}
