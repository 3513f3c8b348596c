package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	gossh "golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn/server"
)

// devSSHScopes are what the dev stack's keys may do: everything the
// workbench does.
var devSSHScopes = []string{"read", "write", "admin", "shell"}

// devSSH turns the workbench over SSH on for the dev stack, unless the -c
// file set ssh.listen itself: a free loopback port, the host key kept in
// the state dir, and as authorized keys the operator's own
// (~/.ssh/id_*.pub) or, with none, a key pair made once in the state dir.
// It returns the private key to name with ssh -i ("" for the operator's
// own keys, which ssh offers by itself).
func devSSH(cfg *server.Config, dir, home string) (identity string, err error) {
	if cfg.SSH.Listen != "" {
		return "", nil
	}
	cfg.SSH.Listen = "127.0.0.1:0"
	if cfg.SSH.HostKeyPath == "" {
		cfg.SSH.HostKeyPath = filepath.Join(dir, "ssh", "host_ed25519")
	}
	if err := os.MkdirAll(filepath.Join(dir, "ssh"), 0o700); err != nil {
		return "", err
	}
	keys, err := ownKeys(home)
	if err != nil {
		return "", err
	}
	if len(keys) == 0 {
		identity = filepath.Join(dir, "ssh", "id_ed25519")
		line, err := ensureKeyPair(identity)
		if err != nil {
			return "", err
		}
		keys = []server.SSHKeyConfig{{Name: "dev-stack-key", Key: line}}
	}
	for i := range keys {
		keys[i].Scopes = devSSHScopes
	}
	cfg.SSH.AuthorizedKeys = append(cfg.SSH.AuthorizedKeys, keys...)
	return identity, cfg.Validate()
}

// ownKeys are the operator's public keys, ~/.ssh/id_*.pub, each named
// after its file (id_ed25519.pub is dev-id_ed25519); unreadable or
// unparsable files are left out.
func ownKeys(home string) ([]server.SSHKeyConfig, error) {
	if home == "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(home, ".ssh", "id_*.pub"))
	if err != nil {
		return nil, err
	}
	var keys []server.SSHKeyConfig
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if _, _, _, _, err := gossh.ParseAuthorizedKey(b); err != nil {
			continue
		}
		name := "dev-" + strings.TrimSuffix(filepath.Base(p), ".pub")
		keys = append(keys, server.SSHKeyConfig{Name: name, Key: strings.TrimSpace(string(b))})
	}
	return keys, nil
}

// ensureKeyPair makes an ed25519 key pair at path and path.pub unless
// one is there, and returns the public key's authorized_keys line.
func ensureKeyPair(path string) (string, error) {
	if b, err := os.ReadFile(path + ".pub"); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	block, err := gossh.MarshalPrivateKey(priv, "cairn dev")
	if err != nil {
		return "", err
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(sshPub))) + " cairn-dev"
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", err
	}
	return line, os.WriteFile(path+".pub", []byte(line+"\n"), 0o644)
}

// sshCommand is the command line that opens the dev stack's workbench.
func sshCommand(addr, identity string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "22"
	}
	cmd := "ssh -p " + port
	if identity != "" {
		cmd += " -i " + identity + " -o IdentitiesOnly=yes"
	}
	return fmt.Sprintf("%s %s", cmd, host)
}
