package stack

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// BuildLabel is the image label EnsureImage sets to the SHA-256 of the build
// context, to tell a current image from a stale one.
const BuildLabel = "cairn.build.sha256"

// DockerClient connects to the Docker daemon named by the environment
// (DOCKER_HOST, or the default socket), negotiating the API version, and
// checks that it answers.
func DockerClient(ctx context.Context) (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		host := cli.DaemonHost()
		cli.Close()
		return nil, fmt.Errorf("docker daemon at %s does not answer; start it with `make deps` (or run `dockerd` as root): %w", host, err)
	}
	return cli, nil
}

// EnsureImage makes sure image tag is built from files, a build context that
// must hold a Dockerfile. It builds with the classic builder and no registry,
// and only when needed: the image carries BuildLabel, the SHA-256 of the
// context, and an image with tag and the same label is left alone. An image
// that a rebuild replaced under tag is removed if nothing uses it.
func EnsureImage(ctx context.Context, cli *client.Client, tag string, files map[string][]byte) error {
	_, err := ensureImage(ctx, cli, tag, files)
	return err
}

// ensureImage is EnsureImage, also reporting whether it built.
func ensureImage(ctx context.Context, cli *client.Client, tag string, files map[string][]byte) (built bool, err error) {
	if _, ok := files["Dockerfile"]; !ok {
		return false, fmt.Errorf("build image %s: the context has no Dockerfile", tag)
	}
	tarball := buildContext(files)
	sum := sha256.Sum256(tarball)
	want := hex.EncodeToString(sum[:])

	old, err := cli.ImageInspect(ctx, tag)
	switch {
	case err == nil && old.Config != nil && old.Config.Labels[BuildLabel] == want:
		return false, nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return false, fmt.Errorf("inspect image %s: %w", tag, err)
	}
	if err := buildImage(ctx, cli, tag, want, tarball); err != nil {
		return false, err
	}
	now, err := cli.ImageInspect(ctx, tag)
	if err != nil {
		return true, fmt.Errorf("inspect image %s: %w", tag, err)
	}
	if now.Config == nil || now.Config.Labels[BuildLabel] != want {
		return true, fmt.Errorf("build image %s: the built image lacks label %s=%s", tag, BuildLabel, want)
	}
	if old.ID != "" && old.ID != now.ID {
		// Best effort: it fails, as it should, while a container still uses it.
		_, _ = cli.ImageRemove(ctx, old.ID, image.RemoveOptions{PruneChildren: true})
	}
	return true, nil
}

// buildImage sends the context to the daemon and drains the build's message
// stream, which is where a failed step reports its error.
func buildImage(ctx context.Context, cli *client.Client, tag, sum string, tarball []byte) error {
	resp, err := cli.ImageBuild(ctx, bytes.NewReader(tarball), build.ImageBuildOptions{
		Tags:        []string{tag},
		Labels:      map[string]string{BuildLabel: sum},
		Dockerfile:  "Dockerfile",
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1, // BuildKit needs a session; the classic builder needs nothing
	})
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	defer resp.Body.Close()
	out := &tailBuffer{max: 4 << 10}
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("build image %s: read build output: %w", tag, err)
		}
		_, _ = out.Write([]byte(msg.Stream)) // build progress for a person; a lost line is harmless
		if msg.ErrorDetail != nil || msg.Error != "" {
			text := msg.Error
			if msg.ErrorDetail != nil && msg.ErrorDetail.Message != "" {
				text = msg.ErrorDetail.Message
			}
			return fmt.Errorf("build image %s: %s\n%s", tag, text, out.String())
		}
	}
}

// buildContext returns files as a tar archive whose bytes depend only on the
// names and contents: sorted, with fixed owners and times. ELF binaries and
// scripts get mode 0755, everything else 0644.
func buildContext(files map[string][]byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		body := files[name]
		mode := int64(0o644)
		if bytes.HasPrefix(body, []byte("\x7fELF")) || bytes.HasPrefix(body, []byte("#!")) {
			mode = 0o755
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     name,
			Mode:     mode,
			Size:     int64(len(body)),
			ModTime:  time.Unix(0, 0),
			Format:   tar.FormatPAX,
		}
		// Writes to a bytes.Buffer cannot fail, and the header is valid.
		_ = tw.WriteHeader(hdr)
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	return buf.Bytes()
}
