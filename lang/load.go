package lang

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// StdlibPrefix marks a playbook reference into the embedded stdlib:
// "stdlib:phase-runner".
const StdlibPrefix = "stdlib:"

// Loader loads playbooks. The zero Loader loads from the file system only.
type Loader struct {
	// Stdlib holds the embedded playbooks, one directory per name.
	Stdlib fs.FS
	// Builtins names the builtins `call` blocks may use; nil skips the
	// check.
	Builtins []string
	// Signatures gives the builtins' argument and result types
	// (builtins.Registry), so that calls are checked against them and a
	// call step's output is typed; nil skips those checks.
	Signatures BuiltinSignatures
	// DecodeAnswer decodes an agent's JSON answer against a returns type
	// exactly as runs do (builtins/agent.Decode), so that test files reject
	// a mocked agent output that a run would reject; nil leaves that check
	// to the run.
	DecodeAnswer func(answer []byte, returns cty.Type) error
	// CheckScript checks a shell script template given as its literal text
	// around each interpolation, as the runtime will quote values into it
	// (builtins.CheckScriptTemplate): it returns the index of the first
	// interpolation no quoting makes safe, and why. nil skips the check.
	CheckScript func(literals []string) (int, error)
	// Drivers lists the driver types and the settings each takes
	// (builtins/agent.DriverSchema), so that a driver block a run would
	// reject fails to load; nil takes any type and constant settings.
	Drivers DriverSchema

	// Cache, when set, keeps what this Loader loads across calls to
	// Load, so that a process checking many playbooks (apl validate) loads
	// a playbook that others run as a sub-playbook once. The playbooks
	// it returns are shared and must not be changed.
	Cache *Cache

	// Subs, when set, keeps the loads of sub-playbooks across loads: the
	// playbook Load is asked for is decoded every time, the playbooks it
	// runs once, until the caller forgets them (Cache.Forget) because a
	// file they read changed (apl lsp). Unlike Cache, it never returns the
	// playbook asked for as loaded earlier.
	Subs *Cache

	// Parses, when set, keeps parsed files across loads, so that a load
	// parses only the files that changed since an earlier one (apl lsp).
	// Loads with and without it report the same.
	Parses *ParseCache

	// Files, when set, are read in place of the file system: playbook,
	// prompt and upstream files by absolute path, as Files collects them
	// from a load. A run on another machine (apl worker) loads the
	// playbook, and the playbooks it runs, as they were where the run
	// started. A file not in Files is read from the file system.
	Files map[string][]byte

	// Root is the project: every file a playbook reads (its own, the
	// upstream it extends, its sub-playbooks, its prompt files and test
	// files) must lie in it once symlinks are resolved, or in a directory
	// of Allow. Empty: each playbook's own project (FindProject).
	Root string
	// Allow are directories outside the project that playbooks may read
	// all the same, because the user said so (apl --allow-path).
	Allow []string

	stack   []string // playbooks being loaded, outermost first, for sub-playbooks
	subs    *subCache
	task    *loadTask // the top-level load this one is part of
	project *Project  // the outermost playbook's, which its sub-playbooks share
}

// Cache holds loaded playbooks for Loader.Cache.
type Cache struct {
	subs subCache
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{subs: subCache{loaded: map[string]subLoad{}}} }

// Forget drops the loads stale says are out of date. A load that ran a
// sub-playbook holds it, so stale should look at the files of both
// (Files does).
func (c *Cache) Forget(stale func(pb *Playbook, diags hcl.Diagnostics) bool) {
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	for key, r := range c.subs.loaded {
		if stale(r.pb, r.diags) {
			delete(c.subs.loaded, key)
		}
	}
}

// subCache holds the sub-playbooks one load has loaded, by canonical ref,
// so that a playbook run by many steps (or by many playbooks) is loaded
// once: without it, a chain of playbooks each running the next twice is
// loaded 2^n times. A Cache's subCache is shared by loads running at once
// (apl validate loads its playbooks in parallel): a playbook that one of
// them is loading is waited for by the others, not loaded twice.
type subCache struct {
	mu      sync.Mutex
	loaded  map[string]subLoad
	flights map[string]*flight
}

