package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/service"
)

// HolderDir is where a shell container finds the holder: the cairn-sidecar
// binary, on a read-only volume (the image the operator chose for shells
// need not carry it).
const HolderDir = "/opt/cairn"

// holderBinary is the holder's path in a shell container.
const holderBinary = HolderDir + "/cairn-sidecar"

// sidecarBinary is the binary's path in the sidecar image.
const sidecarBinary = "/cairn-sidecar"

// holderVolumes remembers the holder volume this process made sure of.
type holderVolumes struct {
	mu   sync.Mutex
	name string // "" until one was filled
}

// StartHolder creates and starts the container of a v2 shell: the holder
// (cairn-sidecar hold) as its main process under Docker's init, configured
// by env, with the shell containers' posture, a private tmpfs for its socket
// and recording, and no TTY — the holder makes the PTY, so the engine never
// sees a byte of the session. The create runs detached from ctx, like
// every create. Reasons: shell_image_missing, docker_unavailable, internal.
func (s *Shells) StartHolder(ctx context.Context, spec service.ShellSpec, hc holder.Config, key []byte) (string, error) {
	vol, err := s.holderVolume(ctx)
	if err != nil {
		return "", err
	}
	hc.Argv = s.shellArgv()
	env, err := holder.Env(hc, key)
	if err != nil {
		return "", cairn.Internal("the holder's configuration could not be written", err)
	}
	cfg := s.sessionConfig(sessionMeta{kind: KindShell, idLabel: LabelShell, idEnv: "CAIRN_SHELL_ID", id: spec.ShellID,
		workspaceID: spec.WorkspaceID, workspaceName: spec.WorkspaceName, tokenName: spec.TokenName, expires: spec.Expires},
		[]string{holderBinary, holder.CommandHold}, append([]string{"TERM=" + spec.Term}, env...))
	cfg.OpenStdin, cfg.AttachStdin, cfg.AttachStdout, cfg.AttachStderr = false, false, false, false
	host := s.hostConfig(spec.VolumeName)
	host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeVolume, Source: vol, Target: HolderDir, ReadOnly: true})
	host.Tmpfs[holder.DefaultRunDir] = "rw,nosuid,nodev,noexec,size=" + fmt.Sprint(s.cfg.TmpfsMiB) + "m,mode=0700" + s.tmpfsOwner()
	a, err := s.createContainer(ctx, KindShell, spec.Name, cfg, host)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := s.cli.ContainerStart(sctx, a.id, container.StartOptions{}); err != nil {
		_ = a.teardown(cleanupTimeout, nil) // never started; nothing of the session exists
		return "", unavailable("start the shell container", err)
	}
	return a.id, nil
}

// tmpfsOwner gives the holder's private tmpfs to the shell's user, which
// the holder runs as: ",uid=U,gid=G" for a numeric user, else nothing.
func (s *Shells) tmpfsOwner() string {
	var uid, gid int
	if _, err := fmt.Sscanf(s.cfg.User, "%d:%d", &uid, &gid); err != nil {
		return ""
	}
	return fmt.Sprintf(",uid=%d,gid=%d", uid, gid)
}

// DialHolder runs the holder's relay in the container (a Docker exec as the
// shell's user, stdin and stdout only) and returns the stream to its
// socket. Reasons: shell_not_found (no such container, or it is not
// running), docker_unavailable.
func (s *Shells) DialHolder(ctx context.Context, name string) (net.Conn, error) {
	ex, err := s.cli.ContainerExecCreate(ctx, name, container.ExecOptions{
		User: s.cfg.User, Cmd: []string{holderBinary, holder.CommandRelay},
		AttachStdin: true, AttachStdout: true,
	})
	if err != nil {
		if cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
			return nil, &cairn.Error{Reason: cairn.ReasonShellNotFound, Err: err, Detail: "the shell's container is not running"}
		}
		return nil, unavailable("reach the shell's holder", err)
	}
	att, err := s.cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, unavailable("reach the shell's holder", err)
	}
	// Without a TTY the engine frames the exec's output; the relay writes
	// only stdout.
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, io.Discard, att.Reader)
		_ = pw.CloseWithError(cmpEOF(err))
	}()
	return holder.NewStreamConn(pr, att.Conn, func() error {
		att.Close()
		return pr.Close()
	}), nil
}

