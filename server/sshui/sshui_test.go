package sshui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/route"
)

func TestLimits(t *testing.T) {
	t.Parallel()
	l := newLimits(3, 2)
	a1, why := l.acquire("a")
	require.Empty(t, why)
	_, why = l.acquire("a")
	require.Empty(t, why)
	_, why = l.acquire("a")
	require.Contains(t, why, "ssh.maxSessionsPerKey")
	_, why = l.acquire("b")
	require.Empty(t, why)
	_, why = l.acquire("c")
	require.Contains(t, why, "ssh.maxSessions")
	a1()
	_, why = l.acquire("c")
	require.Empty(t, why, "a released place is free again")
}

func TestOfferKeepsTheLatest(t *testing.T) {
	t.Parallel()
	ch := make(chan int, 1)
	for i := range 5 {
		offer(ch, i)
	}
	require.Equal(t, 4, <-ch)
	require.Empty(t, ch)
}

func TestSessionEnv(t *testing.T) {
	t.Parallel()
	env := sessionEnv([]string{"NO_COLOR=1", "CAIRN_URL=http://elsewhere", "CAIRN_TOKEN=x", "LC_ALL=de_DE.UTF-8", "PATH=/x"}, "screen-256color")
	require.Equal(t, environ{"TERM": "screen-256color", "NO_COLOR": "1", "LC_ALL": "de_DE.UTF-8"}, env,
		"only the terminal's own settings pass; never the client's CAIRN_*")
	require.Equal(t, "C.UTF-8", sessionEnv(nil, "xterm")["LANG"], "no locale sent: UTF-8")
}

func TestTUIConfig(t *testing.T) {
	t.Parallel()
	cfg, err := tuiConfig(environ{"TERM": "xterm", "NO_COLOR": "1", "LANG": "C.UTF-8"}, "http://127.0.0.1:1", "secret", true)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:1", cfg.Server)
	require.Equal(t, "secret", cfg.Token)
	require.Equal(t, "never", cfg.Color)
	require.True(t, cfg.ReadOnly)
	require.False(t, cfg.ASCII())
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	require.True(t, readOnly([]route.Scope{route.Read, route.Write, route.Shell}))
	require.False(t, readOnly([]route.Scope{route.Read, route.Admin}))
}
