package docker_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// askerSource is a stand-in sidecar that converses as pack does: it asks
// for two URLs, one Need line each, reads each Grant line, and reports the
// URLs it was given in its result line. Before, it prints a line on stdout
// and one on stderr. How lines are told apart and kept is
// sidecar.DialogRun's, tested there; these tests are of the attach.
const askerSource = `package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	fmt.Println("starting")
	fmt.Fprintln(os.Stderr, "a word on stderr")
	in := bufio.NewScanner(os.Stdin)
	var urls []string
	for i := 1; i <= 2; i++ {
		fmt.Printf("{\"need\":\"part\",\"number\":%d,\"size\":%d,\"sha256_b64\":\"c2hh\"}\n", i, 10*i)
		var g struct {
			URL   string ` + "`" + `json:"url"` + "`" + `
			Error string ` + "`" + `json:"error"` + "`" + `
		}
		if !in.Scan() || json.Unmarshal(in.Bytes(), &g) != nil || g.Error != "" {
			fmt.Println(` + "`" + `{"ok":false,"error":"no grant","reason":"sidecar_rejected"}` + "`" + `)
			os.Exit(1)
		}
		urls = append(urls, g.URL)
	}
	line, _ := json.Marshal(map[string]any{"ok": true, "uploaded_path": strings.Join(urls, " ")})
	fmt.Println(string(line))
}
`

// asker builds a scratch image whose /cairn-sidecar is the asker.
func asker(t *testing.T, cli *client.Client) string {
	t.Helper()
	tag, err := standIn(t, cli, "asker", askerSource)
	require.NoError(t, err)
	return tag
}

// standIn builds a scratch image whose /cairn-sidecar is the Go program
// source, under a tag unique to the test and removed at cleanup.
func standIn(t *testing.T, cli *client.Client, name, source string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "main.go"), filepath.Join(dir, "cairn-sidecar")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the %s: %v: %s", name, err, out)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	tag := "cairn-" + name + "-test:" + strings.ToLower(ulid.Make().String())
	standIns.Lock()
	err = stack.EnsureImage(ctx, cli, tag, stack.SidecarImage(binary))
	standIns.Unlock()
	if err != nil {
		return "", err
	}
	t.Cleanup(func() {
		standIns.Lock()
		defer standIns.Unlock()
		_, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
		if err != nil {
			t.Logf("remove image %s: %v", tag, err)
		}
	})
	return tag, nil
}

// standIns orders the builds and removals of stand-in images: parallel
// tests building the same program share the engine's cached layers, and a
// removal pruning them under a build in progress failed it ("unknown
// parent image ID").
var standIns sync.Mutex

// dialogSpec is a pack-like run of the asker on a prepared volume.
func dialogSpec(t *testing.T, r *docker.Runtime, b *testBundle, dialog func(context.Context, sidecar.Need) (sidecar.Grant, error)) service.SidecarSpec {
	t.Helper()
	require.NoError(t, r.CreateVolume(t.Context(), b.volume, nil, 0))
	spec := prepSpec(b)
	spec.Command, spec.Role, spec.Dialog = sidecar.CommandPack, "cairn-pack", dialog
	return spec
}

