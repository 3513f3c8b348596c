package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gossh "golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn"
)

// sshSeen is how long a change may take to reach an SSH session's screen.
const sshSeen = 20 * time.Second

// TestSshWorkbench drives the real OpenSSH client in tmux as an operator
// would: the list and the live badge, a workspace made elsewhere showing
// with no key pressed, the shell round trip with a resize that stty sees,
// the return to the list, q, and the session's start and end audited.
func TestSshWorkbench(t *testing.T) {
	s := startSSHStack(t, "")
	p := s.openSSH(t, s.admin)

	t.Log("the list and the live badge")
	p.WaitForText(sshSeen, "● live", "ws-alpha", "● READY")

	t.Log("a workspace created by another client appears with no key pressed")
	_, err := s.api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-from-api"})
	require.NoError(t, err)
	p.WaitForText(sshSeen, "ws-from-api")

	t.Log("s opens a shell on ws-alpha over the session's PTY")
	p.Keys("g") // the first workspace: ws-alpha
	p.WaitForText(sshSeen, "▸ ws-alpha")
	p.Keys("s")
	p.WaitForText(sshSeen, "/mnt/cairn/ws #") // the banner is gone under the shell's first screen
	p.Type("echo round-$((40+2)); stty size")
	p.Keys("Enter")
	p.WaitForText(sshSeen, "round-42", "40 120")

	t.Log("a resize of the operator's terminal reaches the shell")
	p.Resize(100, 30)
	// The resize and the typed line travel apart (tmux, ssh, the server,
	// the shell's RESIZE): the shell waits to see the new size first.
	p.Type(`clear; while [ "$(stty size)" = "40 120" ]; do usleep 20000; done; stty size | sed 's/^/size-/'`)
	p.Keys("Enter")
	p.WaitForText(sshSeen, "size-30 100")

	t.Log("exit returns to the list with the status")
	p.Type("exit 3")
	p.Keys("Enter")
	p.WaitForText(sshSeen, "Press Enter to return.")
	p.Keys("Enter")
	p.WaitForText(sshSeen, "shell exited: status 3 (ws-alpha)", "● live")

	t.Log("q quits; ssh exits 0")
	p.Keys("q")
	p.WaitForText(sshSeen, "ssh-exit-0")

	t.Log("the session's start and end are in the audit log")
	started := s.waitAudit(t, cairn.AuditSSHSessionStarted)
	ended := s.waitAudit(t, cairn.AuditSSHSessionEnded)
	fingerprint := gossh.FingerprintSHA256(s.admin.signer.PublicKey())
	for _, e := range []*cairn.AuditEvent{started, ended} {
		require.NotNil(t, e.Actor)
		require.Equal(t, "ssh:admin-key", *e.Actor)
		require.Equal(t, fingerprint, e.Metadata["key_fingerprint"])
		require.Equal(t, "admin-key", e.Metadata["key_name"])
		require.Contains(t, e.Metadata["remote_addr"], "127.0.0.1:")
		require.NotEmpty(t, e.Metadata["started_at"])
	}
	require.Equal(t, "quit", ended.Metadata["reason"])
	require.NotEmpty(t, ended.Metadata["ended_at"])
}

// waitAudit is the one audit event of typ, once it is written.
func (s *sshStack) waitAudit(t *testing.T, typ cairn.AuditType) *cairn.AuditEvent {
	t.Helper()
	var found []*cairn.AuditEvent
	require.Eventually(t, func() bool {
		list, err := s.api.FindAuditEvents(t.Context(), cairn.AuditFilter{Types: []cairn.AuditType{typ}})
		found = list
		return err == nil && len(list) > 0
	}, sshSeen, 50*time.Millisecond, "no %s audit event", typ)
	require.Len(t, found, 1)
	return found[0]
}

// TestSshMissingFlag: an object lost behind cairn's back shows as
// MISSING on the SSH session's screen with no key pressed.
func TestSshMissingFlag(t *testing.T) {
	s := startSSHStack(t, "")
	art := uploadArtifact(t, s, "report_csv", "a,b\n1,2\n")
	p := s.openSSH(t, s.admin)
	p.WaitForText(sshSeen, "● live", "ws-alpha")
	p.Keys("g", "Enter")
	p.WaitForText(sshSeen, "report_csv")
	s.srv.LoseObject(t, art.ID, art.ObjectKey)
	_, err := s.api.Sweep(t.Context(), "")
	require.NoError(t, err)
	screen := p.WaitForText(sshSeen, "! 1 missing")
	require.Contains(t, screen, "MISSING")
}

// TestSshReadOnlyKey: a key without admin gets the read-only workbench:
// the badge, and no mutating key in the hints.
func TestSshReadOnlyKey(t *testing.T) {
	s := startSSHStack(t, "")
	p := s.openSSH(t, s.reader)
	screen := p.WaitForText(sshSeen, "● live", "ws-alpha", "[read-only]")
	for _, hint := range []string{"n new", "D delete", "v provision", "s shell"} {
		require.NotContains(t, screen, hint)
	}
	require.Contains(t, screen, "f files", "reading keys stay")
}

