package servicetest

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

var _ service.Runtime = (*Runtime)(nil)

// Runtime is a fake service.Runtime.
type Runtime struct {
	PingFunc         func(ctx context.Context) error
	VolumeExistsFunc func(ctx context.Context, name string) (bool, error)
	VolumeIssueFunc  func(ctx context.Context, name string) (*cairn.Error, error)
	VolumeSizeFunc   func(ctx context.Context, name string) (int64, error)
	CreateVolumeFunc func(ctx context.Context, name string, labels map[string]string, sizeBytes int64) error
	RemoveVolumeFunc func(ctx context.Context, name string) error
	MountCountsFunc  func(ctx context.Context, volumes []string) (map[string]int, error)
	RunSidecarFunc   func(ctx context.Context, spec service.SidecarSpec) (*service.SidecarRun, error)
	BrowseFunc       func(ctx context.Context, t service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error)
	StopBrowseFunc   func(ctx context.Context, workspaceID string) error
	StopWriterFunc   func(ctx context.Context, workspaceID string) error
	WatchFunc        func(ctx context.Context, t service.BrowseTarget, pollEvery time.Duration) (service.WatchStream, error)
	// MaxVolume is what MaxVolumeBytes reports; 0, no bound, by default.
	MaxVolume int64
}

func (r *Runtime) Ping(ctx context.Context) error {
	if r.PingFunc == nil {
		return notSet("Runtime.Ping")
	}
	return r.PingFunc(ctx)
}

func (r *Runtime) VolumeExists(ctx context.Context, name string) (bool, error) {
	if r.VolumeExistsFunc == nil {
		return false, notSet("Runtime.VolumeExists")
	}
	return r.VolumeExistsFunc(ctx, name)
}

// VolumeIssue defaults to none: a fake runtime's volumes always take
// containers.
func (r *Runtime) VolumeIssue(ctx context.Context, name string) (*cairn.Error, error) {
	if r.VolumeIssueFunc == nil {
		return nil, nil
	}
	return r.VolumeIssueFunc(ctx, name)
}

func (r *Runtime) CreateVolume(ctx context.Context, name string, labels map[string]string, sizeBytes int64) error {
	if r.CreateVolumeFunc == nil {
		return notSet("Runtime.CreateVolume")
	}
	return r.CreateVolumeFunc(ctx, name, labels, sizeBytes)
}

func (r *Runtime) MaxVolumeBytes() int64 { return r.MaxVolume }

// VolumeSize defaults to 0: a fake runtime does not size volumes.
func (r *Runtime) VolumeSize(ctx context.Context, name string) (int64, error) {
	if r.VolumeSizeFunc == nil {
		return 0, nil
	}
	return r.VolumeSizeFunc(ctx, name)
}

func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	if r.RemoveVolumeFunc == nil {
		return notSet("Runtime.RemoveVolume")
	}
	return r.RemoveVolumeFunc(ctx, name)
}

func (r *Runtime) MountCounts(ctx context.Context, volumes []string) (map[string]int, error) {
	if r.MountCountsFunc == nil {
		return nil, notSet("Runtime.MountCounts")
	}
	return r.MountCountsFunc(ctx, volumes)
}

func (r *Runtime) RunSidecar(ctx context.Context, spec service.SidecarSpec) (*service.SidecarRun, error) {
	if r.RunSidecarFunc == nil {
		return nil, notSet("Runtime.RunSidecar")
	}
	return r.RunSidecarFunc(ctx, spec)
}

func (r *Runtime) Browse(ctx context.Context, t service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	if r.BrowseFunc == nil {
		return nil, notSet("Runtime.Browse")
	}
	return r.BrowseFunc(ctx, t, req)
}

func (r *Runtime) Watch(ctx context.Context, t service.BrowseTarget, pollEvery time.Duration) (service.WatchStream, error) {
	if r.WatchFunc == nil {
		return nil, notSet("Runtime.Watch")
	}
	return r.WatchFunc(ctx, t, pollEvery)
}

// StopBrowse defaults to success: a fake runtime has no browse container.
func (r *Runtime) StopBrowse(ctx context.Context, workspaceID string) error {
	if r.StopBrowseFunc == nil {
		return nil
	}
	return r.StopBrowseFunc(ctx, workspaceID)
}

// StopWriter defaults to success: a fake runtime has no writer.
func (r *Runtime) StopWriter(ctx context.Context, workspaceID string) error {
	if r.StopWriterFunc == nil {
		return nil
	}
	return r.StopWriterFunc(ctx, workspaceID)
}
