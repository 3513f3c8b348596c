package server

import (
	"fmt"
	"net"
	"strconv"

	"golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn"
)

// SSHConfig is `ssh`: the workbench over SSH (cairn server --ssh-listen).
type SSHConfig struct {
	// The SSH listener's `host:port`, host an IP address or `localhost`;
	// empty turns it off. Port 0 asks the kernel for a free one.
	Listen string `yaml:"listen"`
	// The server's host key, an OpenSSH private key made on first start
	// and kept; required when `ssh.listen` is set. A relative path is
	// taken from the config file's directory.
	HostKeyPath string `yaml:"hostKeyPath"`
	// The public keys allowed in, the only way in (there are no
	// passwords); at least one when `ssh.listen` is set, each listed once.
	AuthorizedKeys []SSHKeyConfig `yaml:"authorizedKeys"`
	// Open sessions, per server process.
	MaxSessions int `yaml:"maxSessions"`
	// Open sessions of one key.
	MaxSessionsPerKey int `yaml:"maxSessionsPerKey"`
	// Seconds a session may send and receive nothing before it ends.
	IdleTimeoutSecs int `yaml:"idleTimeoutSecs"`
	// Seconds after which every session ends.
	MaxLifetimeSecs int `yaml:"maxLifetimeSecs"`
}

// SSHKeyConfig is one authorized key.
type SSHKeyConfig struct {
	// Who the key is; audit events name the actor `ssh:` and this name.
	// ASCII letters, digits, `-` and `_`.
	Name string `yaml:"name"`
	// One `authorized_keys` line: `ssh-ed25519 AAAA… comment`.
	Key string `yaml:"key"`
	// What the key's sessions may do, as the scopes of `auth.tokens`.
	Scopes []string `yaml:"scopes"`
}

// DefaultSSHConfig is off, with the limits a small team needs.
func DefaultSSHConfig() SSHConfig {
	return SSHConfig{MaxSessions: 32, MaxSessionsPerKey: 4, IdleTimeoutSecs: 1800, MaxLifetimeSecs: 28800}
}

// SSHEnabled reports whether the SSH listener is on.
func (c *Config) SSHEnabled() bool { return c.SSH.Listen != "" }

func (s SSHConfig) validate(p *configProblems) {
	if s.Listen == "" {
		return
	}
	host, port, err := net.SplitHostPort(s.Listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		p.add("ssh.listen", "must be host:port, got %q", s.Listen)
	} else if host != "localhost" {
		p.ipLiteral("ssh.listen", host)
	}
	p.required("ssh.hostKeyPath", s.HostKeyPath)
	if len(s.AuthorizedKeys) == 0 {
		p.add("ssh.authorizedKeys", "at least one key is needed when ssh.listen is set: public keys are the only way in")
	}
	first := make(map[string]int, len(s.AuthorizedKeys))
	for i, k := range s.AuthorizedKeys {
		k.validate(p, fmt.Sprintf("ssh.authorizedKeys[%d]", i), first, i)
	}
	inRange(p, "ssh.maxSessions", s.MaxSessions)
	if inRange(p, "ssh.maxSessionsPerKey", s.MaxSessionsPerKey) && s.MaxSessionsPerKey > max(1, s.MaxSessions) {
		p.add("ssh.maxSessionsPerKey", "must be at most ssh.maxSessions (%d), got %d", s.MaxSessions, s.MaxSessionsPerKey)
	}
	inRange(p, "ssh.idleTimeoutSecs", s.IdleTimeoutSecs)
	inRange(p, "ssh.maxLifetimeSecs", s.MaxLifetimeSecs)
}

// validate checks one key; first maps each parsed key's fingerprint to
// the index that has it, so a key listed twice (under any name) is
// refused: it could only ever sign in as one of them.
func (k SSHKeyConfig) validate(p *configProblems, key string, first map[string]int, i int) {
	if err := cairn.ValidateName("key", k.Name); err != nil {
		p.add(key+".name", "%s", cairn.ErrorDetail(err))
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Key))
	if err != nil {
		p.add(key+".key", "key %q: not an authorized_keys line: %v", k.Name, err)
	} else if fp := ssh.FingerprintSHA256(pub); first[fp] != 0 {
		p.add(key+".key", "key %q is already listed as ssh.authorizedKeys[%d]", k.Name, first[fp]-1)
	} else {
		first[fp] = i + 1
	}
	TokenConfig{Name: k.Name, Scopes: k.Scopes}.validateScopes(p, key+".scopes")
}
