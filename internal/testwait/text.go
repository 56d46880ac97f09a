package testwait

import (
	"bytes"
	"sync"
)

// Text collects what writers write (a logger's output, say), safe for
// concurrent writers, and rings its bell at each write.
type Text struct {
	Bell
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p and rings.
func (x *Text) Write(p []byte) (int, error) {
	x.mu.Lock()
	n, err := x.buf.Write(p)
	x.mu.Unlock()
	x.Ring()
	return n, err
}

// String returns what was written so far.
func (x *Text) String() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.buf.String()
}
