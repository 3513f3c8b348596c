package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Volumes []string `yaml:"volumes"`
	} `yaml:"services"`
}

// TestCompose validates what can be validated here of the production-like
// stack (its images cannot be pulled on this machine): the file parses,
// every service names an image, the server's config file is valid, and the
// project's own Dockerfiles build into images that run.
func TestCompose(t *testing.T) {
	root, err := stack.ModuleRoot()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	require.NoError(t, err)
	var compose composeFile
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	require.Subset(t, keys(compose.Services), []string{"postgres", "s3", "server", "maintainer", "sidecar-image"})

	_, _, err = server.LoadConfig(filepath.Join(root, "deploy", "config.yaml"))
	require.NoError(t, err, "deploy/config.yaml is a valid server config")

	bins, err := binaries()
	require.NoError(t, err)
	files := map[string]string{
		"bin/cairn":               filepath.Join(bins, "cairn"),
		"bin/cairn-sidecar":       filepath.Join(bins, "cairn-sidecar"),
		"bin/ca-certificates.crt": "/etc/ssl/certs/ca-certificates.crt",
	}
	for name, svc := range compose.Services {
		require.NotEmpty(t, svc.Image, "service %s names its image", name)
		if svc.Build == nil {
			continue
		}
		t.Run("Build_"+name, func(t *testing.T) {
			tag := buildFromDockerfile(t, filepath.Join(root, svc.Build.Context, svc.Build.Dockerfile), files)
			if name == "server" {
				out := stacktest.RunImage(t, tag, "version")
				require.Contains(t, out, "cairn ")
			}
		})
	}
}

var copySource = regexp.MustCompile(`(?m)^COPY\s+(\S+)\s`)

// buildFromDockerfile builds the Dockerfile with a context holding exactly
// the files it copies, under a unique tag removed at cleanup.
func buildFromDockerfile(t *testing.T, dockerfile string, files map[string]string) string {
	t.Helper()
	df, err := os.ReadFile(dockerfile)
	require.NoError(t, err)
	ctxFiles := map[string][]byte{"Dockerfile": df}
	for _, m := range copySource.FindAllStringSubmatch(string(df), -1) {
		src, ok := files[m[1]]
		require.True(t, ok, "%s copies %s, which the build provides", dockerfile, m[1])
		ctxFiles[m[1]], err = os.ReadFile(src)
		require.NoError(t, err)
	}
	cli := stacktest.Docker(t)
	tag := "cairn-compose-test:" + strings.ToLower(ulid.Make().String())
	require.NoError(t, stack.EnsureImage(context.Background(), cli, tag, ctxFiles))
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("remove image %s: %v", tag, err)
		}
	})
	return tag
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
