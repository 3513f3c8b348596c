package sshui

import (
	"github.com/charmbracelet/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// keyContext carries the matched Key from the handshake to the session.
type keyContext struct{}

// authorize is the public key check: the key must be one of the
// configured keys, compared whole. The client may offer several keys and
// ask about each before signing; every refusal is logged with the key's
// fingerprint only.
func (s *Server) authorize(ctx ssh.Context, offered ssh.PublicKey) bool {
	for i := range s.cfg.Keys {
		if ssh.KeysEqual(offered, s.cfg.Keys[i].PublicKey) {
			ctx.SetValue(keyContext{}, &s.cfg.Keys[i])
			return true
		}
	}
	s.cfg.Logger.Info("ssh key refused", "fingerprint", gossh.FingerprintSHA256(offered),
		"remote_addr", ctx.RemoteAddr().String())
	return false
}

// keyOf is the session's authorized key; nil only if the handshake did
// not go through authorize, which the server's config rules out.
func keyOf(sess ssh.Session) *Key {
	k, _ := sess.Context().Value(keyContext{}).(*Key)
	return k
}