// TestSshRefusals: an unknown key and a password are refused; the server
// offers public keys only.
func TestSshRefusals(t *testing.T) {
	s := startSSHStack(t, "")
	ssh := sshBinary(t)
	run := func(args ...string) (string, int) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(t.Context(), ssh, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return stderr.String(), code
	}
	out, code := run(s.sshArgs(s.stranger, "-o", "BatchMode=yes", "-T")...)
	require.Equal(t, 255, code, out)
	require.Contains(t, out, "Permission denied (publickey)")

	out, code = run(s.sshArgs(s.stranger, "-o", "BatchMode=yes", "-o", "PubkeyAuthentication=no",
		"-o", "PreferredAuthentications=password,keyboard-interactive")...)
	require.Equal(t, 255, code, out)
	require.Contains(t, out, "Permission denied (publickey)", "only publickey is offered")

	_, err := gossh.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port), &gossh.ClientConfig{User: "root",
		Auth:            []gossh.AuthMethod{gossh.Password("hunter2")},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()}) //nolint:gosec // a test's throwaway server
	require.ErrorContains(t, err, "unable to authenticate")
}

// TestSshClientGoneMidShell: an SSH client that goes away while its shell
// runs hangs the shell up; the v2 shell detaches, and once its detached
// timeout is over no shell container is left. The session's end is
// audited as the client's going.
func TestSshClientGoneMidShell(t *testing.T) {
	// 8 s: it also bounds the workbench's attach after the create, which
	// a loaded machine may be slow to make.
	const detached = 8 * time.Second
	s := startSSHStackWith(t, "{detachedSecs: "+strconv.Itoa(int(detached/time.Second))+"}", "")
	g := dialWorkbench(t, s, s.admin)
	mark := g.waitFrom(t, 0, "● live", sshSeen)
	g.waitFrom(t, 0, "▸ ws-alpha", sshSeen) // the one workspace, selected
	g.keys(t, "s")
	g.waitFrom(t, mark, "/mnt/cairn/ws #", sshSeen)
	list, err := s.api.FindShells(t.Context(), s.ws.ID)
	require.NoError(t, err)
	require.Len(t, list.Shells, 1, "the shell runs")

	g.close()
	ended := s.waitAudit(t, cairn.AuditSSHSessionEnded)
	require.Equal(t, "the client went away", ended.Metadata["reason"])
	require.Eventually(t, func() bool {
		list, err := s.api.FindShells(t.Context(), s.ws.ID)
		return err == nil && len(list.Shells) == 0
	}, detached+sshSeen, 100*time.Millisecond, "a shell container is left behind")
}

// TestSshNextSessionReattaches: the SSH client goes mid-shell; the v2
// shell detaches, and the same key's next session attaches to it as its
// writer from the shells screen — the screen as it was, typing reaches
// it — because the server keeps the key's shell secrets across sessions.
func TestSshNextSessionReattaches(t *testing.T) {
	s := startSSHStackWith(t, "{detachedSecs: 120}", "")
	g := dialWorkbench(t, s, s.admin)
	mark := g.waitFrom(t, 0, "● live", sshSeen)
	g.waitFrom(t, 0, "▸ ws-alpha", sshSeen)
	g.keys(t, "s")
	mark = g.waitFrom(t, mark, "/mnt/cairn/ws #", sshSeen)
	g.keys(t, "echo before-$((20+1))\r")
	g.waitFrom(t, mark, "before-21", sshSeen)
	g.close()
	require.Eventually(t, func() bool {
		list, err := s.api.FindShells(t.Context(), s.ws.ID)
		return err == nil && len(list.Shells) == 1 && list.Shells[0].Detached != nil && *list.Shells[0].Detached
	}, sshSeen, 50*time.Millisecond, "the shell is left detached")

	next := dialWorkbench(t, s, s.admin)
	mark = next.waitFrom(t, 0, "● live", sshSeen)
	next.keys(t, "W")
	// The shell's row, not the workspace's name: that is on the screen
	// before the shells list has loaded, and Enter would land on nothing.
	mark = next.waitFrom(t, mark, "detached", sshSeen)
	next.keys(t, "\r")
	mark = next.waitFrom(t, mark, "before-21", sshSeen) // the server's render of the shell's screen
	next.keys(t, "echo after-$((20+2))\r")
	next.waitFrom(t, mark, "after-22", sshSeen) // a watcher's keys would change nothing
	list, err := s.api.FindShells(t.Context(), s.ws.ID)
	require.NoError(t, err)
	require.Len(t, list.Shells, 1)
	require.False(t, *list.Shells[0].Detached, "the new session is its writer")
	next.keys(t, "exit\r")
	require.Eventually(t, func() bool {
		list, err := s.api.FindShells(t.Context(), s.ws.ID)
		return err == nil && len(list.Shells) == 0
	}, sshSeen, 100*time.Millisecond, "the shell ended with its exit")
}
