package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Driver is a driver block: how agent calls are made. Its attributes are
// constants, kept as values for the interpreter to hand to the agent
// package.
type Driver struct {
	Name      string
	Type      string
	Config    map[string]cty.Value
	DeclRange hcl.Range
}

// DriverSchema is what the loader knows of driver blocks. The agent
// package owns the driver types and their settings (agent.DriverSchema)
// and the Loader hands them to lang, as it hands it the builtins' names,
// so that a driver block a run would reject fails validation instead.
type DriverSchema interface {
	// Types returns the driver types, in the order messages list them.
	Types() []string
	// Settings returns the settings a driver type takes besides type, with
	// the type each converts to; nil for an unknown type.
	Settings(driverType string) map[string]cty.Type
	// Check checks one setting's value as a run reads it: converted to its
	// type, a timeout parsed as a duration, a count not negative.
	Check(driverType, setting string, v cty.Value) error
	// CheckDriver checks a whole block whose settings each pass Check, for
	// what no one setting shows: a command driver without a command.
	CheckDriver(driverType string, settings map[string]cty.Value) error
}

// SchemaSender is a DriverSchema that also tells whether a driver hands
// the model a step's returns as a JSON Schema besides the prompt, so that
// the prompt need not name the answer's fields (checkContracts).
type SchemaSender interface {
	SendsSchema(driverType string, settings map[string]cty.Value) bool
}

// decodeDriverBlock reads a driver: its type and constant settings, which
// the interpreter hands to the agent package. With the Loader's Drivers
// schema, each setting is checked as a run will read it.
func (l *loader) decodeDriverBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("driver", b)
	name := b.Labels[0]
	if prev := l.pb.Drivers[name]; prev != nil {
		return append(diags, duplicate("driver", name, prev.DeclRange, b))
	}
	dr := &Driver{Name: name, Config: map[string]cty.Value{}, DeclRange: b.DefRange}
	l.pb.Drivers[name] = dr
	attrs, d := b.Body.JustAttributes()
	diags = append(diags, d...)
	var types []string
	if l.drivers != nil {
		types = l.drivers.Types()
	}
	known := true // the type is known, or there is no schema to know it
	if a := attrs["type"]; a != nil {
		v, d := constValue(a)
		diags = append(diags, d...)
		switch {
		case d.HasErrors():
			known = false
		case v.Type() != cty.String || v.IsNull():
			diags = append(diags, errDiag("Invalid driver type", "type must be a string.", a.Expr.Range()))
			known = false
		default:
			dr.Type = v.AsString()
			if l.drivers != nil && !slices.Contains(types, dr.Type) {
				diags = append(diags, errDiag("Unknown driver type",
					fmt.Sprintf("Driver type %q is not one of %v.%s", dr.Type, types, didYouMean(dr.Type, types)), a.Expr.Range()))
				known = false
			}
		}
	} else {
		detail := fmt.Sprintf("Driver %q needs a type.", name)
		if types != nil {
			detail = fmt.Sprintf("Driver %q needs a type, one of %v.", name, types)
		}
		diags = append(diags, errDiag("Missing driver type", detail, b.DefRange))
		known = false
	}
	for _, a := range sortedAttrs(attrs) {
		if a.Name == "type" {
			continue
		}
		v, d := constValue(a)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if l.drivers != nil {
			if d := l.checkDriverSetting(dr, a, v, known); d != nil {
				diags = append(diags, d)
				continue
			}
		}
		dr.Config[a.Name] = v
	}
	if l.drivers != nil && known && !diags.HasErrors() {
		if err := l.drivers.CheckDriver(dr.Type, dr.Config); err != nil {
			diags = append(diags, errDiag("Invalid driver",
				fmt.Sprintf("Driver %q would not run: %s.", name, strings.TrimPrefix(err.Error(), "driver "+dr.Type+": ")), b.DefRange))
		}
	}
	return diags
}

// checkDriverSetting checks one setting of a driver block against the
// schema: whether the driver's type takes it (any type's settings, when
// the type is not known) and whether its value is one a run accepts.
func (l *loader) checkDriverSetting(dr *Driver, a *hcl.Attribute, v cty.Value, known bool) *hcl.Diagnostic {
	allowed := l.drivers.Settings(dr.Type)
	if !known {
		allowed = map[string]cty.Type{}
		for _, t := range l.drivers.Types() {
			maps.Copy(allowed, l.drivers.Settings(t))
		}
	}
	if _, ok := allowed[a.Name]; !ok {
		names := slices.Sorted(maps.Keys(allowed))
		if !known {
			return errDiag("Unsupported argument",
				fmt.Sprintf("A driver block has no setting %q.%s", a.Name, didYouMean(a.Name, names)), a.NameRange)
		}
		return errDiag("Unsupported argument",
			fmt.Sprintf("A driver of type %q has no setting %q; it takes %s.%s", dr.Type, a.Name, strings.Join(names, ", "), didYouMean(a.Name, names)), a.NameRange)
	}
	if !known {
		return nil
	}
	if err := l.drivers.Check(dr.Type, a.Name, v); err != nil {
		return errDiag("Invalid driver setting",
			fmt.Sprintf("Setting %s of driver %q: %s.", a.Name, dr.Name, err), a.Expr.Range())
	}
	return nil
}
