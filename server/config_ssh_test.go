package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// testSSHKey and otherSSHKey are public keys of the authorized_keys form.
const (
	testSSHKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVM7HKjgzq4h4EjDmF8sI4Ln1ZFxHKsmWBDAydCsxBX alice@laptop"
	otherSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJDtQXVchMSI7q9d3YYFcCaYhRf0Fo4R8DChS9iI8LdM bob@desk"
)

func TestParseSSHConfig(t *testing.T) {
	t.Parallel()
	c, _, err := ParseConfig([]byte(minimalYAML + `
ssh:
  listen: 0.0.0.0:2222
  hostKeyPath: /var/lib/cairn/ssh_host_ed25519
  authorizedKeys:
    - {name: alice, key: "` + testSSHKey + `", scopes: [read, write, admin, shell]}
    - {name: bob, key: "` + otherSSHKey + `", scopes: [read]}
  maxSessions: 8
  maxSessionsPerKey: 2
  idleTimeoutSecs: 600
  maxLifetimeSecs: 3600
`))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	require.True(t, c.SSHEnabled())
	require.Equal(t, SSHConfig{
		Listen: "0.0.0.0:2222", HostKeyPath: "/var/lib/cairn/ssh_host_ed25519",
		AuthorizedKeys: []SSHKeyConfig{
			{Name: "alice", Key: testSSHKey, Scopes: []string{"read", "write", "admin", "shell"}},
			{Name: "bob", Key: otherSSHKey, Scopes: []string{"read"}},
		},
		MaxSessions: 8, MaxSessionsPerKey: 2, IdleTimeoutSecs: 600, MaxLifetimeSecs: 3600,
	}, c.SSH)

	t.Run("OffByDefault", func(t *testing.T) {
		t.Parallel()
		c, _, err := ParseConfig([]byte(minimalYAML))
		require.NoError(t, err)
		require.False(t, c.SSHEnabled())
		require.Equal(t, DefaultSSHConfig(), c.SSH)
	})

	t.Run("UnknownKeyRefused", func(t *testing.T) {
		t.Parallel()
		_, _, err := ParseConfig([]byte(minimalYAML + "ssh: {listen: 127.0.0.1:0, passwords: true}\n"))
		require.ErrorContains(t, err, "ssh.passwords")
	})
}

func TestSSHConfigValidateRejects(t *testing.T) {
	t.Parallel()
	key := func(name, line string, scopes ...string) SSHKeyConfig {
		return SSHKeyConfig{Name: name, Key: line, Scopes: scopes}
	}
	for name, tc := range map[string]struct {
		mutate func(s *SSHConfig)
		want   string
	}{
		"BadListen":      {func(s *SSHConfig) { s.Listen = "2222" }, "ssh.listen: must be host:port"},
		"NameNotIP":      {func(s *SSHConfig) { s.Listen = "example.com:22" }, "ssh.listen: must be an IP address"},
		"NoHostKey":      {func(s *SSHConfig) { s.HostKeyPath = "" }, "ssh.hostKeyPath: required"},
		"NoKeys":         {func(s *SSHConfig) { s.AuthorizedKeys = nil }, "ssh.authorizedKeys: at least one key"},
		"NotAKey":        {func(s *SSHConfig) { s.AuthorizedKeys[0].Key = "hunter2" }, "ssh.authorizedKeys[0].key"},
		"NoScopes":       {func(s *SSHConfig) { s.AuthorizedKeys[0].Scopes = nil }, "ssh.authorizedKeys[0].scopes"},
		"UnknownScope":   {func(s *SSHConfig) { s.AuthorizedKeys[0].Scopes = []string{"root"} }, "unknown scope"},
		"BadName":        {func(s *SSHConfig) { s.AuthorizedKeys[0].Name = "a b" }, "ssh.authorizedKeys[0].name"},
		"NoSessions":     {func(s *SSHConfig) { s.MaxSessions = 0 }, "ssh.maxSessions"},
		"PerKeyOverAll":  {func(s *SSHConfig) { s.MaxSessionsPerKey = s.MaxSessions + 1 }, "ssh.maxSessionsPerKey"},
		"NoIdleTimeout":  {func(s *SSHConfig) { s.IdleTimeoutSecs = 0 }, "ssh.idleTimeoutSecs"},
		"NoMaxLifetime":  {func(s *SSHConfig) { s.MaxLifetimeSecs = 0 }, "ssh.maxLifetimeSecs"},
		"KeyListedTwice": {func(s *SSHConfig) { s.AuthorizedKeys = append(s.AuthorizedKeys, key("eve", testSSHKey, "read")) }, "already listed as ssh.authorizedKeys[0]"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.SSH.Listen, c.SSH.HostKeyPath = "127.0.0.1:0", "/tmp/host_key"
			c.SSH.AuthorizedKeys = []SSHKeyConfig{key("alice", testSSHKey, "read"), key("bob", otherSSHKey, "read")}
			require.NoError(t, c.Validate())
			tc.mutate(&c.SSH)
			require.ErrorContains(t, c.Validate(), tc.want)
		})
	}
}
