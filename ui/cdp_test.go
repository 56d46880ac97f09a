package ui

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
)

// A DevTools-protocol client of the least it takes to drive a headless
// Chromium from a test: a WebSocket client (RFC 6455: text frames, masked
// from the client) and request/response by id. Events are skipped.

type cdp struct {
	conn net.Conn
	r    *bufio.Reader
	next int
}

// dialCDP opens a page target's WebSocket URL.
func dialCDP(wsURL string) (*cdp, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	return &cdp{conn: conn, r: r}, nil
}

func (c *cdp) close() { c.conn.Close() }

// writeText sends one masked text frame.
func (c *cdp) writeText(p []byte) error {
	hdr := []byte{0x81}
	switch n := len(p); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	hdr = append(hdr, mask...)
	body := make([]byte, len(p))
	for i, b := range p {
		body[i] = b ^ mask[i%4]
	}
	_, err := c.conn.Write(append(hdr, body...))
	return err
}

// readMessage reads one whole message (joining continuation frames).
func (c *cdp) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		fin, opcode := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.r, payload); err != nil {
			return nil, err
		}
		if opcode == 8 {
			return nil, errors.New("websocket closed")
		}
		if opcode == 9 || opcode == 10 { // ping, pong: DevTools sends none that need an answer here
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

// call sends a command and returns its result, skipping events.
func (c *cdp) call(method string, params any, result any) error {
	c.next++
	id := c.next
	req, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := c.writeText(req); err != nil {
		return err
	}
	for {
		raw, err := c.readMessage()
		if err != nil {
			return err
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil || resp.ID != id {
			continue // an event, or another reply
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: %s", method, resp.Error.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(resp.Result, result)
	}
}

// eval evaluates a JavaScript expression in the page and returns its value.
func (c *cdp) eval(expr string) (json.RawMessage, error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s: %s", expr, r.ExceptionDetails.Text)
	}
	return r.Result.Value, nil
}

// navigate loads url and waits for the document to be complete.
func (c *cdp) navigate(u string) error {
	if err := c.call("Page.navigate", map[string]any{"url": u}, nil); err != nil {
		return err
	}
	return c.waitLoaded()
}

func (c *cdp) waitLoaded() error {
	return c.waitFor(`document.readyState === "complete"`, "page did not finish loading")
}

// clickAndLoad clicks the element selector names, which navigates, and
// waits until the next page has loaded: the old page is marked, so its
// own readyState cannot pass for the new one's.
func (c *cdp) clickAndLoad(selector string) error {
	if _, err := c.eval(`window.leasegenOldPage = true; document.querySelector(` + strconv.Quote(selector) + `).click()`); err != nil {
		return err
	}
	return c.waitFor(`!window.leasegenOldPage && document.readyState === "complete"`, "the click on "+selector+" loaded no page")
}

// waitFor evaluates cond until it is true, failing after testwait.Bound.
func (c *cdp) waitFor(cond, what string) error {
	for deadline := time.Now().Add(testwait.Bound); time.Now().Before(deadline); time.Sleep(testwait.Poll) {
		if v, err := c.eval(cond); err == nil && string(v) == "true" {
			return nil
		}
	}
	return fmt.Errorf("%s within %v", what, testwait.Bound)
}

// screenshot returns the page as a PNG.
func (c *cdp) screenshot() ([]byte, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := c.call("Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}
