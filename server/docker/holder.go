package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
			return nil, &cairn.Error{Reason: cairn.ReasonShellNotFound, Err: s.whyNotRunning(ctx, name, err),
				Detail: "the shell's container is not running"}
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

// whyNotRunning adds to err what the engine knows of a container that is
// not running — its exit status and the runtime's error, such as a holder
// binary it could not execute — for the log of a shell that did not start.
func (s *Shells) whyNotRunning(ctx context.Context, name string, err error) error {
	info, ierr := s.cli.ContainerInspect(ctx, name)
	if ierr != nil || info.State == nil {
		return err
	}
	st := info.State
	return fmt.Errorf("%w (container %s, exit status %d, oom killed %t, runtime error %q)", err, st.Status, st.ExitCode, st.OOMKilled, st.Error)
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

// fillHolderVolume puts the binary of the sidecar image on the volume
// name, unless it is there whole already: a filler container from that
// image runs install-holder, which writes a temporary file and renames it
// into place. Two servers filling at once, or a shell starting while one
// fills, each see a whole binary or none; copying into the volume through
// the engine would truncate a binary a starting shell is about to run.
func (s *Shells) fillHolderVolume(ctx context.Context, name string) error {
	if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name,
		Labels: map[string]string{LabelApp: s.cfg.AppName, LabelKind: "holder"}}); err != nil {
		return unavailable("create the holder volume", err)
	}
	filler, err := s.createFiller(ctx, name)
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = s.cli.ContainerRemove(rctx, filler, container.RemoveOptions{Force: true}) // the leftovers pass takes it otherwise
	}()
	src, err := s.cli.ContainerStatPath(ctx, filler, sidecarBinary)
	if err != nil {
		return unavailable("find the holder in the sidecar image", err)
	}
	if dst, err := s.cli.ContainerStatPath(ctx, filler, holderBinary); err == nil && dst.Size == src.Size {
		return nil // filled by an earlier run or another replica
	}
	return s.runFiller(ctx, filler)
}

// createFiller creates the container that installs the holder onto the
// volume: the sidecar image's binary as root (the volume's root directory
// is root's), with no capabilities, network or writable root.
func (s *Shells) createFiller(ctx context.Context, vol string) (string, error) {
	pids := int64(fillerPids)
	resp, err := s.cli.ContainerCreate(ctx, &container.Config{Image: s.cfg.SidecarImage, User: "0:0",
		Cmd:    []string{holder.CommandInstall, holderBinary},
		Labels: map[string]string{LabelApp: s.cfg.AppName, LabelKind: "holder"}},
		&container.HostConfig{
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: HolderDir,
				VolumeOptions: &mount.VolumeOptions{NoCopy: true}}},
			CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true,
			NetworkMode: "none", Resources: container.Resources{PidsLimit: &pids},
		}, nil, nil, "")
	if err != nil {
		return "", unavailable("create the holder volume's filler", err)
	}
	return resp.ID, nil
}

// fillerPids bounds the filler's threads: one Go program copying a file.
const fillerPids = 32

// runFiller starts the filler and waits for it to exit 0.
func (s *Shells) runFiller(ctx context.Context, id string) error {
	wctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	results, errs := s.cli.ContainerWait(wctx, id, container.WaitConditionNextExit)
	if err := s.cli.ContainerStart(wctx, id, container.StartOptions{}); err != nil {
		return unavailable("start the holder volume's filler", err)
	}
	select {
	case res := <-results:
		if res.Error != nil {
			return unavailable("wait for the holder volume's filler", errors.New(res.Error.Message))
		}
		if res.StatusCode != 0 {
			return cairn.Internal(fmt.Sprintf("installing the holder onto its volume exited with status %d", res.StatusCode), nil)
		}
		return nil
	case err := <-errs:
		return unavailable("wait for the holder volume's filler", err)
	}
}
