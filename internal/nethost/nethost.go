// Package nethost makes worker hosts on one machine for tests and
// benchmarks: network namespaces joined to the machine by veth pairs,
// whose processes reach the machine's database servers through forwarders,
// and which can be cut off the network and reconnected.
//
// It needs root and iproute2's ip.
package nethost

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// Host is a network namespace of its own, joined to this machine by a veth
// pair. Its processes reach the machine's servers through forwarders on the
// machine's end of the pair (Reach); Cut takes that end down: from then on
// the host's packets are dropped without a reset or a close reaching either
// side, as when its cable is pulled, until Reconnect.
type Host struct {
	Name    string // the namespace, and the stem of its links' names
	gateway string // the machine's address on the pair

	mu         sync.Mutex
	forwarders []net.Listener
	conns      map[net.Conn]bool
}

// lockFile serialises the choice of a free subnet among the processes of
// one machine (go test runs packages in parallel).
const lockFile = "/run/leasegen-nethosts.lock"

// Unavailable says why this process cannot make hosts, or "" when it can.
func Unavailable() string {
	if _, err := exec.LookPath("ip"); err != nil {
		return "iproute2's ip is not installed"
	}
	if os.Geteuid() != 0 {
		return "it needs root, to make network namespaces"
	}
	return ""
}

// New makes a host on a /30 of 10.77.0.0/16 that no other host of this
// machine uses. Close removes it.
func New() (*Host, error) {
	if why := Unavailable(); why != "" {
		return nil, errors.New("worker hosts: " + why)
	}
	lock, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	addrs, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("ip addr show: %w", err)
	}
	slot := -1
	for i := range 256 {
		if !strings.Contains(string(addrs), fmt.Sprintf(" 10.77.%d.1/30 ", i)) {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, errors.New("worker hosts: no free 10.77.x.0/30 subnet, 256 in use")
	}
	h := &Host{Name: fmt.Sprintf("lgh%d", slot), gateway: fmt.Sprintf("10.77.%d.1", slot), conns: map[net.Conn]bool{}}
	// A namespace of this name whose address is gone is a killed process's.
	_ = exec.Command("ip", "netns", "del", h.Name).Run()
	_ = exec.Command("ip", "link", "del", h.link()).Run()
	for _, args := range [][]string{
		{"netns", "add", h.Name},
		{"link", "add", h.link(), "type", "veth", "peer", "name", h.Name + "n", "netns", h.Name},
		{"addr", "add", h.gateway + "/30", "dev", h.link()},
		{"link", "set", h.link(), "up"},
		{"-n", h.Name, "addr", "add", fmt.Sprintf("10.77.%d.2/30", slot), "dev", h.Name + "n"},
		{"-n", h.Name, "link", "set", h.Name + "n", "up"},
		{"-n", h.Name, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			h.Close()
			return nil, err
		}
	}
	return h, nil
}

// link is the pair's end on the machine.
func (h *Host) link() string { return h.Name + "m" }

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// loopbackAddr matches a server address on this machine in a DSN or URL.
var loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)

// Reach returns dsn as the host's processes must write it: every server
// address 127.0.0.1:port in it becomes the machine's address on the pair,
// with a forwarder on that port to the server.
func (h *Host) Reach(dsn string) (string, error) {
	ports := loopbackAddr.FindAllStringSubmatch(dsn, -1)
	if len(ports) == 0 {
		return "", fmt.Errorf("worker hosts reach servers at 127.0.0.1:port; the DSN has none: %s", dsn)
	}
	for _, p := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(h.gateway, p[1]))
		if err != nil {
			return "", err
		}
		h.mu.Lock()
		h.forwarders = append(h.forwarders, ln)
		h.mu.Unlock()
		go h.forward(ln, p[0])
	}
	return loopbackAddr.ReplaceAllString(dsn, h.gateway+":$1"), nil
}

// forward copies each connection ln accepts to target and back until
// either side closes.
func (h *Host) forward(ln net.Listener, target string) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				return
			}
			if !h.track(client, server) {
				return
			}
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
			go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
			<-done
			h.untrack(client, server)
		}()
	}
}

// track records a forwarded connection's two ends, or closes them when
// the host is closed.
func (h *Host) track(ends ...net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil {
		for _, c := range ends {
			c.Close()
		}
		return false
	}
	for _, c := range ends {
		h.conns[c] = true
	}
	return true
}

func (h *Host) untrack(ends ...net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range ends {
		c.Close()
		delete(h.conns, c)
	}
}

// Command is a command to run on the host.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.Name, name}, args...)...)
}

// Cut takes the host off the network: its packets and the servers' to it
// are dropped, and no connection learns of it.
func (h *Host) Cut() error { return ip("link", "set", h.link(), "down") }

// Reconnect puts the host back on the network: connections that neither
// side gave up go on.
func (h *Host) Reconnect() error { return ip("link", "set", h.link(), "up") }

// Close stops the forwarders, closes what they forwarded and removes the
// namespace with its pair.
func (h *Host) Close() {
	h.mu.Lock()
	for _, ln := range h.forwarders {
		ln.Close()
	}
	for c := range h.conns {
		c.Close()
	}
	h.conns = nil
	h.mu.Unlock()
	_ = exec.Command("ip", "netns", "del", h.Name).Run()
}
