package rest_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/mount"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

// Sizes of the benchmark's files.
const (
	xferSmall = 1 << 10
	xferLarge = 512 << 20
)

// BenchmarkVolumeTransfer measures volume transfers against their floors,
// side by side in one run, through the real server,
// Docker and store:
//
//   - Latency1KiB: artifact-from-volume of a 1 KiB file vs the floor, two
//     bare runs of the sidecar image (create, start, wait, remove; the
//     prep command on the same volume) plus one presigned PUT of 1 KiB with
//     net/http. Reports latency-ms and floor-ms (medians) and their ratio
//     (target ≤ 1.25); ns/op is the API call's.
//   - Throughput512MiB: 512 MiB volume → store (artifact-from-volume, one
//     put sidecar) vs its floor: one bare container
//     run (docker run --rm of the sidecar image) plus curl -T of the same
//     file from the host through a PUT presigned the way the sidecar's is
//     (no length, checksum or type bound). Reports the medians of four
//     interleaved samples in seconds and their ratio (target ≤ 1.15), and,
//     for reference, the ratio to curl -T run inside a container. And
//     store → volume (load-in-volume) vs curl -o through ?presign: MB/s of
//     each and their ratio (target ≥ 0.8).
//
// Run it with: CI=true go test -run '^$' -bench VolumeTransfer -benchtime 1x ./server/rest/
func BenchmarkVolumeTransfer(b *testing.B) {
	h := xferSetup(b, xferOpts{})

	b.Run("Latency1KiB", func(b *testing.B) {
		ws := h.volumeWorkspace(b, sprintf("head -c %d /dev/urandom > small", xferSmall))
		body := make([]byte, xferSmall)
		for i := range body {
			body[i] = byte(i)
		}
		// Several interleaved samples per iteration, so that one slow
		// container start does not decide the ratio.
		const samples = 5
		var api, floor []time.Duration
		b.ResetTimer()
		for i := range b.N {
			for j := range samples {
				start := time.Now()
				xferArtifactOf(b, h.fromVolume(b, ws.ID, volRoot+"/small", sprintf("small-%d-%d", i, j)))
				api = append(api, time.Since(start))

				b.StopTimer()
				putURL := h.mintURL(b, ws.ID, body)
				start = time.Now()
				h.bareSidecar(b, ws.VolumeName)
				h.bareSidecar(b, ws.VolumeName)
				xferPut(b, putURL, body)
				floor = append(floor, time.Since(start))
				b.StartTimer()
			}
		}
		b.StopTimer()
		lat, fl := xferMedian(api), xferMedian(floor)
		b.ReportMetric(millis(lat), "latency-ms")
		b.ReportMetric(millis(fl), "floor-ms")
		b.ReportMetric(millis(lat)/millis(fl), "ratio")
		b.Logf("%s: artifact-from-volume 1 KiB: median %v, floor (2 bare sidecar runs + 1 PUT) median %v, ratio %.2f "+
			"(target ≤ 1.25)", stacktest.StoreKind(), lat.Round(time.Millisecond), fl.Round(time.Millisecond), millis(lat)/millis(fl))
	})

	b.Run("Throughput512MiB", func(b *testing.B) {
		dir := b.TempDir()
		src := filepath.Join(dir, "big")
		sum := xferRandomFile(b, src, xferLarge)
		ws := h.volumeWorkspace(b, "")
		h.copyIntoVolume(b, ws.VolumeName, src)
		curl := func(args ...string) time.Duration {
			start := time.Now()
			out, err := exec.CommandContext(b.Context(), "/usr/bin/curl", append([]string{"-sS", "-f"}, args...)...).CombinedOutput()
			require.NoError(b, err, "curl: %s", out)
			return time.Since(start)
		}

		// Several interleaved samples of volume → store per iteration, so
		// that one slow container start does not decide the ratio; which
		// side goes first alternates. Each side starts with nothing dirty
		// in the page cache: a container create fsyncs the engine's state,
		// and after 512 MiB written by whatever ran before it that fsync
		// alone takes 1.5–3 s here, which would charge one side for the
		// other's writes.
		const samples = 4
		var upAPI, upFloor, upRun, upCurl, upBoxed []time.Duration
		var downAPI, downCurl time.Duration
		var upPhases, downPhases string
		b.ResetTimer()
		for i := range b.N {
			var a *xferArtifact
			for j := range samples {
				cairn := func() {
					b.StopTimer()
					syscall.Sync()
					b.StartTimer()
					start := time.Now()
					a = xferArtifactOf(b, h.fromVolume(b, ws.ID, volRoot+"/big", sprintf("big-%d-%d", i, j)))
					took := time.Since(start)
					b.StopTimer()
					upAPI = append(upAPI, took)
					require.Equal(b, int64(xferLarge), a.Size)
					require.Equal(b, sum, a.SHA256B64)
					upPhases = h.sidecarPhases(b, start, took)
				}
				floor := func() {
					b.StopTimer()
					putURL := h.unboundPut(b, sprintf("bench/curl-%d-%d", i, j))
					syscall.Sync()
					run := h.dockerRunBare(b, ws.VolumeName)
					put := curl("-o", os.DevNull, "-T", src, putURL)
					upRun, upCurl = append(upRun, run), append(upCurl, put)
					upFloor = append(upFloor, run+put)
					putURL = h.unboundPut(b, sprintf("bench/boxed-%d-%d", i, j))
					syscall.Sync()
					upBoxed = append(upBoxed, h.curlInContainer(b, src, putURL))
				}
				if j%2 == 0 {
					cairn()
					floor()
				} else {
					floor()
					cairn()
				}
				b.StartTimer()
			}

			b.StopTimer()
			syscall.Sync()
			b.StartTimer()
			start := time.Now()
			bare(b, h.load(b, a.ID, volRoot+sprintf("/big-%d.out", i)))
			took := time.Since(start)
			downAPI += took
			downPhases = h.sidecarPhases(b, start, took)

			b.StopTimer()
			getURL := h.presignURL(b, a.ID)
			out := filepath.Join(dir, "out")
			syscall.Sync()
			downCurl += curl("-o", out, getURL)
			require.Equal(b, sum, xferFileSHA256(b, out), "the stored object is the file")
			require.NoError(b, os.Remove(out))
			b.StartTimer()
		}
		b.StopTimer()
		got := h.sh(b, ws, "sha256sum big-0.out | cut -d' ' -f1 | xxd -r -p | base64")
		require.Equal(b, sum, got, "the loaded file is the file")

		up, floor := xferMedian(upAPI), xferMedian(upFloor)
		b.ReportMetric(up.Seconds(), "up-cairn-s")
		b.ReportMetric(floor.Seconds(), "up-floor-s")
		b.ReportMetric(up.Seconds()/floor.Seconds(), "up-ratio")
		boxed := xferMedian(upBoxed)
		b.ReportMetric(up.Seconds()/boxed.Seconds(), "up-ratio-boxed-curl")
		mbps := func(d time.Duration) float64 { return float64(b.N) * xferLarge / 1e6 / d.Seconds() }
		b.ReportMetric(mbps(downAPI), "down-cairn-MB/s")
		b.ReportMetric(mbps(downCurl), "down-curl-MB/s")
		b.ReportMetric(mbps(downAPI)/mbps(downCurl), "down-ratio")
		b.Logf("%s: 512 MiB volume→store: cairn median %v, floor median %v (docker run --rm of the sidecar image %v + "+
			"curl -T %v, medians), ratio %.2f (target ≤ 1.15); samples: cairn %v, floor %v", stacktest.StoreKind(),
			up.Round(time.Millisecond), floor.Round(time.Millisecond), xferMedian(upRun).Round(time.Millisecond),
			xferMedian(upCurl).Round(time.Millisecond), up.Seconds()/floor.Seconds(), rounded(upAPI), rounded(upFloor))
		b.Logf("512 MiB volume→store: cairn vs curl -T run inside a container (docker run --rm, host network): median %v, "+
			"ratio %.2f; samples %v", boxed.Round(time.Millisecond), up.Seconds()/boxed.Seconds(), rounded(upBoxed))
		b.Logf("%s: 512 MiB store→volume: cairn %.0f MB/s, curl -o %.0f MB/s, ratio %.2f (target ≥ 0.8)", stacktest.StoreKind(),
			mbps(downAPI), mbps(downCurl), mbps(downAPI)/mbps(downCurl))
		b.Logf("where the time went (last iteration): volume→store %s; store→volume %s", upPhases, downPhases)
	})
}