// A flight is a playbook being loaded, by the load task that owns it.
type flight struct {
	done  chan struct{}
	owner *loadTask
}

// A loadTask is one top-level Load and the sub-playbook loads under it,
// which run on its goroutine. waiting is the flight it waits for, if any:
// a task never waits for a flight whose owner waits, through others, for
// it (playbooks running each other, which the load reports as a cycle).
type loadTask struct{ waiting *flight }

// get returns the load of key, waiting for it if another task is loading
// it. Otherwise, when it returns ok false, the caller loads key and then
// calls put: others wait for it meanwhile.
func (c *subCache) get(key string, task *loadTask) (r subLoad, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if r, ok := c.loaded[key]; ok {
			return r, true
		}
		f := c.flights[key]
		if f == nil || task == nil {
			break
		}
		o := f.owner
		for o != task && o.waiting != nil {
			o = o.waiting.owner
		}
		if o == task {
			return subLoad{}, false // waiting would never end: load it here
		}
		task.waiting = f
		c.mu.Unlock()
		<-f.done
		c.mu.Lock()
		task.waiting = nil
	}
	if task != nil {
		if c.flights == nil {
			c.flights = map[string]*flight{}
		}
		c.flights[key] = &flight{done: make(chan struct{}), owner: task}
	}
	return subLoad{}, false
}

// put keeps the load of key and releases whoever waits for it.
func (c *subCache) put(key string, task *loadTask, r subLoad) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded[key] = r
	if f := c.flights[key]; f != nil && f.owner == task {
		close(f.done)
		delete(c.flights, key)
	}
}

// subLoad is the result of loading a sub-playbook.
type subLoad struct {
	pb    *Playbook
	diags hcl.Diagnostics
}

// Load loads a playbook from a file, a directory of .hcl files, or
// "stdlib:NAME". It always returns the files it parsed (for rendering
// diagnostics) and as much of the playbook as it could decode.
func (ld *Loader) Load(ref string) (*Playbook, hcl.Diagnostics) {
	top := ld.top(ref)
	key := top.project.key(top.stack[0])
	cached := ld.Cache != nil && len(ld.stack) == 0
	if cached {
		// Loaded already, maybe as another playbook's sub-playbook.
		if r, ok := ld.Cache.subs.get(key, top.task); ok {
			return r.pb, r.diags
		}
	}
	pb, diags := top.read1(ref)
	if cached {
		// Kept for the playbooks that run this one.
		ld.Cache.subs.put(key, top.task, subLoad{pb, diags})
	}
	return pb, diags
}

func (ld *Loader) read1(ref string) (*Playbook, hcl.Diagnostics) {
	srcs, dir, err := ld.read(ref, ld.project)
	if err != nil {
		return &Playbook{Sources: map[string][]byte{}}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read playbook",
			Detail:   err.Error(),
		}}
	}
	return ld.LoadSources(srcs, dir)
}

// LoadRef loads the playbook ref names from srcs, its files as Load
// read them earlier (Playbook.Sources), and dir: a run on another machine
// runs the playbook as it was when the run started.
func (ld *Loader) LoadRef(ref string, srcs map[string][]byte, dir string) (*Playbook, hcl.Diagnostics) {
	return ld.top(ref).LoadSources(srcs, dir)
}

// top is the loader for the playbook ref itself, the first on the stack
// of playbooks being loaded, so that a sub-playbook that runs it is a
// cycle.
func (ld *Loader) top(ref string) *Loader {
	if len(ld.stack) > 0 {
		return ld
	}
	top := *ld
	top.stack = []string{canonicalRef(ref)}
	top.project = ld.projectOf(ref)
	top.subs = &subCache{loaded: map[string]subLoad{}}
	top.task = &loadTask{}
	switch {
	case ld.Cache != nil:
		top.subs = &ld.Cache.subs
	case ld.Subs != nil:
		top.subs = &ld.Subs.subs
	}
	return &top
}

