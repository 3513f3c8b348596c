package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn"
)

// ShellSecrets keeps the resume secrets of the v2 shells this machine
// created, one 0600 file per shell ID in Dir, so that any cairn client
// here — `cairn shell --attach`, cairn-tui's shells screen — can attach
// to a shell another one opened. The files hold the secret alone; the
// server keeps only its hash.
type ShellSecrets struct{ Dir string }

// DefaultShellSecrets is $XDG_STATE_HOME/cairn/shells, else
// ~/.local/state/cairn/shells.
func DefaultShellSecrets() (ShellSecrets, error) {
	dir, err := DefaultStateDir() // …/cairn/uploads
	if err != nil {
		return ShellSecrets{}, err
	}
	return ShellSecrets{Dir: filepath.Join(filepath.Dir(dir), "shells")}, nil
}

// Keep writes the shell's secret.
func (k ShellSecrets) Keep(info cairn.ShellSessionInfo) error {
	name, err := k.file(info.ShellID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return fmt.Errorf("keep the shell's secret: %w", err)
	}
	if err := os.WriteFile(name, []byte(info.Secret), 0o600); err != nil {
		return fmt.Errorf("keep the shell's secret: %w", err)
	}
	return nil
}

// Lookup reads the secret of shellID; ok is false when none is kept. The
// info has the ID and the secret only.
func (k ShellSecrets) Lookup(shellID string) (cairn.ShellSessionInfo, bool) {
	name, err := k.file(shellID)
	if err != nil {
		return cairn.ShellSessionInfo{}, false
	}
	b, err := os.ReadFile(name)
	secret := strings.TrimSpace(string(b))
	if err != nil || secret == "" {
		return cairn.ShellSessionInfo{}, false
	}
	return cairn.ShellSessionInfo{ShellID: shellID, Secret: secret}, true
}

// Forget removes the secret of a shell that ended.
func (k ShellSecrets) Forget(shellID string) {
	if name, err := k.file(shellID); err == nil {
		_ = os.Remove(name) // it may never have been kept here
	}
}

// file is the secret's path; an ID that is not one path element is
// refused, so no ID names a file elsewhere.
func (k ShellSecrets) file(shellID string) (string, error) {
	if shellID == "" || shellID != filepath.Base(shellID) || shellID == "." || shellID == ".." {
		return "", errors.New("not a shell ID")
	}
	return filepath.Join(k.Dir, shellID), nil
}
