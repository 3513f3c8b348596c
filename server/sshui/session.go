package sshui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/tui"
)

// Why a session ended, as its audit row and its last line say.
var (
	errIdle     = errors.New("idle timeout (ssh.idleTimeoutSecs)")
	errLifetime = errors.New("maximum lifetime reached (ssh.maxLifetimeSecs)")
	errShutdown = errors.New("the server is shutting down")
	errGone     = errors.New("the client went away")
)

// handle serves one SSH session: refusals first, each in a sentence on
// stderr with exit status 1, then the workbench until the operator quits
// or the session ends.
func (s *Server) handle(sess ssh.Session) {
	key := keyOf(sess)
	ptyReq, windows, isPty := sess.Pty()
	var refusal string
	switch {
	case key == nil:
		refusal = "this key is not authorized"
	case len(sess.Command()) > 0:
		refusal = "this server runs only the workbench: connect without a command"
	case !isPty:
		refusal = "the workbench needs a terminal: connect with ssh -t"
	}
	if refusal != "" {
		s.refuse(sess, refusal)
		return
	}
	release, refusal := s.limits.acquire(key.Name)
	if refusal != "" {
		s.refuse(sess, refusal)
		return
	}
	defer release()
	s.sessions.Add(1)
	defer s.sessions.Done()
	s.serve(sess, key, ptyReq, windows)
}

func (s *Server) refuse(sess ssh.Session, why string) {
	_, _ = io.WriteString(sess.Stderr(), "cairn: "+why+"\r\n")
	_ = sess.Exit(1)
}

// session is what one session's audit rows and log lines say about it.
type session struct {
	key         *Key
	fingerprint string
	remote      string
	started     time.Time
}

func (s *Server) actorContext(ctx context.Context, k *Key) context.Context {
	return cairn.WithActor(ctx, "ssh:"+k.Name)
}

// serve runs the workbench for the session and exits it with the
// workbench's status.
func (s *Server) serve(sess ssh.Session, key *Key, ptyReq ssh.Pty, windows <-chan ssh.Window) {
	info := session{key: key, fingerprint: gossh.FingerprintSHA256(key.PublicKey),
		remote: sess.RemoteAddr().String(), started: s.cfg.Now()}
	ctx, cancel := context.WithCancelCause(sess.Context())
	defer cancel(nil)
	ctx, cancelLife := context.WithDeadlineCause(ctx, info.started.Add(s.cfg.MaxLifetime), errLifetime)
	defer cancelLife()
	s.audit(ctx, info, cairn.AuditSSHSessionStarted, nil)
	term, err := openTerminal(sess, ptyReq.Window, s.cfg.Now)
	if err != nil {
		s.cfg.Logger.Error("ssh session: open a pty", "err", err)
		s.endAudit(info, fmt.Errorf("open a pty: %w", err))
		_ = sess.Exit(1)
		return
	}
	stop := s.watch(ctx, cancel, term, windows)
	err = s.runWorkbench(ctx, sess, key, ptyReq, term)
	term.closeSlave()
	stop()
	why := context.Cause(ctx)
	if why != nil && !errors.Is(why, context.Canceled) {
		_, _ = io.WriteString(sess.Stderr(), "cairn: session ended: "+why.Error()+"\r\n")
	}
	// Exit closes the channel, which ends the input pump's read.
	_ = sess.Exit(exitStatus(err, why))
	_ = term.close()
	s.endAudit(info, endReason(err, why))
}

