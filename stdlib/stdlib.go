// Package stdlib embeds apl's standard playbooks, reached as
// "stdlib:NAME": one directory per playbook under playbooks/, each with
// its own tests.
package stdlib

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed playbooks
var files embed.FS

// FS returns the stdlib playbooks, one directory per name.
func FS() fs.FS {
	sub, err := fs.Sub(files, "playbooks")
	if err != nil {
		panic(err) // the embedded tree always has playbooks/
	}
	return sub
}

// Names lists the stdlib playbooks.
func Names() []string {
	entries, _ := fs.ReadDir(FS(), ".")
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}
