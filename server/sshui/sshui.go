// Package sshui is the workbench over SSH: `ssh -p PORT host` opens
// cairn-tui, run in this server process for the session, so an operator
// needs nothing installed but an SSH client. Each session gets a PTY of
// its own on this machine, a lipgloss renderer of its own (its TERM and
// NO_COLOR), and a bearer token minted for its life with the scopes of
// its key; the TUI talks to this server's own API over loopback through
// the same client as anywhere else, so every scope check is the API's.
package sshui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	gossh "golang.org/x/crypto/ssh"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
	"github.com/cairn-dev/cairn/tui/shell"
)

// Key is one authorized public key: who signs in with it and what the
// session may do.
type Key struct {
	Name      string
	PublicKey gossh.PublicKey
	Scopes    []route.Scope
}

// Tokens mints the session's bearer token (auth.Guard.Register).
type Tokens interface {
	Register(name string, scopes []route.Scope) (secret string, revoke func())
}

// Auditor writes a session's start and end to the audit trail.
type Auditor interface {
	RecordSSHSession(ctx context.Context, typ cairn.AuditType, meta map[string]any) error
}

// Config is what the SSH front door needs. Zero limits get defaults.
type Config struct {
	Keys        []Key
	HostKeyPath string // made on first start (ed25519) and kept
	// APIURL is this server's own API, as the session's client reaches
	// it: a loopback URL with the path prefix.
	APIURL            string
	MaxSessions       int
	MaxSessionsPerKey int
	// IdleTimeout ends a session that has had no keystroke for so long;
	// MaxLifetime ends every session after so long.
	IdleTimeout time.Duration
	MaxLifetime time.Duration
	Tokens      Tokens
	Audit       Auditor
	Version     string
	Logger      *slog.Logger
	Now         func() time.Time
}

// Server is the SSH listener's server.
type Server struct {
	cfg    Config
	ssh    *ssh.Server
	limits *limits
	http   *http.Client // one loopback transport for every session's client

	// secrets holds, per key name, the secrets of the v2 shells its
	// sessions created: a session gone mid-shell leaves the shell
	// detached, and the key's next session reattaches to it from the
	// shells screen. One keeper per configured key, each bounded.
	secretsMu sync.Mutex
	secrets   map[string]*shell.MemoryKeeper

	// stopping ends every session's program when the server shuts down:
	// ssh.Server.Shutdown waits for connections, which a TUI never ends
	// by itself.
	stopping chan struct{}
	stopOnce sync.Once
	sessions sync.WaitGroup
}

// New checks cfg and builds the server, making the host key if there is
// none at cfg.HostKeyPath. It does not listen.
func New(cfg Config) (*Server, error) {
	switch {
	case len(cfg.Keys) == 0:
		return nil, errors.New("sshui: no authorized keys")
	case cfg.Tokens == nil || cfg.Audit == nil || cfg.APIURL == "" || cfg.HostKeyPath == "":
		return nil, errors.New("sshui: Config.Tokens, Audit, APIURL and HostKeyPath are required")
	}
	cfg.MaxSessions = cmp.Or(cfg.MaxSessions, 32)
	cfg.MaxSessionsPerKey = cmp.Or(cfg.MaxSessionsPerKey, 4)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, 30*time.Minute)
	cfg.MaxLifetime = cmp.Or(cfg.MaxLifetime, 8*time.Hour)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, limits: newLimits(cfg.MaxSessions, cfg.MaxSessionsPerKey),
		http: loopbackClient(), stopping: make(chan struct{}), secrets: make(map[string]*shell.MemoryKeeper)}
	srv, err := wish.NewServer(
		wish.WithHostKeyPath(cfg.HostKeyPath),
		// Public keys only: with no password or keyboard-interactive
		// handler, the server offers neither method.
		wish.WithPublicKeyAuth(s.authorize),
		// The connection's own deadline is a backstop for what the
		// session's timers do with a message: a handshake that never
		// finishes, a session wedged past its lifetime.
		wish.WithIdleTimeout(cfg.IdleTimeout+time.Minute),
		wish.WithMaxTimeout(cfg.MaxLifetime+time.Minute),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh host key %s: %w", cfg.HostKeyPath, err)
	}
	srv.Version = "cairn"
	srv.Handler = s.handle
	s.ssh = srv
	return s, nil
}

// loopbackClient is the HTTP client every session's API client shares:
// one pool of loopback connections instead of one per session.
func loopbackClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// Serve answers SSH connections on ln until Shutdown; it returns nil
// then.
func (s *Server) Serve(ln net.Listener) error {
	err := s.ssh.Serve(ln)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown ends every session — each program quits, each session's
// audit row is written — and closes the listener, waiting until ctx is
// done at most.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stopping) })
	err := s.ssh.Shutdown(ctx)
	done := make(chan struct{})
	go func() { s.sessions.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, ctx.Err())
	}
	s.http.CloseIdleConnections()
	return err
}

// Open counts the sessions being served now; a session's place is given
// back only once it is over (its terminal closed, its end audited).
func (s *Server) Open() int { return s.limits.open() }

// secretsOf is the keeper of key's shell secrets, shared by its sessions.
func (s *Server) secretsOf(key string) *shell.MemoryKeeper {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	k, ok := s.secrets[key]
	if !ok {
		k = shell.NewMemoryKeeper()
		s.secrets[key] = k
	}
	return k
}