// cmpEOF is io.EOF for a stream that ended cleanly.
func cmpEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// holderVolume makes sure a volume holding the sidecar image's binary
// exists and returns its name, which follows the image: an upgraded image
// gets a volume of its own. Its name does not start with "<appName>-", so
// the reconciler never takes it for a workspace's.
func (s *Shells) holderVolume(ctx context.Context) (string, error) {
	s.holders.mu.Lock()
	defer s.holders.mu.Unlock()
	if s.holders.name != "" {
		return s.holders.name, nil
	}
	img, err := s.cli.ImageInspect(ctx, s.cfg.SidecarImage)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", cairn.Errorf(cairn.ReasonShellImageMissing,
				"the sidecar image '%s', which carries the shell's holder, is not on the docker host; an operator builds it with 'make images'", s.cfg.SidecarImage)
		}
		return "", unavailable("inspect the sidecar image", err)
	}
	id := img.ID
	if len(id) > 19 {
		id = id[7:19] // sha256:<12 hex>
	}
	name := s.cfg.AppName + ".holder." + id
	if err := s.fillHolderVolume(ctx, name); err != nil {
		return "", err
	}
	s.holders.name = name
	return name, nil
}

// fillHolderVolume copies the binary from the sidecar image onto the
// volume name, through a container that is created, never started.
func (s *Shells) fillHolderVolume(ctx context.Context, name string) error {
	if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name,
		Labels: map[string]string{LabelApp: s.cfg.AppName, LabelKind: "holder"}}); err != nil {
		return unavailable("create the holder volume", err)
	}
	resp, err := s.cli.ContainerCreate(ctx, &container.Config{Image: s.cfg.SidecarImage,
		Labels: map[string]string{LabelApp: s.cfg.AppName, LabelKind: "holder"}},
		&container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: name, Target: HolderDir,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}}, nil, nil, "")
	if err != nil {
		return unavailable("create the holder volume's filler", err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = s.cli.ContainerRemove(rctx, resp.ID, container.RemoveOptions{Force: true}) // the leftovers pass takes it otherwise
	}()
	src, err := s.cli.ContainerStatPath(ctx, resp.ID, sidecarBinary)
	if err != nil {
		return unavailable("find the holder in the sidecar image", err)
	}
	if dst, err := s.cli.ContainerStatPath(ctx, resp.ID, holderBinary); err == nil && dst.Size == src.Size {
		return nil // filled by an earlier run or another replica
	}
	archive, err := s.holderArchive(ctx, resp.ID)
	if err != nil {
		return err
	}
	if err := s.cli.CopyToContainer(ctx, resp.ID, HolderDir, archive, container.CopyToContainerOptions{}); err != nil {
		return unavailable("copy the holder onto its volume", err)
	}
	return nil
}

// holderArchive reads the binary out of the filler container, whole,
// as a one-file archive named for the holder's path. It is read before the
// copy onto the volume starts: the engine holds the container while either
// copy streams, so the two cannot overlap.
func (s *Shells) holderArchive(ctx context.Context, filler string) (io.Reader, error) {
	rc, _, err := s.cli.CopyFromContainer(ctx, filler, sidecarBinary)
	if err != nil {
		return nil, unavailable("read the holder from the sidecar image", err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		return nil, unavailable("read the holder from the sidecar image", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr.Name = path.Base(holderBinary)
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, cairn.Internal("archive the holder", err)
	}
	if _, err := io.Copy(tw, tr); err != nil {
		return nil, unavailable("read the holder from the sidecar image", err)
	}
	if err := tw.Close(); err != nil {
		return nil, cairn.Internal("archive the holder", err)
	}
	return &buf, nil
}
