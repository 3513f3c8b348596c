package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWebhookConfig(t *testing.T) {
	t.Parallel()
	valid := func() WebhookConfig {
		return WebhookConfig{Name: "ops", URL: "https://hooks.example/cairn", SecretFile: "/etc/cairn/ops.secret",
			Events: []string{"workspace.deleted"}}
	}

	t.Run("Rejects", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			mutate func(c *Config)
			want   string
		}{
			"BadName":      {func(c *Config) { c.Webhooks[0].Name = "a b" }, "webhooks[0].name"},
			"NameTwice":    {func(c *Config) { c.Webhooks = append(c.Webhooks, valid()) }, `webhooks[1].name: "ops" is already webhooks[0]`},
			"NotHTTP":      {func(c *Config) { c.Webhooks[0].URL = "ftp://hooks.example/" }, "webhooks[0].url"},
			"Relative":     {func(c *Config) { c.Webhooks[0].URL = "/hook" }, "webhooks[0].url"},
			"UserInfo":     {func(c *Config) { c.Webhooks[0].URL = "https://u:p@hooks.example/" }, "webhooks[0].url"},
			"NoSecret":     {func(c *Config) { c.Webhooks[0].SecretFile = "" }, "webhooks[0].secretFile: required"},
			"UnknownEvent": {func(c *Config) { c.Webhooks[0].Events = []string{"files.changed"} }, "webhooks[0].events[0]"},
			"TooManyTries": {func(c *Config) { c.Webhooks[0].MaxAttempts = 51 }, "webhooks[].maxAttempts"},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := validConfig()
				c.Webhooks = []WebhookConfig{valid()}
				require.NoError(t, c.Validate())
				tc.mutate(&c)
				require.ErrorContains(t, c.Validate(), tc.want)
			})
		}
	})

	t.Run("SecretFromItsFile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "short"), []byte("too short\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "ok"), []byte("  sixteen bytes or more\n"), 0o600))
		c := validConfig()
		c.Webhooks = []WebhookConfig{valid()}
		c.Webhooks[0].SecretFile = filepath.Join(dir, "ok")
		hooks, err := c.webhookHooks()
		require.NoError(t, err)
		require.Equal(t, "sixteen bytes or more", string(hooks[0].Secret), "trimmed")
		require.Equal(t, 10, hooks[0].MaxAttempts, "the default")
		c.Webhooks[0].SecretFile = filepath.Join(dir, "short")
		_, err = c.webhookHooks()
		require.ErrorContains(t, err, "webhooks[0].secretFile: the secret is 9 bytes; at least 16")
		c.Webhooks[0].SecretFile = filepath.Join(dir, "absent")
		_, err = c.webhookHooks()
		require.ErrorContains(t, err, "webhooks[0].secretFile")
	})
}
