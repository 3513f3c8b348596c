package docker_test

import (
	"context"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// BenchmarkBrowse measures the browse container against what it replaces,
// both sides timed in the same iteration: a
// 1 000-entry listing warm against `docker exec … ls -la` in a running
// container, cold (no warm container) against `docker run --rm … ls -la`,
// and a 1 MiB read warm against `docker exec … cat`. Targets: warm ≤ 3×
// exec with p50 ≤ 30 ms; cold ≤ 1.2× run; the read ≤ 1.5× exec. The
// baselines run the busybox shell image (the sidecar image has no ls).
func BenchmarkBrowse(b *testing.B) {
	r, target, app := setupBenchVolume(b)
	shell := stacktest.Shell(b)
	running := startShell(b, app, target.VolumeName)
	dir, big := cairn.MountPath+"/dir", cairn.MountPath+"/big"
	ls := sidecar.BrowseRequest{Op: sidecar.OpList, Path: dir, Limit: sidecar.MaxListLimit}
	read := sidecar.BrowseRequest{Op: sidecar.OpRead, Path: big, Length: sidecar.MaxReadBytes}

	b.Run("List1000Warm", func(b *testing.B) {
		browse(b, r, target, ls) // warm
		compare(b, "exec", func() { browse(b, r, target, ls) },
			func() { dockerCLI(b, "exec", running, "ls", "-la", dir) })
	})
	b.Run("List1000Cold", func(b *testing.B) {
		compare(b, "run", func() {
			b.StopTimer()
			if err := r.StopBrowse(b.Context(), target.WorkspaceID); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			browse(b, r, target, ls)
		}, func() {
			dockerCLI(b, "run", "--rm", "--network", "none", "--label", docker.LabelApp+"="+app,
				"-v", target.VolumeName+":"+cairn.MountPath+":ro", shell, "-c", "ls -la "+dir)
		})
	})
	b.Run("Read1MiBWarm", func(b *testing.B) {
		browse(b, r, target, read) // warm
		compare(b, "exec", func() { browse(b, r, target, read) },
			func() { dockerCLI(b, "exec", running, "cat", big) })
	})
}

// compare runs subject then baseline b.N times, timing each, and reports
// both means, their ratio and both medians, in milliseconds.
func compare(b *testing.B, baseline string, subject, base func()) {
	var ours, theirs []time.Duration
	for range b.N {
		began := time.Now()
		subject()
		ours = append(ours, time.Since(began))
		began = time.Now()
		base()
		theirs = append(theirs, time.Since(began))
	}
	mean := func(d []time.Duration) float64 {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return float64(sum) / float64(len(d)) / float64(time.Millisecond)
	}
	p50 := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(mean(ours), "browse-ms")
	b.ReportMetric(p50(ours), "browse-p50-ms")
	b.ReportMetric(mean(theirs), baseline+"-ms")
	b.ReportMetric(p50(theirs), baseline+"-p50-ms")
	b.ReportMetric(mean(ours)/mean(theirs), "x-"+baseline)
}

// setupBenchVolume makes a prepared volume holding dir/ with 1 000 empty
// files and a 1 MiB file, big, and a Runtime to browse it.
func setupBenchVolume(b *testing.B) (*docker.Runtime, service.BrowseTarget, string) {
	b.Helper()
	cli, app := stacktest.Docker(b), stacktest.AppName(b)
	r := docker.New(cli, docker.Config{AppName: app, Image: stacktest.Image(b)})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.CloseBrowsers(ctx); err != nil {
			b.Errorf("close browsers: %v", err)
		}
	})
	target := service.BrowseTarget{WorkspaceID: ulid.Make().String(), VolumeName: app + "-ws"}
	ctx := b.Context()
	if err := r.CreateVolume(ctx, target.VolumeName, nil, 0); err != nil {
		b.Fatal(err)
	}
	run, err := r.RunSidecar(ctx, service.SidecarSpec{Command: sidecar.CommandPrep, Role: "volume-prep",
		Subject: target.WorkspaceID, WorkspaceID: target.WorkspaceID, VolumeName: target.VolumeName,
		Env: map[string]string{sidecar.EnvMountRoot: cairn.MountPath}})
	if err != nil || run.ExitCode != 0 {
		b.Fatalf("prep: %v %+v", err, run)
	}
	stacktest.RunInVolume(b, app, target.VolumeName, "cd "+cairn.MountPath+
		" && mkdir dir && i=0 && while [ $i -lt 1000 ]; do : > dir/file-$i; i=$((i+1)); done"+
		" && head -c 1048576 /dev/urandom > big")
	return r, target, app
}

// startShell runs a busybox container mounting the volume read-only, for
// docker exec, and returns its ID; it goes with the app.
func startShell(b *testing.B, app, volume string) string {
	b.Helper()
	cli, ctx := stacktest.Docker(b), b.Context()
	resp, err := cli.ContainerCreate(ctx, &container.Config{Image: stacktest.Shell(b), Cmd: []string{"-c", "sleep 3600"},
		Labels: map[string]string{docker.LabelApp: app}},
		&container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume,
			Target: cairn.MountPath, ReadOnly: true, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}}, nil, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	if err := cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		b.Fatal(err)
	}
	return resp.ID
}

func browse(b *testing.B, r *docker.Runtime, target service.BrowseTarget, req sidecar.BrowseRequest) {
	reply, err := r.Browse(b.Context(), target, req)
	if err != nil || !reply.OK {
		b.Fatalf("browse: %v %+v", err, reply)
	}
}

// dockerCLI runs the docker CLI, its output read and dropped.
func dockerCLI(b *testing.B, args ...string) {
	var stderr strings.Builder
	cmd := exec.CommandContext(b.Context(), "docker", args...)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("docker %v: %v: %s", args, err, stderr.String())
	}
}
