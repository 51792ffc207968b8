// Package draw draws a playbook's step graph, as apl graph prints it and
// as a web view or an editor shows it.
//
// New builds a Graph from a loaded playbook: its steps, grouped into
// sections (the main steps, each for_each body, on_failure, finally), the
// ends a run or an item can reach, and every route between them, taken
// from each step's successors (lang.Step.Successors), so the drawing and
// the checker agree on where control can go. A Graph writes itself as
// text (WriteText), Graphviz DOT (WriteDot) or a Mermaid flowchart
// (WriteMermaid); Render lays out DOT as SVG or PNG with Graphviz.
// WriteDotIDs adds ids on nodes and edges that the SVG keeps, for a page
// (apl ui) to find and restyle them.
//
// Overlay lays a run over the graph: the steps it visited and the routes
// it took, with how often. RunOf reads one from a recorded run's state;
// the path itself is interp's (interp.Path), read from the run's events.
//
// The package only builds values and writes to the writer it is given:
// it runs nothing, but for Graphviz in Render, and prints nothing of its
// own. It owns no control-flow rule: where a step may go is lang's.
package draw