// watch applies window changes, and ends the session (its context's
// cause says why) when it idles too long, the server shuts down or the
// client goes; a running shell is hung up then. stop ends the watching
// and waits for it.
func (s *Server) watch(ctx context.Context, cancel context.CancelCauseFunc, term *terminal, windows <-chan ssh.Window) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		idle := time.NewTimer(s.cfg.IdleTimeout)
		defer idle.Stop()
		for {
			select {
			case w := <-windows:
				term.resize(w)
			case <-idle.C:
				if left := s.cfg.IdleTimeout - term.idleFor(); left > 0 {
					idle.Reset(left)
					continue
				}
				cancel(errIdle)
			case <-s.stopping:
				cancel(errShutdown)
			case <-ctx.Done():
				term.hangUp()
				<-quit
				return
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// runWorkbench runs cairn-tui on the session's terminal against this
// server's API with a token minted for the session.
func (s *Server) runWorkbench(ctx context.Context, sess ssh.Session, key *Key, ptyReq ssh.Pty, term *terminal) error {
	secret, revoke := s.cfg.Tokens.Register("ssh:"+key.Name, key.Scopes)
	defer revoke()
	env := sessionEnv(sess.Environ(), ptyReq.Term)
	cfg, err := tuiConfig(env, s.cfg.APIURL, secret, readOnly(key.Scopes))
	if err != nil {
		return err
	}
	backend, err := newBackend(s.cfg.APIURL, secret, s.cfg.Version, s.http)
	if err != nil {
		return err
	}
	renderer := lipgloss.NewRenderer(term.slave, termenv.WithEnvironment(env), termenv.WithTTY(true), termenv.WithUnsafe())
	renderer.SetColorProfile(renderer.Output().EnvColorProfile())
	// The background cannot be asked for before the program owns the
	// terminal (lipgloss#73); auto themes draw for a dark one.
	renderer.SetHasDarkBackground(cfg.Theme != "light")
	return tui.Run(ctx, tui.RunOptions{
		Options: tui.Options{Config: cfg, Backend: backend, Output: term.slave, Remote: true,
			Clipboard: tui.NewOSC52(term.slave, env), ShellCommand: term.shellFactory,
			ShellSecrets: s.secretsOf(key.Name)},
		Input: term.slave, StdoutTerminal: true, Renderer: renderer, Resizes: term.resizes,
		FPS: 60, Hosted: true,
	})
}

// readOnly is the TUI's read-only mode for a key without admin: it hides
// every mutating key rather than offering actions the API would refuse.
func readOnly(scopes []route.Scope) bool { return !slices.Contains(scopes, route.Admin) }

// exitStatus is 0 for a quit or an ended session, 1 when the workbench
// failed.
func exitStatus(err, why error) int {
	if err != nil && why == nil {
		return 1
	}
	return 0
}

func endReason(err, why error) error {
	if why != nil && !errors.Is(why, context.Canceled) {
		return why
	}
	if why != nil {
		return errGone
	}
	return err // nil: the operator quit
}

func (s *Server) endAudit(info session, reason error) {
	meta := map[string]any{"ended_at": s.cfg.Now().UTC().Format(time.RFC3339Nano),
		"duration_ms": s.cfg.Now().Sub(info.started).Milliseconds(), "reason": "quit"}
	if reason != nil {
		meta["reason"] = reason.Error()
	}
	// The session's context is over; the row must still be written.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.audit(ctx, info, cairn.AuditSSHSessionEnded, meta)
}

func (s *Server) audit(ctx context.Context, info session, typ cairn.AuditType, extra map[string]any) {
	meta := map[string]any{"key_name": info.key.Name, "key_fingerprint": info.fingerprint,
		"remote_addr": info.remote, "started_at": info.started.UTC().Format(time.RFC3339Nano)}
	for k, v := range extra {
		meta[k] = v
	}
	if err := s.cfg.Audit.RecordSSHSession(s.actorContext(ctx, info.key), typ, meta); err != nil {
		s.cfg.Logger.LogAttrs(ctx, slog.LevelError, "ssh session: audit", slog.String("type", string(typ)),
			slog.String("key_name", info.key.Name), slog.String("err", err.Error()))
	}
}

// sessionEnv is the environment the session's TUI reads: the terminal
// type of the PTY request and what the client sent of NO_COLOR,
// COLORTERM and the locale; nothing else of the client's (no CAIRN_*,
// which could point the session at another server). A client that sends
// no locale gets UTF-8, as every terminal an SSH client runs in has.
func sessionEnv(sent []string, termType string) environ {
	env := environ{"TERM": termType}
	for _, kv := range sent {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "NO_COLOR", "COLORTERM", "LANG", "LC_ALL", "LC_CTYPE":
			env[k] = v
		}
	}
	if env["LANG"] == "" && env["LC_ALL"] == "" && env["LC_CTYPE"] == "" {
		env["LANG"] = "C.UTF-8"
	}
	return env
}

// environ is a fixed environment: termenv's Environ and the TUI config's
// Getenv.
type environ map[string]string

func (e environ) Getenv(k string) string { return e[k] }

func (e environ) Environ() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}
