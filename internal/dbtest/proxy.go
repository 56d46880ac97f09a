package dbtest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a database server and can stop forwarding,
// to stall or cut off one client without touching the others. While it is
// paused it also holds back closes, as a real partition does: a client that
// gives up and closes its connection leaves the server's session open.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	paused bool
	resume chan struct{}
	conns  map[net.Conn]bool
	// cutAfter, when set, is a statement text: once a client sends it, its
	// reply is forwarded and then the proxy pauses, closing cut.
	cutAfter       []byte
	cutBeforeReply bool
	resetOnReply   bool // drop the reply and close the connection, instead of pausing
	dropStatement  bool // drop the statement itself and close the connection
	cut            chan struct{}
}

// NewProxy listens on a loopback port and forwards to target, a server's
// host:port. It closes when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, resume: make(chan struct{}), conns: map[net.Conn]bool{}}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr returns the proxy's host:port, for a client's DSN.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pause holds every byte in flight until Resume: the clients see a stalled
// server.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
}

// CutAfter arms a cut at an exact point of a client's work: after the next
// statement containing text has gone to the server and its reply has come
// back, the proxy pauses. The returned channel is closed at that moment.
func (p *Proxy) CutAfter(text string) <-chan struct{} { return p.arm(text, false) }

// CutBeforeReply is CutAfter with the cut between the statement and its
// reply: the server runs it, and the client never hears back.
func (p *Proxy) CutBeforeReply(text string) <-chan struct{} { return p.arm(text, true) }

// LoseReply arms a lost reply: once a client sends text, the server runs
// the statement and its reply is dropped, and the client's connection is
// closed: a connection lost after the server committed. The other
// connections go on; the returned channel is closed at the loss.
func (p *Proxy) LoseReply(text string) <-chan struct{} {
	cut := p.arm(text, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetOnReply = true
	return cut
}

// LoseStatement arms a lost statement: once a client sends text, the
// statement is dropped before the server sees it and the client's
// connection is closed. The returned channel is closed at the loss.
func (p *Proxy) LoseStatement(text string) <-chan struct{} {
	cut := p.arm(text, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropStatement = true
	return cut
}

func (p *Proxy) arm(text string, beforeReply bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAfter, p.cutBeforeReply, p.resetOnReply, p.dropStatement, p.cut = []byte(text), beforeReply, false, false, make(chan struct{})
	return p.cut
}

// Resume forwards again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.resume)
		p.resume = make(chan struct{})
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	// replyCuts is signalled when this connection sent the armed statement:
	// the server's next reply is the last thing forwarded.
	replyCuts := make(chan struct{}, 1)
	go func() { p.pipe(server, client, replyCuts, nil); done <- struct{}{} }()
	go func() { p.pipe(client, server, nil, replyCuts); done <- struct{}{} }()
	<-done
	p.waitResumed() // a close in a partition reaches nobody
	client.Close()
	server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// pipe copies src to dst, waiting before each write while paused. A pipe
// towards the server signals sent when it forwards the armed statement; the
// pipe back pauses the proxy after the next reply it forwards once cutNext
// is signalled.
func (p *Proxy) pipe(dst io.Writer, src io.Reader, sent chan<- struct{}, cutNext <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.waitResumed()
			cutting := false
			if cutNext != nil {
				select {
				case <-cutNext:
					cutting = true
				default:
				}
			}
			cutNow := false
			if sent != nil {
				hit, beforeReply := p.armed(buf[:n])
				switch {
				case hit && p.drop():
					return // the statement is dropped; serve closes both ends
				case hit && beforeReply:
					cutNow = true
				case hit:
					sent <- struct{}{} // before the server can reply
				}
			}
			if cutNow {
				// Paused before the statement leaves: the pipe back waits
				// before it forwards any reply, however fast the server is.
				p.pauseForCut()
			}
			if cutting && p.lose() {
				return // the reply is dropped; serve closes both ends
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if cutting {
				p.pauseForCut()
			}
		}
		if err != nil {
			return
		}
	}
}

// armed reports, and disarms, a chunk that carries the armed statement,
// and whether the cut comes before its reply.
func (p *Proxy) armed(chunk []byte) (hit, beforeReply bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutAfter == nil || !bytes.Contains(chunk, p.cutAfter) {
		return false, false
	}
	p.cutAfter = nil
	return true, p.cutBeforeReply
}

// drop reports, and disarms, a lost statement armed by LoseStatement,
// closing cut.
func (p *Proxy) drop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dropStatement {
		return false
	}
	p.dropStatement = false
	close(p.cut)
	return true
}

// lose reports, and disarms, a lost reply armed by LoseReply, closing cut.
func (p *Proxy) lose() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.resetOnReply {
		return false
	}
	p.resetOnReply = false
	close(p.cut)
	return true
}

func (p *Proxy) pauseForCut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	close(p.cut)
}

func (p *Proxy) waitResumed() {
	p.mu.Lock()
	paused, resume := p.paused, p.resume
	p.mu.Unlock()
	if paused {
		<-resume
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Resume()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}
