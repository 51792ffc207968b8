// Package ui serves apl ui: a local web page that shows a project's runs,
// each run's step graph with the path it took and each step's state
// (updated live over server-sent events), every step's prompts, answers,
// output and errors, and that answers a run's waiting question.
//
// It reads runs through the small Runs interface: Local reads a
// project's run directories with interp's readers (ReadRun, ReadEvents,
// ResolveRun), the ones apl show and apl logs use; apl ui --engine
// temporal gives one that reads a Temporal namespace's. It never
// writes a run's files itself: an answer goes through the Answer function
// it is given, which is apl resume --answer. Drawing is interp/draw's,
// laid out by Graphviz.
//
// The server is for one person on their own machine: it checks a random
// token on every request (the printed URL carries it; a cookie keeps it),
// the Host and Origin headers (DNS rebinding), a second token on every
// POST (CSRF), and never serves a file outside a run's directory.
//
// The page is plain HTML from html/template with a little embedded CSS
// and JavaScript (go:embed); nothing is built with a JavaScript toolchain.
package ui
