package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

func (a *API) listAudit(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, err := page(q)
	if err != nil {
		return nil, err
	}
	newest, err := newestFirst(q.Get("order"))
	if err != nil {
		return nil, err
	}
	f := cairn.AuditFilter{WorkspaceID: q.Get("workspace_id"), Newest: newest, Page: p}
	for _, s := range q["type"] {
		t, err := cairn.ParseAuditType(s)
		if err != nil {
			return nil, failed(err, "Failed to list audit events")
		}
		f.Types = append(f.Types, t)
	}
	list, err := a.svc.FindAuditEvents(r.Context(), f)
	if err != nil {
		return nil, failed(err, "Failed to list audit events")
	}
	if list == nil {
		list = []*cairn.AuditEvent{} // this key is always present
	}
	return struct {
		AuditEvents []*cairn.AuditEvent `json:"audit_events"`
	}{list}, nil
}

// newestFirst reads 'order': asc (the default) or desc.
func newestFirst(order string) (bool, error) {
	switch order {
	case "", "asc":
		return false, nil
	case "desc":
		return true, nil
	}
	return false, queryError("Query parameter 'order' must be asc or desc")
}

func (a *API) sweep(r *http.Request) (any, error) {
	id := r.URL.Query().Get("workspace_id")
	res, err := a.cfg.Maintenance.Sweep(r.Context(), id)
	switch {
	case cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound:
		return nil, failed(err, "Failed to fetch workspace %s", id)
	case err != nil:
		return nil, failed(err, "Maintenance sweep failed")
	}
	return struct {
		Sweep *cairn.SweepResult `json:"sweep"`
	}{res}, nil
}
