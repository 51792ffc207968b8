// Command apl compiles and runs playbooks: versioned, checked protocols for
// AI coding agents. See README.md and spec/language.md.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) }