// projectOf is the project of the outermost playbook ref: Root, or the
// one ref is in. A stdlib playbook has none: it reads only the stdlib.
func (ld *Loader) projectOf(ref string) *Project {
	switch {
	case strings.HasPrefix(ref, StdlibPrefix):
		return nil
	case ld.Root != "":
		return NewProject(ld.Root, ld.Allow)
	}
	return FindProject(ref, ld.Allow)
}

// key is the cache key of the playbook canonical ref names when loaded in
// project p: the same file may read other files in another project.
func (p *Project) key(canon string) string {
	if p == nil {
		return canon
	}
	return p.Root + "\x00" + canon
}

// canonicalRef names a playbook the same way however it was reached:
// stdlib refs as they are, paths absolute and cleaned.
func canonicalRef(ref string) string {
	if strings.HasPrefix(ref, StdlibPrefix) {
		return ref
	}
	if abs, err := filepath.Abs(ref); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return real
		}
		return abs
	}
	return ref
}

// Load loads a playbook from the file system; see Loader.Load.
func Load(ref string) (*Playbook, hcl.Diagnostics) { return (&Loader{}).Load(ref) }

// read reads the files of the playbook ref, from the stdlib, from Files,
// or from the file system inside proj.
func (ld *Loader) read(ref string, proj *Project) (map[string][]byte, string, error) {
	if name, ok := strings.CutPrefix(ref, StdlibPrefix); ok {
		if ld.Stdlib == nil {
			return nil, "", fmt.Errorf("no stdlib is available to load %q", ref)
		}
		entries, err := fs.ReadDir(ld.Stdlib, name)
		if err != nil {
			return nil, "", fmt.Errorf("there is no stdlib playbook %q", name)
		}
		srcs := map[string][]byte{}
		for _, e := range entries {
			if e.IsDir() || !isPlaybookFile(e.Name()) {
				continue
			}
			b, err := fs.ReadFile(ld.Stdlib, path.Join(name, e.Name()))
			if err != nil {
				return nil, "", err
			}
			srcs[ref+"/"+e.Name()] = b
		}
		return srcs, ref, nil
	}
	if srcs, dir, ok := ld.readFiles(ref); ok {
		return srcs, dir, nil
	}
	info, err := proj.Stat(ref)
	if err != nil {
		return nil, "", err
	}
	if !info.IsDir() {
		b, err := proj.ReadFile(ref)
		if err != nil {
			return nil, "", err
		}
		return map[string][]byte{ref: b}, filepath.Dir(ref), nil
	}
	entries, err := proj.ReadDir(ref)
	if err != nil {
		return nil, "", err
	}
	srcs := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !isPlaybookFile(e.Name()) {
			continue
		}
		p := filepath.Join(ref, e.Name())
		b, err := proj.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		srcs[p] = b
	}
	if len(srcs) == 0 {
		return nil, "", fmt.Errorf("directory %s holds no .hcl playbook files", ref)
	}
	return srcs, ref, nil
}

// readFiles reads the playbook ref from Files: the file, or the
// directory's playbook files.
func (ld *Loader) readFiles(ref string) (map[string][]byte, string, bool) {
	if ld.Files == nil {
		return nil, "", false
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return nil, "", false
	}
	if b, ok := ld.Files[abs]; ok {
		return map[string][]byte{ref: b}, filepath.Dir(ref), true
	}
	srcs := map[string][]byte{}
	for name, b := range ld.Files {
		if filepath.Dir(name) == abs && isPlaybookFile(filepath.Base(name)) {
			srcs[filepath.Join(ref, filepath.Base(name))] = b
		}
	}
	return srcs, ref, len(srcs) > 0
}