// dockerRunBare times one bare run of the sidecar image through the docker
// CLI, the floor's container: `docker run --rm` with the workspace volume
// mounted and the network the harness gives sidecars. The image is FROM
// scratch, so its do-nothing command is the binary's own cheapest one,
// prep, which touches only the mount root.
func (h *xferHarness) dockerRunBare(tb testing.TB, volume string) time.Duration {
	tb.Helper()
	start := time.Now()
	out, err := exec.CommandContext(tb.Context(), "docker", "run", "--rm", "--network", "host",
		"--label", docker.LabelApp+"="+h.b.app, "-v", volume+":"+volRoot, "-e", "CAIRN_MOUNT_ROOT="+volRoot,
		h.image, "prep").CombinedOutput()
	took := time.Since(start)
	require.NoError(tb, err, "docker run: %s", out)
	return took
}

// curlInContainer times curl -T of src to url run inside a container, the
// way a sidecar runs (docker run --rm, the harness's host network): the
// shell image with the host's root mounted read-only, chrooted into it for
// curl. Not the floor, but what any upload from inside a container costs
// here, next to curl on the host.
func (h *xferHarness) curlInContainer(tb testing.TB, src, url string) time.Duration {
	tb.Helper()
	start := time.Now()
	out, err := exec.CommandContext(tb.Context(), "docker", "run", "--rm", "--network", "host",
		"--label", docker.LabelApp+"="+h.b.app, "-v", "/:/host:ro", "-e", "URL="+url, stacktest.Shell(tb),
		"-c", `chroot /host /usr/bin/curl -sS -f -o /dev/null -T "$0" "$URL"`, src).CombinedOutput()
	took := time.Since(start)
	require.NoError(tb, err, "curl in a container: %s", out)
	return took
}

