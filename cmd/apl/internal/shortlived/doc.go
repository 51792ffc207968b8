// Package shortlived prepares the heap of a process that runs one of apl's
// short-lived commands: validate, fmt, plan, graph, explain and diff load
// playbooks, check or print them, and exit, so most of what they allocate
// is garbage only at exit. A ballast (an untouched heap object) puts off
// the first collection until about 100 MB are allocated and keeps Go's
// pacing after it, and the heap is backed by huge pages, so that the fresh
// memory these commands touch costs fewer page faults.
//
// It acts in its init, which Go runs early: the package imports only
// packages that are themselves initialized early, and Go initializes
// the lexically first package whose imports are ready. That is before
// the packages apl links for Temporal (its client, gRPC and protobuf),
// which allocate about 2 MB in their init: the heap they take is backed
// by huge pages too, and the collection their allocations would start
// under Go's default pacing does not come.
package shortlived
