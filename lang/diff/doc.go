// Package diff compares playbooks structurally, block by block, and keeps
// the record of a fork so that a fork can be compared three ways.
//
// Blocks flattens a loaded playbook into its blocks, each named by its
// address (lang.BlockAddress), and Compare lists the Changes from one to
// another: blocks added and removed, attributes added, removed and
// changed (compared as apl fmt writes them, so comments and layout are no
// differences; a prompt file that file() reads is compared by its text),
// and gate rules reordered. Write prints changes as apl diff does.
//
// A fork of a stdlib playbook (Copy) keeps a Record in its .apl-fork:
// where it came from, and upstream's files as they were forked.
// CompareFork compares the fork and today's upstream with that base and
// tells the fork's changes from upstream's, and the conflicts where both
// changed one thing.
//
// The package reads and writes files only for a fork's copy and record;
// it prints nothing of its own.
package diff
