package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/tmuxtest"
	"github.com/cairn-dev/cairn/server"
)

func devSSHConfig(t *testing.T) server.Config {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Artifact.S3.Endpoint, cfg.Artifact.Store.Bucket = "127.0.0.1:9000", "cairn"
	return cfg
}

func TestSshDevKeys(t *testing.T) {
	t.Parallel()

	t.Run("OperatorsOwnKeys", func(t *testing.T) {
		t.Parallel()
		home, dir := t.TempDir(), t.TempDir()
		key := newSSHKey(t)
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(key.public+" me@host\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_broken.pub"), []byte("not a key\n"), 0o644))
		cfg := devSSHConfig(t)
		identity, err := devSSH(&cfg, dir, home)
		require.NoError(t, err)
		require.Empty(t, identity, "ssh offers the operator's keys by itself")
		require.Equal(t, "127.0.0.1:0", cfg.SSH.Listen)
		require.Equal(t, filepath.Join(dir, "ssh", "host_ed25519"), cfg.SSH.HostKeyPath)
		require.Len(t, cfg.SSH.AuthorizedKeys, 1)
		require.Equal(t, "dev-id_ed25519", cfg.SSH.AuthorizedKeys[0].Name)
		require.Equal(t, devSSHScopes, cfg.SSH.AuthorizedKeys[0].Scopes)
	})

	t.Run("KeyMadeOnceInStateDir", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cfg := devSSHConfig(t)
		identity, err := devSSH(&cfg, dir, t.TempDir())
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, "ssh", "id_ed25519"), identity)
		fi, err := os.Stat(identity)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		again := devSSHConfig(t)
		_, err = devSSH(&again, dir, "")
		require.NoError(t, err)
		require.Equal(t, cfg.SSH.AuthorizedKeys, again.SSH.AuthorizedKeys, "a restart keeps the key")
	})

	t.Run("OverrideFileWins", func(t *testing.T) {
		t.Parallel()
		cfg := devSSHConfig(t)
		cfg.SSH.Listen = "127.0.0.1:2222"
		identity, err := devSSH(&cfg, t.TempDir(), t.TempDir())
		require.NoError(t, err)
		require.Empty(t, identity)
		require.Empty(t, cfg.SSH.AuthorizedKeys)
	})

	t.Run("CommandLine", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "ssh -p 40022 127.0.0.1", sshCommand("127.0.0.1:40022", ""))
		require.Equal(t, "ssh -p 40022 -i /s/ssh/id_ed25519 -o IdentitiesOnly=yes 127.0.0.1",
			sshCommand("127.0.0.1:40022", "/s/ssh/id_ed25519"))
	})
}

// devWorkbenchOverSSH opens the dev stack's workbench with exactly the
// command line it printed, in the real OpenSSH client in tmux. The
// operator has no SSH key of their own (the caller's HOME has none), so
// the command names the key pair the stack made.
func devWorkbenchOverSSH(t *testing.T, d *devStackProcess) {
	line := regexp.MustCompile(`(?m)^  workbench  (ssh .+)$`).FindStringSubmatch(d.output.String())
	require.Len(t, line, 2, "cairn dev prints the ssh command line; output:\n%s", d.output)
	args := strings.Fields(line[1])
	require.Contains(t, args, "-i", "with no key of the operator's, the made one is named")
	require.FileExists(t, filepath.Join(d.stateDir, "ssh", "id_ed25519"))
	ssh := sshBinary(t)
	// The host key is new to this client: trust it for the test only.
	command := append([]string{ssh, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "LogLevel=ERROR", "-t", "-o", "SendEnv=NO_COLOR"}, args[1:]...)
	p := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "LANG=C.UTF-8"}}, "sh", "-c",
		strings.Join(quoteAll(command), " ")+"; echo ssh-exit-$?; exec sh")
	p.WaitForText(sshSeen, "● live")
	p.Keys("q")
	p.WaitForText(sshSeen, "ssh-exit-0")
	p.Close() // its command line names the stack's state dir, which is checked for processes later
}
