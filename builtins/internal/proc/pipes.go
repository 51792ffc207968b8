// Package proc holds what builtins' shell and the agent drivers' process
// runner share about running a child process.
package proc

import (
	"os"
	"os/exec"
	"time"
)

// Pipes are the parent's and the child's ends of stdout, stderr and, if
// there is input, stdin. They are made by hand rather than by exec so
// that Wait returns as soon as the command exits: exec's copying
// goroutines would otherwise wait for every grandchild holding a pipe.
type Pipes struct {
	OutR, ErrR, InW *os.File // the parent's ends
	outW, errW, inR *os.File // the child's ends
}

// Open makes the pipes and hands the child's ends to cmd.
func Open(cmd *exec.Cmd, stdin bool) (*Pipes, error) {
	p := &Pipes{}
	var err error
	if p.OutR, p.outW, err = pipe(false); err != nil {
		return nil, err
	}
	if p.ErrR, p.errW, err = pipe(false); err != nil {
		p.CloseAll()
		return nil, err
	}
	if stdin {
		if p.inR, p.InW, err = pipe(true); err != nil {
			p.CloseAll()
			return nil, err
		}
		cmd.Stdin = p.inR
	}
	cmd.Stdout, cmd.Stderr = p.outW, p.errW
	return p, nil
}

// CloseChildEnds closes the child's ends once the child has them.
func (p *Pipes) CloseChildEnds() {
	for _, f := range []*os.File{p.outW, p.errW, p.inR} {
		if f != nil {
			f.Close()
		}
	}
}

// CloseAll closes every end.
func (p *Pipes) CloseAll() {
	p.CloseChildEnds()
	for _, f := range []*os.File{p.OutR, p.ErrR, p.InW} {
		if f != nil {
			f.Close()
		}
	}
}

// Drain waits, with wait, for the readers of stdout and stderr to reach
// EOF, which happens once every process holding the pipes is gone. A
// process that escaped the group (setsid) may hold them forever, so after
// grace the pipes are closed under it. Then every end is closed.
func (p *Pipes) Drain(wait func(), grace time.Duration) {
	finished := make(chan struct{})
	go func() { wait(); close(finished) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		p.OutR.Close()
		p.ErrR.Close()
		<-finished
	}
	p.CloseAll()
}