func TestRunSidecarDialog(t *testing.T) {
	t.Parallel()

	t.Run("OKGrantsReachTheSidecar", func(t *testing.T) {
		t.Parallel()
		cli := stacktest.Docker(t)
		var observed []string
		r, b := setup(t, docker.Config{Image: asker(t, cli),
			OnSidecar: func(command, result string, _ time.Duration) { observed = append(observed, command+" "+result) }})
		var needs []sidecar.Need
		spec := dialogSpec(t, r, b, func(_ context.Context, n sidecar.Need) (sidecar.Grant, error) {
			needs = append(needs, n)
			return sidecar.Grant{URL: fmt.Sprintf("http://store.test/part/%d", n.Number)}, nil
		})

		run, err := r.RunSidecar(t.Context(), spec)
		require.NoError(t, err)
		require.Equal(t, 0, run.ExitCode, "output: %q", run.Output)
		require.Equal(t, []sidecar.Need{
			{Need: sidecar.NeedPart, Number: 1, Size: 10, SHA256B64: "c2hh"},
			{Need: sidecar.NeedPart, Number: 2, Size: 20, SHA256B64: "c2hh"},
		}, needs)
		res, ok := sidecar.ParseResult(run.Output)
		require.True(t, ok, "output: %q", run.Output)
		require.True(t, res.OK)
		require.Equal(t, "http://store.test/part/1 http://store.test/part/2", res.UploadedPath)

		require.Equal(t, "a word on stderr\nstarting\n"+`{"ok":true,"uploaded_path":"http://store.test/part/1 http://store.test/part/2"}`+"\n",
			string(run.Output), "stderr and stdout apart, the Needs answered, not kept")
		require.Equal(t, []string{"pack ok"}, observed)
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "removed after the run")
	})

	t.Run("OKRealPackUploadsThroughItsGrant", func(t *testing.T) {
		t.Parallel()
		// The pack sidecar itself, on the host network so that it reaches
		// the test's store at 127.0.0.1.
		r, b := setup(t, docker.Config{NetworkMode: "host"})
		var mu sync.Mutex
		puts := map[string][]byte{}
		store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, err := io.ReadAll(req.Body)
			sum := sha256.Sum256(body)
			if err != nil || req.Method != http.MethodPut || req.Header.Get("x-amz-checksum-sha256") != base64.StdEncoding.EncodeToString(sum[:]) {
				http.Error(w, "bad put", http.StatusBadRequest)
				return
			}
			mu.Lock()
			puts[req.URL.Path] = body
			mu.Unlock()
		}))
		t.Cleanup(store.Close)
		var needs []sidecar.Need
		spec := dialogSpec(t, r, b, func(_ context.Context, n sidecar.Need) (sidecar.Grant, error) {
			needs = append(needs, n)
			return sidecar.Grant{URL: store.URL + "/" + n.Need}, nil
		})
		spec.Transfer = true
		maps.Copy(spec.Env, map[string]string{sidecar.EnvSourcePath: cairn.MountPath + "/dir", sidecar.EnvFormat: sidecar.FormatTarGz,
			sidecar.EnvMaxSize: "1048576", sidecar.EnvPartSize: strconv.Itoa(5 << 20)}) // the smallest part
		stacktest.RunInVolume(t, b.app, b.volume, "cd "+cairn.MountPath+" && mkdir -p dir/sub && printf a > dir/a.txt && printf bb > dir/sub/b.txt")

		run, err := r.RunSidecar(t.Context(), spec)
		require.NoError(t, err)
		require.Equal(t, 0, run.ExitCode, "output: %q", run.Output)
		res, ok := sidecar.ParseResult(run.Output)
		require.True(t, ok, "output: %q", run.Output)
		require.True(t, res.OK, "output: %q", run.Output)
		require.Len(t, needs, 1, "a small archive is one object")
		require.Equal(t, sidecar.NeedObject, needs[0].Need)
		archive := puts["/"+sidecar.NeedObject]
		require.Equal(t, needs[0].Size, int64(len(archive)), "the grant's bytes are the ones put")
		require.Equal(t, *res.Size, int64(len(archive)))

		zr, err := gzip.NewReader(bytes.NewReader(archive))
		require.NoError(t, err)
		tr := tar.NewReader(zr)
		files := map[string]string{}
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			if h.Typeflag == tar.TypeReg {
				files[path.Base(h.Name)] = string(data)
			}
		}
		require.Equal(t, map[string]string{"a.txt": "a", "b.txt": "bb"}, files)
		require.Empty(t, sidecarsOf(t, b.cli, b.app))
	})

	t.Run("ErrOfTheDialogEndsTheRun", func(t *testing.T) {
		t.Parallel()
		cli := stacktest.Docker(t)
		var observed []string
		r, b := setup(t, docker.Config{Image: asker(t, cli),
			OnSidecar: func(command, result string, _ time.Duration) { observed = append(observed, command+" "+result) }})
		refused := cairn.Errorf(cairn.ReasonObjectTooLarge, "the archive grew past its bound")
		asked := 0
		spec := dialogSpec(t, r, b, func(_ context.Context, n sidecar.Need) (sidecar.Grant, error) {
			asked++
			return sidecar.Grant{}, refused
		})

		run, err := r.RunSidecar(t.Context(), spec)
		require.Nil(t, run)
		require.ErrorIs(t, err, refused)
		require.Equal(t, 1, asked)
		require.Equal(t, []string{"pack error"}, observed)
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "stopped and removed")
	})

	t.Run("ErrSidecarTimeoutWhileTheDialogHangs", func(t *testing.T) {
		t.Parallel()
		cli := stacktest.Docker(t)
		r, b := setup(t, docker.Config{Image: asker(t, cli), Timeout: 2 * time.Second})
		var dialogErr error
		spec := dialogSpec(t, r, b, func(ctx context.Context, n sidecar.Need) (sidecar.Grant, error) {
			<-ctx.Done()
			dialogErr = ctx.Err()
			return sidecar.Grant{}, ctx.Err()
		})

		began := time.Now()
		run, err := r.RunSidecar(t.Context(), spec)
		require.Nil(t, run)
		require.Equal(t, cairn.ReasonSidecarTimeout, cairn.ErrorReason(err), "err: %v", err)
		require.Less(t, time.Since(began), 20*time.Second)
		require.ErrorIs(t, dialogErr, context.Canceled, "the dialog is told the run ended")
		require.Empty(t, sidecarsOf(t, b.cli, b.app))
	})
}