// unboundPut presigns a PUT of key in the harness's bucket bound to no
// length, checksum or type: the URL a put sidecar gets.
func (h *xferHarness) unboundPut(tb testing.TB, key string) string {
	tb.Helper()
	objects, err := s3.New(s3.Config{Endpoint: "http://" + h.gw.Endpoint, Region: h.gw.Region, Bucket: h.bucket,
		AccessKey: h.gw.AccessKey, SecretKey: h.gw.SecretKey})
	require.NoError(tb, err)
	url, err := objects.PresignPut(tb.Context(), key, service.PutSpec{Size: service.AnySize, TTL: time.Hour})
	require.NoError(tb, err)
	return url
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// sidecarPhases describes, from the engine's event log, how long each
// sidecar of the app ran (start to exit) in a call that began at start and
// took took, and how much of the call was spent outside them.
func (h *xferHarness) sidecarPhases(tb testing.TB, start time.Time, took time.Duration) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), 30*time.Second)
	defer cancel()
	f := h.sidecarLabels()
	f.Add("type", string(events.ContainerEventType))
	f.Add("event", string(events.ActionStart))
	f.Add("event", string(events.ActionDie))
	stamp := func(at time.Time) string { return sprintf("%d.%09d", at.Unix(), at.Nanosecond()) }
	msgs, errs := h.b.cli.Events(ctx, events.ListOptions{Since: stamp(start), Until: stamp(start.Add(took)), Filters: f})
	began := map[string]int64{}
	var parts []string
	var inside time.Duration
	for {
		select {
		case m := <-msgs:
			switch m.Action {
			case events.ActionStart:
				began[m.Actor.ID] = m.TimeNano
			case events.ActionDie:
				run := time.Duration(m.TimeNano - began[m.Actor.ID])
				inside += run
				parts = append(parts, sprintf("%s %v", m.Actor.Attributes[docker.LabelCommand], run.Round(time.Millisecond)))
			}
		case err := <-errs:
			if errors.Is(err, io.EOF) {
				parts = append(parts, sprintf("outside the sidecars %v (of %v)", (took-inside).Round(time.Millisecond),
					took.Round(time.Millisecond)))
				return strings.Join(parts, ", ")
			}
			require.NoError(tb, err)
		}
	}
}

// mintURL mints a staging PUT for body through the API and returns its URL.
func (h *xferHarness) mintURL(tb testing.TB, ws string, body []byte) string {
	tb.Helper()
	d := sha256.Sum256(body)
	return h.mintRaw(tb, ws, sprintf(`{"size":%d,"sha256_b64":%q}`, len(body), base64.StdEncoding.EncodeToString(d[:])))
}

