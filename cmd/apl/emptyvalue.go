package main

import (
	"fmt"
	"io"

	"github.com/apl-lang/apl/interp"
)

// emptyValueJSON is a value a prompt rendered empty, as apl test --json
// and apl run --dry-run --json print it.
type emptyValueJSON struct {
	Playbook string `json:"playbook"`
	Step     string `json:"step"`
	Item     string `json:"item,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	Expr     string `json:"expr"`
	At       string `json:"at"`
	Null     bool   `json:"null,omitempty"`
	// Text is the line apl prints for it.
	Text string `json:"text"`
}

func emptyValuesJSON(evs []interp.EmptyValue) []emptyValueJSON {
	var out []emptyValueJSON
	for _, ev := range evs {
		out = append(out, emptyValueJSON{Playbook: ev.Playbook, Step: ev.Step, Item: ev.Item, Prompt: ev.Prompt,
			Expr: ev.Expr, At: fmt.Sprintf("%s:%d", ev.Range.Filename, ev.Range.Start.Line), Null: ev.Null, Text: ev.String()})
	}
	return out
}

// writeEmptyValues warns of each value a dry run's prompts rendered empty,
// with how to say that it may be.
func writeEmptyValues(w io.Writer, evs []interp.EmptyValue) {
	for _, ev := range evs {
		fmt.Fprintf(w, "warning: %s\n", ev)
	}
	if len(evs) > 0 {
		fmt.Fprintf(w, "An agent knows only its prompt: give these values, or list the ones that may be empty in the prompt's optional attribute.\n")
	}
}
