package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/servicetest"
)

// appName is the service's namespace in these tests.
const appName = "cairntest"

// fixture is what setup hands a test besides the service: the fakes, the
// service's clock, and what the fakes saw. Fakes run synchronously on the
// test's goroutine unless a test says otherwise.
type fixture struct {
	store   *servicetest.Store
	runtime *servicetest.Runtime
	objects *servicetest.ObjectStore
	now     time.Time // what the service's Now returns

	audits   []*cairn.AuditEvent
	updates  []cairn.Workspace // rows passed to UpdateWorkspace, copied
	locks    []service.LockMode
	held     bool // a workspace lock is held
	releases int
}

func setup(t *testing.T) (*service.Service, *fixture) {
	t.Helper()
	f := &fixture{
		store:   &servicetest.Store{},
		runtime: &servicetest.Runtime{},
		objects: &servicetest.ObjectStore{},
		now:     time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC),
	}
	f.store.InsertAuditFunc = func(_ context.Context, ev *cairn.AuditEvent) error {
		f.audits = append(f.audits, ev)
		return nil
	}
	// The bucket answers unless a test says otherwise; only Ready asks.
	f.objects.PingFunc = func(context.Context) error { return nil }
	svc := service.New(f.store, f.runtime, f.objects, service.Config{
		AppName: appName,
		Now:     func() time.Time { return f.now },
	})
	return svc, f
}

// newWorkspace returns a stored workspace, last written an hour before the
// fixture's clock.
func (f *fixture) newWorkspace(state cairn.VolumeState) cairn.Workspace {
	id := uuid.NewString()
	return cairn.Workspace{
		ID:          id,
		Name:        "alpha",
		VolumeName:  appName + "-" + id,
		VolumeState: state,
		CreatedAt:   f.now.Add(-2 * time.Hour),
		UpdatedAt:   f.now.Add(-time.Hour),
	}
}

// row makes the store hold ws: reads return a copy, any other ID is not
// found, and updates are recorded.
// storedWorkspace is a new workspace that the fake store finds.
func (f *fixture) storedWorkspace(state cairn.VolumeState) cairn.Workspace {
	ws := f.newWorkspace(state)
	f.row(ws)
	return ws
}

func (f *fixture) row(ws cairn.Workspace) {
	find := func(_ context.Context, id string) (*cairn.Workspace, error) {
		if id != ws.ID {
			return nil, errNotFound(id)
		}
		c := ws
		return &c, nil
	}
	f.store.FindWorkspaceFunc = find
	f.store.LockWorkspaceRowFunc = find
	f.store.LockArtifactRowsFunc = func(context.Context, string) error { return nil }
	f.store.UpdateWorkspaceFunc = func(_ context.Context, w *cairn.Workspace) error {
		f.updates = append(f.updates, *w)
		return nil
	}
}

// lock makes the store grant workspace locks and track whether one is held.
func (f *fixture) lock() {
	f.store.LockWorkspaceFunc = func(_ context.Context, _ string, mode service.LockMode) (func(), error) {
		f.locks = append(f.locks, mode)
		f.held = true
		return func() { f.held = false; f.releases++ }, nil
	}
}

func errNotFound(id string) error {
	return cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace %s not found", id)
}
