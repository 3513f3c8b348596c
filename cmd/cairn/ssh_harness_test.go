package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gossh "golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// sshKey is a key pair a test made: the private key's file, for ssh -i,
// and its signer and public half.
type sshKey struct {
	path   string
	signer gossh.Signer
	public string // the authorized_keys line
}

func newSSHKey(t testing.TB) sshKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := gossh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "id_ed25519")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	signer, err := gossh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return sshKey{path: path, signer: signer, public: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))}
}

// sshStack is a real server with the maintainer, the workbench over SSH
// for an admin key and a read-only key, the shell on, and a READY
// workspace.
type sshStack struct {
	srv      *stacktest.Server
	api      *client.Client
	ws       *cairn.Workspace
	port     int
	admin    sshKey
	reader   sshKey
	stranger sshKey // authorized nowhere
}

// startSSHStack runs a server with the SSH workbench and the shell's
// default timeouts: the workbench creates a shell and then attaches, and a
// short detached timeout would bound that step too.
func startSSHStack(t testing.TB, extra string) *sshStack {
	t.Helper()
	return startSSHStackWith(t, "{}", extra)
}

// startSSHStackWith is startSSHStack with the shell's timeouts (a YAML
// mapping).
func startSSHStackWith(t testing.TB, shellTimeouts, extra string) *sshStack {
	t.Helper()
	port, err := stack.FreePort()
	require.NoError(t, err)
	s := &sshStack{port: port, admin: newSSHKey(t), reader: newSSHKey(t), stranger: newSSHKey(t)}
	s.srv = stacktest.StartServer(t, stacktest.ServerOptions{Maintainer: true, Config: fmt.Sprintf(`
shell: {enable: true, image: %s, instanceName: %s, reapIntervalSecs: 1, timeouts: %s}
ssh:
  listen: 127.0.0.1:%d
  hostKeyPath: %s
  authorizedKeys:
    - {name: admin-key, key: %q, scopes: [read, write, admin, shell]}
    - {name: reader-key, key: %q, scopes: [read]}
%s`, stacktest.Shell(t), "ssh-"+stacktest.AppName(t), shellTimeouts, port, filepath.Join(t.TempDir(), "host_ed25519"),
		s.admin.public, s.reader.public, extra)})
	s.api, err = client.New(s.srv.URL, client.WithToken(s.srv.Token))
	require.NoError(t, err)
	s.ws, err = s.api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	require.NoError(t, s.api.SetupVolume(t.Context(), s.ws.ID))
	return s
}

// sshArgs is the OpenSSH command line for key against the stack.
func (s *sshStack) sshArgs(key sshKey, more ...string) []string {
	args := []string{"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
		"-o", "LogLevel=ERROR", "-i", key.path, "-p", strconv.Itoa(s.port)}
	return append(append(args, more...), "127.0.0.1")
}

// openSSH runs the real OpenSSH client in tmux at 120×40, inside a shell
// that reports its exit status: NO_COLOR travels with SendEnv, so the
// screen is plain.
func (s *sshStack) openSSH(t testing.TB, key sshKey) *tmuxtest.Pane {
	t.Helper()
	ssh := sshBinary(t)
	args := s.sshArgs(key, "-t", "-o", "SendEnv=NO_COLOR")
	return tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "LANG=C.UTF-8"}},
		"sh", "-c", ssh+" "+strings.Join(quoteAll(args), " ")+"; echo ssh-exit-$?; exec sh")
}

// sshBinary is the OpenSSH client; missing, it fails under CI=true.
func sshBinary(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ssh")
	stacktest.Need(t, "ssh (openssh-client; scripts/deps.sh installs it)", err)
	return p
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// uploadArtifact uploads body as name into the stack's workspace.
func uploadArtifact(t testing.TB, s *sshStack, name, body string) *cairn.Artifact {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	a, err := s.api.Upload(t.Context(), s.ws.ID, path, client.UploadOptions{Name: name})
	require.NoError(t, err)
	return a
}
