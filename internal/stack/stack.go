// Package stack brings up cairn's real services on one machine: a private
// PostgreSQL cluster, a versitygw S3 gateway, and the images cairn runs in
// Docker, built locally without a registry.
//
// `cairn dev` and the integration test harness both start the stack through
// this package, so there is one way to do it. Every service keeps its state,
// credentials and port in a directory it is given, so a restart in the same
// directory finds its data, and every child process dies with its parent.
package stack

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// modulePath is the module whose root ModuleRoot looks for.
const modulePath = "github.com/cairn-dev/cairn"

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portFree reports whether 127.0.0.1:port can be listened on now.
func portFree(port int) bool {
	l, err := new(net.ListenConfig).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ModuleRoot returns the directory holding cairn's go.mod, found by walking
// up from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	for {
		if isCairnModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find module root: no go.mod of %s in the working directory or above; run from a cairn checkout", modulePath)
		}
		dir = parent
	}
}

// isCairnModule reports whether the go.mod at path declares cairn's module.
func isCairnModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}

// readOrCreateSecret returns the secret stored at path, first writing a new
// random one (nbytes of entropy, hex) in a 0600 file if there is none.
func readOrCreateSecret(path string, nbytes int) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("read secret: %s is empty", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read secret: %w", err)
	}
	raw := make([]byte, nbytes)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	s := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write secret: %w", err)
	}
	return s, nil
}

// choosePort returns the port recorded at path if it is free now, or else a
// new free port, which it records.
func choosePort(path string) (int, error) {
	if b, err := os.ReadFile(path); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 && portFree(p) {
			return p, nil
		}
	}
	p, err := FreePort()
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(p)+"\n"), 0o644); err != nil {
		return 0, fmt.Errorf("record port: %w", err)
	}
	return p, nil
}

// fileExists reports whether path names an existing file or directory.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
