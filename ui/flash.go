package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
)

// A flash is the status line an action leaves for the page it redirects
// to. It travels in the redirect's query, signed with a key of this
// handler's, so that a link from anywhere else (?flash=ANY TEXT) cannot put
// words in the operator's page: an unsigned or altered flash is not shown.
type flasher struct{ key [32]byte }

func newFlasher() *flasher {
	f := &flasher{}
	_, _ = rand.Read(f.key[:]) // crypto/rand never fails on the platforms Go supports
	return f
}

func (f *flasher) sign(msg string) string {
	m := hmac.New(sha256.New, f.key[:])
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// query is the redirect's query that carries msg.
func (f *flasher) query(msg string) string {
	return url.Values{"flash": {msg}, "flash_sig": {f.sign(msg)}}.Encode()
}

// read returns the request's flash when this handler signed it, else "".
func (f *flasher) read(r *http.Request) string {
	q := r.URL.Query()
	msg, sig := q.Get("flash"), q.Get("flash_sig")
	if msg == "" || !hmac.Equal([]byte(sig), []byte(f.sign(msg))) {
		return ""
	}
	return msg
}
