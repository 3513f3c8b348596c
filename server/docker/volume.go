package docker

import (
	"context"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// VolumeExists inspects one volume.
func (r *Runtime) VolumeExists(ctx context.Context, name string) (bool, error) {
	_, err := r.cli.VolumeInspect(ctx, name)
	switch {
	case err == nil:
		return true, nil
	case cerrdefs.IsNotFound(err):
		return false, nil
	default:
		return false, unavailable("inspect the volume", err)
	}
}

// VolumeIssue is always nil: the one engine that holds a volume is the one
// that runs its containers, so a volume that exists can always be mounted.
func (r *Runtime) VolumeIssue(context.Context, string) (*cairn.Error, error) {
	return nil, nil
}

// CreateVolume creates a local volume; the local driver cannot size one,
// so sizeBytes is not applied.
func (r *Runtime) CreateVolume(ctx context.Context, name string, labels map[string]string, _ int64) error {
	_, err := r.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local", Labels: labels})
	if err != nil {
		return unavailable("create the volume", err)
	}
	return nil
}

// MaxVolumeBytes is 0: a size is only stored, never applied, so none is
// too large.
func (r *Runtime) MaxVolumeBytes() int64 { return 0 }

// VolumeSize is 0: Docker's local volumes are not sized.
func (r *Runtime) VolumeSize(context.Context, string) (int64, error) { return 0, nil }

// RemoveVolume removes a volume without force, so the engine itself is the
// atomic in-use gate. An absent volume is not an error.
func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	err := r.cli.VolumeRemove(ctx, name, false)
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return &cairn.Error{Reason: cairn.ReasonVolumeInUse,
			Detail: "docker volume '" + name + "' is currently mounted and can't be deleted without force", Err: err}
	default:
		return unavailable("remove the volume", err)
	}
}

// maxFilteredVolumes bounds the names sent as list filters; past it the
// engine lists every running container and the answer is filtered here.
const maxFilteredVolumes = 100

// MountCounts counts, for each named volume, the running containers that
// mount it, in one engine call however many volumes are asked for. A volume
// that does not exist counts 0. This app's browse containers are not
// counted: each is cairn's own read-only reader, kept warm for BrowseIdle
// after someone looked at the files, not a user of the workspace. Counted,
// every workspace just browsed would read as in use; and a teardown stops
// it first anyway (StopBrowse).
func (r *Runtime) MountCounts(ctx context.Context, names []string) (map[string]int, error) {
	counts := make(map[string]int, len(names))
	running := filters.NewArgs(filters.Arg("status", "running"))
	for _, n := range names {
		counts[n] = 0
		if len(names) <= maxFilteredVolumes {
			running.Add("volume", n)
		}
	}
	list, err := r.cli.ContainerList(ctx, container.ListOptions{Filters: running})
	if err != nil {
		return nil, unavailable("list containers", err)
	}
	for _, c := range list {
		if c.Labels[LabelApp] == r.cfg.AppName && cairnsReader(c.Labels[LabelCommand]) {
			continue
		}
		seen := map[string]bool{}
		for _, m := range c.Mounts {
			if _, ok := counts[m.Name]; ok && m.Type == mount.TypeVolume && !seen[m.Name] {
				seen[m.Name] = true
				counts[m.Name]++
			}
		}
	}
	return counts, nil
}

// ListVolumes returns the names of the volumes whose name starts with
// prefix.
func (r *Runtime) ListVolumes(ctx context.Context, prefix string) ([]string, error) {
	resp, err := r.cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", prefix))})
	if err != nil {
		return nil, unavailable("list volumes", err)
	}
	var names []string
	for _, v := range resp.Volumes {
		// The engine's name filter is a substring match; keep true prefixes.
		if len(v.Name) >= len(prefix) && v.Name[:len(prefix)] == prefix {
			names = append(names, v.Name)
		}
	}
	return names, nil
}

// workspaceMount mounts a workspace volume at cairn.MountPath without
// Docker's copy-up. Mounting an empty named volume over a directory the
// container has — a shell's working directory is one — copies that
// directory onto the volume, mode and owner included: the root prep made
// 0777 would turn 0755 root:root, and tool containers of other UIDs could
// no longer write to their workspace.
func workspaceMount(volume string) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: volume, Target: cairn.MountPath,
		VolumeOptions: &mount.VolumeOptions{NoCopy: true}}
}

// readOnlyWorkspaceMount is workspaceMount for cairn's own reader, the
// browse container, which must never change a workspace.
func readOnlyWorkspaceMount(volume string) mount.Mount {
	m := workspaceMount(volume)
	m.ReadOnly = true
	return m
}

// cairnsReader reports cairn's own readers of a volume, the browse and
// watch containers, which never count as its users.
func cairnsReader(command string) bool {
	return command == sidecar.CommandServe || command == sidecar.CommandWatch
}