// mintRaw posts a new-staging request and returns the PUT URL.
func (h *xferHarness) mintRaw(tb testing.TB, ws, reqBody string) string {
	tb.Helper()
	r := do(tb, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", reqBody)
	ok(tb, r)
	var env struct {
		Staging struct {
			PutURL string `json:"put_url"`
		} `json:"staging"`
	}
	require.NoError(tb, json.Unmarshal(r.body, &env))
	require.NotEmpty(tb, env.Staging.PutURL)
	return env.Staging.PutURL
}

// presignURL mints a presigned GET of an artifact through the API.
func (h *xferHarness) presignURL(tb testing.TB, id string) string {
	tb.Helper()
	r := do(tb, http.MethodGet, h.url+"/v1/artifacts/"+id+"?presign", "")
	ok(tb, r)
	var env struct {
		GetURL string `json:"get_url"`
	}
	require.NoError(tb, json.Unmarshal(r.body, &env))
	require.NotEmpty(tb, env.GetURL)
	return env.GetURL
}

// bareSidecar runs the sidecar image once on volume with nothing but what a
// run needs: create, start, wait, remove. The prep command touches only the
// mount root.
func (h *xferHarness) bareSidecar(tb testing.TB, volume string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	resp, err := h.b.cli.ContainerCreate(ctx, &container.Config{
		Image: h.image, Entrypoint: []string{"/cairn-sidecar"}, Cmd: []string{"prep"},
		Env: []string{"CAIRN_MOUNT_ROOT=" + volRoot}, Tty: true,
		Labels: map[string]string{docker.LabelApp: h.b.app},
	}, &container.HostConfig{
		NetworkMode: "none",
		Mounts:      []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: volRoot}},
	}, nil, nil, "")
	require.NoError(tb, err)
	defer h.b.cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) //nolint:errcheck // also removed with the app
	require.NoError(tb, h.b.cli.ContainerStart(ctx, resp.ID, container.StartOptions{}))
	results, errs := h.b.cli.ContainerWait(ctx, resp.ID, container.WaitConditionNotRunning)
	select {
	case res := <-results:
		require.Zero(tb, res.StatusCode)
	case err := <-errs:
		require.NoError(tb, err)
	}
}

// benchPut uploads body to a presigned PUT URL with plain net/http.
func xferPut(tb testing.TB, url string, body []byte) {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodPut, url, bytes.NewReader(body))
	require.NoError(tb, err)
	req.ContentLength = int64(len(body))
	d := sha256.Sum256(body)
	req.Header.Set("x-amz-checksum-sha256", base64.StdEncoding.EncodeToString(d[:]))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // draining only
	require.Equal(tb, http.StatusOK, resp.StatusCode)
}

// copyIntoVolume copies the host file src into the volume's root, owned by
// root, mode 0644, through a container that is created but never started.
func (h *xferHarness) copyIntoVolume(tb testing.TB, volume, src string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), 5*time.Minute)
	defer cancel()
	resp, err := h.b.cli.ContainerCreate(ctx, &container.Config{
		Image: stacktest.Shell(tb), Labels: map[string]string{docker.LabelApp: h.b.app},
	}, &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: volRoot}},
	}, nil, nil, "")
	require.NoError(tb, err)
	defer h.b.cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) //nolint:errcheck // also removed with the app

	f, err := os.Open(src)
	require.NoError(tb, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(tb, err)
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: filepath.Base(src), Mode: 0o644, Size: fi.Size(),
			ModTime: fi.ModTime(), Typeflag: tar.TypeReg})
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	require.NoError(tb, h.b.cli.CopyToContainer(ctx, resp.ID, volRoot, pr, container.CopyToContainerOptions{}))
}

// writeRandomFile writes size pseudo-random bytes (a fixed seed) to path and
// returns their SHA-256, standard base64.
func xferRandomFile(tb testing.TB, path string, size int) string {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	defer f.Close()
	rng := rand.NewChaCha8([32]byte{'c', 'a', 'i', 'r', 'n'})
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(buf) {
		chunk := buf[:min(len(buf), left)]
		_, _ = rng.Read(chunk)
		h.Write(chunk)
		_, err := f.Write(chunk)
		require.NoError(tb, err)
	}
	require.NoError(tb, f.Close())
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// fileSHA256 returns a host file's SHA-256, standard base64.
func xferFileSHA256(tb testing.TB, path string) string {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(tb, err)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func xferMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
