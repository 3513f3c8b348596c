package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn"
)

var (
	_ cairn.MaintenanceService = (*Client)(nil)
	_ cairn.AuditService       = (*Client)(nil)
)

// Sweep runs one reconciliation pass now (workspaceID "" for a full pass)
// and returns what it did. Not retried. A server without a reconciler
// answers 404 with no reason.
func (c *Client) Sweep(ctx context.Context, workspaceID string) (*cairn.SweepResult, error) {
	var q url.Values
	if workspaceID != "" {
		q = url.Values{"workspace_id": {workspaceID}}
	}
	var out struct {
		Sweep *cairn.SweepResult `json:"sweep"`
	}
	k := call{method: http.MethodPost, path: pathOf("maintenance", "sweep"), query: q, long: true}
	if err := c.do(ctx, k, &out); err != nil {
		return nil, err
	}
	return out.Sweep, nil
}

// FindAuditEvents lists audit events in creation order, newest first with
// f.Newest; with f.Limit zero it pages through every match, otherwise it
// returns the one page asked for.
func (c *Client) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	return collect(c.AuditEvents(ctx, f))
}

// AuditEvents yields the audit events f selects as pages arrive, stopping
// at the first error, which it yields.
func (c *Client) AuditEvents(ctx context.Context, f cairn.AuditFilter) iter.Seq2[*cairn.AuditEvent, error] {
	q := url.Values{}
	if f.WorkspaceID != "" {
		q.Set("workspace_id", f.WorkspaceID)
	}
	for _, t := range f.Types {
		q.Add("type", string(t))
	}
	if f.Newest {
		q.Set("order", "desc")
	}
	return pages(ctx, c, pathOf("audit"), q, f.Page, func(p *struct {
		AuditEvents []*cairn.AuditEvent `json:"audit_events"`
	}) []*cairn.AuditEvent {
		return p.AuditEvents
	})
}
