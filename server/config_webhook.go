package server

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"os"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

// WebhookConfig is one entry of `webhooks`: a receiver of signed POSTs
// of the events it names (docs/operations.md, Webhooks).
type WebhookConfig struct {
	// The webhook's name, unique among webhooks; deliveries are listed by
	// it. ASCII letters, digits, `-` and `_`.
	Name string `yaml:"name"`
	// Where the events are POSTed: an absolute `http` or `https` URL. A
	// redirect is not followed.
	URL string `yaml:"url"`
	// A file holding the secret that signs each POST (HMAC-SHA256), at
	// least 16 bytes, read once at start; never in the config file itself.
	// A relative path is taken from the config file's directory.
	SecretFile string `yaml:"secretFile"`
	// The event types it is sent; empty for all of them.
	Events []string `yaml:"events"`
	// Attempts of one delivery before it is failed for good (0: 10); the
	// waits between them double from 1 s, up to 10 minutes.
	MaxAttempts int `yaml:"maxAttempts"`
}

// minWebhookSecret is the shortest secret a webhook may have, in bytes.
const minWebhookSecret = 16

func validateWebhooks(p *configProblems, hooks []WebhookConfig) {
	seen := map[string]int{}
	for i, h := range hooks {
		key := fmt.Sprintf("webhooks[%d]", i)
		if err := cairn.ValidateName("webhook", h.Name); err != nil {
			p.add(key+".name", "%s", cairn.ErrorDetail(err))
		} else if j, dup := seen[h.Name]; dup {
			p.add(key+".name", "%q is already webhooks[%d]", h.Name, j)
		}
		seen[h.Name] = i
		if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			p.add(key+".url", "must be an absolute http or https URL without user information")
		}
		p.required(key+".secretFile", h.SecretFile)
		events := configRules["webhooks[].events"]
		for j, ev := range h.Events {
			if !events.allows(ev) {
				p.add(fmt.Sprintf("%s.events[%d]", key, j), "must be %s, got %q", orList(events.values), ev)
			}
		}
		inRange(p, "webhooks[].maxAttempts", h.MaxAttempts)
	}
}

func eventTypeNames() []string {
	names := make([]string, len(webhook.EventTypes))
	for i, t := range webhook.EventTypes {
		names[i] = string(t)
	}
	return names
}

// webhookHooks reads each webhook's secret file and returns the hooks.
func (c *Config) webhookHooks() ([]webhook.Hook, error) {
	hooks := make([]webhook.Hook, 0, len(c.Webhooks))
	for i, h := range c.Webhooks {
		secret, err := os.ReadFile(h.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("webhooks[%d].secretFile: %w", i, err)
		}
		secret = bytes.TrimSpace(secret)
		if len(secret) < minWebhookSecret {
			return nil, fmt.Errorf("webhooks[%d].secretFile: the secret is %d bytes; at least %d are needed",
				i, len(secret), minWebhookSecret)
		}
		events := make([]cairn.EventType, len(h.Events))
		for j, ev := range h.Events {
			events[j] = cairn.EventType(ev)
		}
		hooks = append(hooks, webhook.Hook{Name: h.Name, URL: h.URL, Secret: secret, Events: events,
			MaxAttempts: cmp.Or(h.MaxAttempts, webhook.DefaultMaxAttempts)})
	}
	return hooks, nil
}