// Files are the files of pb and of the playbooks it runs (sub-playbooks,
// at any depth, those that do not load too), by absolute path, as
// Loader.Files takes them: all that loading pb again reads from the file
// system. The stdlib's are left out
// (apl embeds them).
func Files(pb *Playbook) (map[string][]byte, error) {
	files := map[string][]byte{}
	seen := map[*Playbook]bool{}
	var add func(pb *Playbook) error
	add = func(pb *Playbook) error {
		if pb == nil || seen[pb] {
			return nil
		}
		seen[pb] = true
		for name, src := range pb.Sources {
			if strings.HasPrefix(name, StdlibPrefix) {
				continue
			}
			abs, err := filepath.Abs(name)
			if err != nil {
				return err
			}
			files[abs] = src
		}
		for _, s := range pb.AllSteps() {
			if a, ok := s.Action.(*SubPlaybook); ok {
				if err := add(a.read); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return files, add(pb)
}

// isPlaybookFile reports whether a file in a playbook directory is part of
// the playbook (test files are not).
func isPlaybookFile(name string) bool {
	return strings.HasSuffix(name, ".hcl") && !strings.HasSuffix(name, "_test.hcl")
}

// LoadSources loads a playbook from in-memory files, keyed by file name.
// dir is where file() paths resolve ("stdlib:NAME" for embedded ones).
func (ld *Loader) LoadSources(srcs map[string][]byte, dir string) (*Playbook, hcl.Diagnostics) {
	l := &loader{
		dir:         dir,
		proj:        ld.project,
		stdlib:      ld.Stdlib,
		builtins:    ld.Builtins,
		sigs:        ld.Signatures,
		checkScript: ld.CheckScript,
		drivers:     ld.Drivers,
		stack:       ld.stack,
		subs:        ld.subs,
		ld:          ld,
		sources:     map[string][]byte{},
		fileDirs:    map[string]string{},
		fileDepth:   map[string]int{},
		pb: &Playbook{
			Modes:   map[string]*Mode{},
			Budgets: map[string]*Budget{},
			Prompts: map[string]*Prompt{},
			Agents:  map[string]*Agent{},
			Drivers: map[string]*Driver{},
			Dir:     dir,
			steps:   map[string]*Step{},
			inputs:  map[string]*Input{},

			overrides: map[hcl.Range][]hcl.Range{},

			decodeAnswer: ld.DecodeAnswer,
			parses:       ld.Parses,
		},
	}
	body, diags := l.layer(srcs, dir, 0, ld.stack)
	diags = append(diags, l.diags...)
	body, xd := l.expandTemplates(body)
	diags = append(diags, xd...)
	l.pb.body = body
	content, d := body.Content(fileSchema)
	diags = append(diags, d...)
	bodies := []*hcl.BodyContent{content}
	decoded := l.decode(bodies)
	if diags.HasErrors() {
		// A syntax error leaves blocks half read: what looks unused or
		// unreachable then is noise around the one real problem.
		decoded = errorsOnly(decoded)
	}
	diags = append(diags, decoded...)
	l.pb.Sources = l.sources
	l.pb.Hash = l.hashSources()
	return l.pb, dedupe(diags)
}

// errorsOnly drops warnings.
func errorsOnly(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// loader holds the state of one load.
type loader struct {
	dir     string
	proj    *Project // nil until project is first called
	stdlib  fs.FS
	ld      *Loader
	sources map[string][]byte
	// fileDirs is the directory of the playbook each source belongs to,
	// where its file() and sub-playbook paths resolve; fileDepth how far
	// down the extends chain that playbook is (0: the one loaded).
	fileDirs  map[string]string
	fileDepth map[string]int
	diags     hcl.Diagnostics // found while merging layers
	// instances are the steps that use a template, by name.
	instances map[string]*instance
	pb        *Playbook

	stepBlocks map[*Step]*hcl.Block
	// returnsDefs are the steps whose returns is exactly a named type.
	returnsDefs map[*Step]*TypeDef
	used        map[string]bool // "prompt.x", "budget.y", "agent.z", "input.w"

	pendingValidations []pendingValidation
	refChecks          []refCheck
	// refErrs says which refChecks had errors, once runRefChecks ran, so
	// that checkAfterDecode need not check their references again.
	refErrs      []bool
	explicitNext map[*Step]hcl.Range
	builtins     []string
	sigs         BuiltinSignatures
	conds        []condRec // every compiled expr-lang expression, for the checks after decoding
	checkScript  func([]string) (int, error)
	drivers      DriverSchema
	stack        []string
	subs         *subCache // nil: loading from sources, nothing cached
	usedInputs   map[string]bool
	gotoRanges   map[*Outcome]hcl.Range
	badMax       map[*Outcome]bool // max given but invalid: reported, and no cycle news
	stepContents map[*Step]*hcl.BodyContent
	// refs are the traversals of expressions, walked once (traversals).
	refs map[hclsyntax.Expression][]hcl.Traversal
	// condEnvs and sections cache what scopes describe (scope.go).
	condEnvs  map[Scope]*condEnv
	sections  map[*Step]*sectionTypes
	stepTypes map[*Step]*stepType
	// vars are the names gates and agent actions give vars, once every
	// step is decoded; nil before.
	vars *varNames
	// prompts are the prompt files read and parsed before their blocks are
	// decoded (prefetchTemplates), each until its block takes it.
	prompts map[promptKey]promptFile
}

// Files returns the parsed files, for rendering diagnostics with snippets.
func (p *Playbook) Files() map[string]*hcl.File {
	files := map[string]*hcl.File{}
	for name, src := range p.Sources {
		files[name] = &hcl.File{Bytes: src}
	}
	return files
}

// hashSources hashes every source the playbook was loaded from: its files,
// the prompt files they read and, through extends, its upstreams' (the
// stdlib's as this apl embeds them). A file is named by its base name, so
// that a playbook moved elsewhere keeps its hash; an upstream's, by its
// depth in the extends chain too.
func (l *loader) hashSources() string {
	type keyed struct{ key, name string }
	files := make([]keyed, 0, len(l.sources))
	for n := range l.sources {
		k := filepath.Base(n)
		if d := l.fileDepth[n]; d > 0 {
			k = fmt.Sprintf("extends.%d/%s", d, k)
		}
		files = append(files, keyed{k, n})
	}
	// By file name, as apl has always hashed, so that a run begun before
	// extends existed still resumes.
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	h := sha256.New()
	for _, f := range files {
		src := l.sources[f.name]
		fmt.Fprintf(h, "%s\x00%d\x00", f.key, len(src))
		h.Write(src)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// addSource records a file of the playbook or of an upstream.
func (l *loader) addSource(name string, src []byte, dir string, depth int) {
	l.sources[name] = src
	l.fileDirs[name] = dir
	l.fileDepth[name] = depth
}

// project is the project this load reads in: the outermost playbook's,
// or when LoadSources was called directly, the one dir is in.
func (l *loader) project() *Project {
	if l.proj == nil && !strings.HasPrefix(l.dir, StdlibPrefix) {
		l.proj = l.ld.projectOf(cmp.Or(l.dir, "."))
	}
	return l.proj
}

// dirOf is the directory paths written in a file resolve against.
func (l *loader) dirOf(filename string) string {
	if d, ok := l.fileDirs[filename]; ok {
		return d
	}
	return l.dir
}

// dedupe drops repeated diagnostics (same summary at the same place) and
// sorts them by file and position.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	seen := map[string]bool{}
	var out hcl.Diagnostics
	for _, d := range diags {
		// A range built from an expression cut short by a syntax error may
		// have no end; point at its start instead.
		for _, r := range []*hcl.Range{d.Subject, d.Context} {
			if r != nil && (r.End.Line == 0 || r.End.Byte < r.Start.Byte) {
				r.End = r.Start
			}
		}
		key := d.Summary + "|" + d.Detail
		if d.Subject != nil {
			key += "|" + d.Subject.String()
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Subject, out[j].Subject
		if a == nil || b == nil {
			return a == nil && b != nil
		}
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return out
}
