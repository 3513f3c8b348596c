//go:build kube

package runtimetest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/creack/pty"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// benchRounds is how many times each of the eight operations runs per b.N.
const benchRounds = 12

// benchFileSize is the size of the file the transfers store.
const benchFileSize = 1024

// BenchmarkKube measures, in one run and interleaved, cairn on Kubernetes
// against its floors, and the same on Docker, side by side:
//
//   - Put1KiB: a 1 KiB volume → store transfer, the runtime's RunSidecar
//     of a put spec from a prepped volume to a presigned PUT on versitygw,
//     against the floor: one bare pod of the sidecar image (client-go,
//     minimal spec, the same claim, the same command and variables)
//     watched to its end, its log read and the pod deleted, as RunSidecar
//     does; on Docker, `docker run --rm` of the same (target ≤ 1.25× on
//     Kubernetes);
//   - ShellOpen: from asking the ShellRuntime for a shell to its first
//     prompt, against `kubectl run --rm -it` of the shell image until its
//     `echo ready` is seen, in a PTY; on Docker, `docker run --rm -it`
//     (target ≤ 1.2× on Kubernetes).
//
// Each round runs all eight once, cairn and floor in alternating order; the
// table holds the medians. Timing is reported, never asserted.
func BenchmarkKube(b *testing.B) {
	admin := stacktest.Kubeconfig(b) // the CAIRN_K8S_STATE cluster; never brought up here
	k := startKube(b, admin, 0)
	dk := startDocker(b)
	bucket := stacktest.Bucket(b)
	// Pods reach this machine at the cluster's host address from every
	// node (Docker's sidecars, on the host's network, reach it too).
	host := stacktest.KubeHostAddr(b, admin)
	presign := s3.NewPresignClient(stacktest.S3(b).Client())
	kubePresign := s3.NewPresignClient(stacktest.S3(b).Client(func(o *s3.Options) {
		o.BaseEndpoint = aws.String("http://" + stacktest.KubeStoreEndpoint(b, admin))
	}))
	body := bytes.Repeat([]byte("cairn 1k\n"), benchFileSize/9+1)[:benchFileSize]
	src := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	l, err := new(net.ListenConfig).Listen(b.Context(), "tcp", net.JoinHostPort(host, "0"))
	require.NoError(b, err)
	src.Listener = l
	src.Start()
	b.Cleanup(src.Close)

	kvol, kid := benchVolume(b, k.rt, k.app, src.URL)
	dvol, did := benchVolume(b, dk.rt, dk.app, src.URL)
	kclaim := strings.ToLower(kvol)
	b.Logf("kube app %s (namespace %s, claim %s), docker app %s (volume %s), bucket %s", k.app, k.ns, kclaim, dk.app, dvol, bucket)
	kubectlBin := kubectlPath(b)

	putURLOf := func(presign *s3.PresignClient) string {
		key := "bench/" + ulid.Make().String()
		req, err := presign.PresignPutObject(b.Context(), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
			ContentLength: aws.Int64(benchFileSize)}, s3.WithPresignExpires(10*time.Minute))
		require.NoError(b, err)
		return req.URL
	}
	putURL := func() string { return putURLOf(presign) }
	kubePutURL := func() string { return putURLOf(kubePresign) }
	source := cairn.MountPath + "/file"

	var t timings
	for range b.N {
		for i := range benchRounds {
			// Presigning is outside every timed span.
			pair(i, &t.kubePut, func() time.Duration { return cairnPut(b, k.rt, putSpec(kvol, kid, kubePutURL(), source)) },
				&t.kubePutFloor, func() time.Duration { return k.barePut(b, kclaim, putEnv(kubePutURL(), source)) })
			pair(i, &t.dockerPut, func() time.Duration { return cairnPut(b, dk.rt, putSpec(dvol, did, putURL(), source)) },
				&t.dockerPutFloor, func() time.Duration { return dk.runPut(b, dvol, putEnv(putURL(), source)) })
			pair(i, &t.kubeShell, func() time.Duration { return shellToPrompt(b, k.shells, shellSpecOf(k.app, kvol, kid)) },
				&t.kubeShellFloor, func() time.Duration { return kubectlRunReady(b, kubectlBin, admin, k.ns) })
			pair(i, &t.dockerShell, func() time.Duration { return shellToPrompt(b, dk.shells, shellSpecOf(dk.app, dvol, did)) },
				&t.dockerShellFloor, func() time.Duration { return dockerRunReady(b, dk.app) })
		}
	}
	t.report(b)
	requireStored(b, bucket, 4*b.N*benchRounds)
	k.requireNoPodsLeft(b)
}

// timings are the samples of one run: the timed part of each call.
type timings struct {
	kubePut, kubePutFloor, dockerPut, dockerPutFloor         []time.Duration
	kubeShell, kubeShellFloor, dockerShell, dockerShellFloor []time.Duration
}

// pair runs cairn and its floor once each, cairn first in even rounds and
// the floor first in odd ones, so load and warm caches weigh on both
// alike. Each returns the span it timed.
func pair(round int, ours *[]time.Duration, subject func() time.Duration, theirs *[]time.Duration, floor func() time.Duration) {
	if round%2 == 0 {
		*ours = append(*ours, subject())
		*theirs = append(*theirs, floor())
		return
	}
	*theirs = append(*theirs, floor())
	*ours = append(*ours, subject())
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (t *timings) report(b *testing.B) {
	b.Helper()
	rows := []struct {
		name, metric, target string
		kc, kf, dc, df       []time.Duration
	}{
		{"volume→store put, 1 KiB", "put", "≤ 1.25", t.kubePut, t.kubePutFloor, t.dockerPut, t.dockerPutFloor},
		{"shell open (to prompt / ready)", "shell", "≤ 1.2", t.kubeShell, t.kubeShellFloor, t.dockerShell, t.dockerShellFloor},
	}
	var out strings.Builder
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "operation (p50 of %d)\tkube cairn\tkube floor\tratio\tkube target\tdocker cairn\tdocker floor\tratio\t\n", len(t.kubePut))
	for _, r := range rows {
		kc, kf, dc, df := p50(r.kc), p50(r.kf), p50(r.dc), p50(r.df)
		kr, dr := float64(kc)/float64(kf), float64(dc)/float64(df)
		fmt.Fprintf(tw, "%s\t%.0f ms\t%.0f ms\t%.2f\t%s\t%.0f ms\t%.0f ms\t%.2f\t\n",
			r.name, ms(kc), ms(kf), kr, r.target, ms(dc), ms(df), dr)
		b.ReportMetric(ms(kc), r.metric+"-kube-ms")
		b.ReportMetric(ms(kf), r.metric+"-kube-floor-ms")
		b.ReportMetric(kr, r.metric+"-kube-ratio")
		b.ReportMetric(ms(dc), r.metric+"-docker-ms")
		b.ReportMetric(ms(df), r.metric+"-docker-floor-ms")
		b.ReportMetric(dr, r.metric+"-docker-ratio")
	}
	require.NoError(b, tw.Flush())
	b.Logf("floors: put = bare pod / docker run --rm of the sidecar image, same claim and variables; "+
		"shell = kubectl run --rm -it / docker run --rm -it of the shell image, saying ready (kubectl: every 50 ms, as it shows only what comes after its attach)\n%s", out.String())
}

// dockerApp is one fresh app on the Docker Engine, transfers on the host
// network as in TestDocker.
type dockerApp struct {
	app    string
	rt     *docker.Runtime
	shells *docker.Shells
}

func startDocker(b *testing.B) *dockerApp {
	b.Helper()
	cli := stacktest.Docker(b)
	app := stacktest.AppName(b) // its containers and volumes go at the end
	return &dockerApp{
		app:    app,
		rt:     docker.New(cli, docker.Config{AppName: app, Image: stacktest.Image(b), NetworkMode: "host"}),
		shells: docker.NewShells(cli, docker.ShellConfig{AppName: app, Image: stacktest.Shell(b)}),
	}
}

// benchVolume creates and preps a workspace volume, as volume setup does,
// and downloads the 1 KiB file into it from url.
func benchVolume(b *testing.B, rt service.Runtime, app, url string) (volume, workspaceID string) {
	b.Helper()
	workspaceID = ulid.Make().String()
	volume = app + "-" + workspaceID
	ctx := b.Context()
	require.NoError(b, rt.CreateVolume(ctx, volume, map[string]string{"cairn.workspace": workspaceID}, 0))
	b.Cleanup(func() {
		if err := removeVolume(rt, volume); err != nil {
			b.Errorf("remove volume %s: %v", volume, err)
		}
	})
	res := runSidecarOK(b, rt, service.SidecarSpec{
		Command: sidecar.CommandPrep, Role: "volume-prep", Subject: workspaceID, WorkspaceID: workspaceID,
		VolumeName: volume, Env: map[string]string{sidecar.EnvMountRoot: cairn.MountPath},
	})
	require.Equal(b, cairn.MountPath, res.PreparedPath)
	res = runSidecarOK(b, rt, transfer(sidecar.CommandDownload, volume, workspaceID,
		map[string]string{sidecar.EnvURL: url, sidecar.EnvTargetPath: cairn.MountPath + "/file"}))
	require.EqualValues(b, benchFileSize, *res.Size)
	return volume, workspaceID
}

// removeVolume removes a benchmark's volume, retrying for up to a minute:
// the pods of shells just closed may still be stopping.
func removeVolume(rt service.Runtime, volume string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		if err = rt.RemoveVolume(ctx, volume); err == nil {
			return nil
		}
		time.Sleep(time.Second) // a removal refused while mounted: retried, bounded by ctx
	}
	return err
}

func transfer(command, volume, workspaceID string, env map[string]string) service.SidecarSpec {
	env[sidecar.EnvMountRoot] = cairn.MountPath
	return service.SidecarSpec{Command: command, Role: "cairn-" + command, Subject: workspaceID,
		WorkspaceID: workspaceID, VolumeName: volume, Env: env, Transfer: true}
}

// putEnv is the put's protocol variables, as the service sets them.
func putEnv(url, source string) map[string]string {
	return map[string]string{sidecar.EnvMountRoot: cairn.MountPath, sidecar.EnvURL: url,
		sidecar.EnvSourcePath: source, sidecar.EnvMaxSize: "1048576"}
}

func putSpec(volume, workspaceID, url, source string) service.SidecarSpec {
	return transfer(sidecar.CommandPut, volume, workspaceID, putEnv(url, source))
}

func runSidecarOK(b *testing.B, rt service.Runtime, spec service.SidecarSpec) sidecar.Result {
	b.Helper()
	out, err := rt.RunSidecar(b.Context(), spec)
	require.NoError(b, err)
	return requireResult(b, out.ExitCode, out.Output)
}

func requireResult(b *testing.B, code int, output []byte) sidecar.Result {
	b.Helper()
	res, ok := sidecar.ParseResult(output)
	require.True(b, ok, "no result line in %q", output)
	require.Equal(b, 0, code, "output: %q", output)
	require.True(b, res.OK, "output: %q", output)
	return res
}

// cairnPut times the runtime's RunSidecar of a put.
func cairnPut(b *testing.B, rt service.Runtime, spec service.SidecarSpec) time.Duration {
	b.Helper()
	began := time.Now()
	out, err := rt.RunSidecar(b.Context(), spec)
	took := time.Since(began)
	require.NoError(b, err)
	res := requireResult(b, out.ExitCode, out.Output)
	require.EqualValues(b, benchFileSize, *res.Size)
	return took
}

// barePut is the Kubernetes floor of a put: the least pod that does it —
// the sidecar image, its binary with the same argument and variables, the
// same claim, the host network (the store is on loopback) — created,
// watched until its container ends, its log read and the pod deleted.
func (k *kubeApp) barePut(b *testing.B, claim string, env map[string]string) time.Duration {
	b.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(b.Context(), 2*time.Minute)
	defer cancel()
	name := "floor-" + strings.ToLower(ulid.Make().String())
	grace := int64(0)
	var vars []corev1.EnvVar
	for k, v := range env {
		vars = append(vars, corev1.EnvVar{Name: k, Value: v})
	}
	pods := k.cs.CoreV1().Pods(k.ns)
	made, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "floor"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace, HostNetwork: true,
			Containers: []corev1.Container{{
				Name: "put", Image: kubeSidecarImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{sidecar.CommandPut}, Env: vars,
				VolumeMounts: []corev1.VolumeMount{{Name: "ws", MountPath: cairn.MountPath}},
			}},
			Volumes: []corev1.Volume{{Name: "ws", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		},
	}, metav1.CreateOptions{})
	require.NoError(b, err)
	code, werr := waitTerminated(ctx, pods, name, made.ResourceVersion)
	var logs []byte
	if werr == nil {
		logs, werr = pods.GetLogs(name, &corev1.PodLogOptions{Container: "put"}).DoRaw(ctx)
	}
	// Deleted as RunSidecar deletes its pod: asked, not waited for.
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer dcancel()
	if err := pods.Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil && !apierrors.IsNotFound(err) {
		b.Fatalf("delete pod %s: %v", name, err)
	}
	took := time.Since(began)
	require.NoError(b, werr)
	res := requireResult(b, code, logs)
	require.EqualValues(b, benchFileSize, *res.Size)
	return took
}

// waitTerminated watches a pod from rv until its container has ended and
// returns the exit code.
func waitTerminated(ctx context.Context, pods corev1client.PodInterface, name, rv string) (int, error) {
	w, err := pods.Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: rv})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				return int(t.ExitCode), nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("the watch of pod " + name + " ended before its container did")
}

// runPut is the Docker floor of a put: `docker run --rm` of the sidecar
// image with the same argument, variables and volume, on the host network.
func (d *dockerApp) runPut(b *testing.B, volume string, env map[string]string) time.Duration {
	b.Helper()
	args := []string{"run", "--rm", "--network", "host", "--label", docker.LabelApp + "=" + d.app,
		"-v", volume + ":" + cairn.MountPath}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, stacktest.SidecarImage, sidecar.CommandPut)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(b.Context(), "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began)
	require.NoError(b, err, "docker run: %s%s", stdout.String(), stderr.String())
	res := requireResult(b, 0, stdout.Bytes())
	require.EqualValues(b, benchFileSize, *res.Size)
	return took
}

func shellSpecOf(app, volume, workspaceID string) service.ShellSpec {
	id := ulid.Make().String()
	return service.ShellSpec{
		Name: app + ".shell." + workspaceID + "." + id, ShellID: id, WorkspaceID: workspaceID,
		WorkspaceName: "bench", VolumeName: volume, Term: "xterm", Cols: 80, Rows: 24,
		Expires: time.Now().Add(time.Hour),
	}
}

// isPrompt tells busybox ash's prompt: "# " as root (Docker's default
// shell user), "$ " otherwise (the Kubernetes shells run as 1000).
func isPrompt(out []byte) bool {
	return bytes.Contains(out, []byte("# ")) || bytes.Contains(out, []byte("$ "))
}

// shellToPrompt times a shell from CreateShell to its first prompt in the
// output; the shell is then closed, untimed.
func shellToPrompt(b *testing.B, shells service.ShellRuntime, spec service.ShellSpec) time.Duration {
	b.Helper()
	ctx := b.Context()
	began := time.Now()
	st, err := shells.CreateShell(ctx, spec)
	require.NoError(b, err)
	if err := st.Start(ctx); err != nil {
		_ = st.Close()
		b.Fatalf("start the shell: %v", err)
	}
	var out []byte
	got := make(chan error, 1)
	go func() {
		p := make([]byte, 4096)
		for {
			n, err := st.Read(p)
			out = append(out, p[:n]...)
			if isPrompt(out) {
				got <- nil
				return
			}
			if err != nil {
				got <- err
				return
			}
		}
	}()
	var took time.Duration
	select {
	case err = <-got:
		took = time.Since(began)
	case <-time.After(time.Minute):
		_ = st.Close()
		err = <-got
		b.Fatalf("no prompt within a minute (%v); output %q", err, out)
	}
	require.NoError(b, st.Close())
	require.NoError(b, err, "the shell ended before its prompt; output %q", out)
	return took
}

// kubectlRunReady is the Kubernetes floor of a shell open: `kubectl run
// --rm -it` of the shell image in a PTY, timed until "ready" is seen. The
// pod says it every 50 ms for two seconds: kubectl attaches to a running
// container and shows only what it writes from then on, so a single line
// written before the attach would be lost (and, on a slower node, was).
func kubectlRunReady(b *testing.B, kubectl, adminKubeconfig, ns string) time.Duration {
	b.Helper()
	name := "floor-sh-" + strings.ToLower(ulid.Make().String())
	return ptyUntilReady(b, exec.CommandContext(b.Context(), kubectl, "--kubeconfig", adminKubeconfig, "--namespace", ns,
		"run", name, "--rm", "-it", "--image", kubeShellImage, "--image-pull-policy", "Never", "--restart", "Never",
		"--command", "--", "/bin/sh", "-c", "for i in $(seq 40); do echo ready; sleep 0.05; done"))
}

// dockerRunReady is the Docker floor of a shell open: `docker run --rm
// -it` of the shell image (its entrypoint is /bin/sh) in a PTY.
func dockerRunReady(b *testing.B, app string) time.Duration {
	b.Helper()
	return ptyUntilReady(b, exec.CommandContext(b.Context(), "docker", "run", "--rm", "-it", "--network", "none",
		"--label", docker.LabelApp+"="+app, stacktest.ShellImage, "-c", "echo ready"))
}

// ptyUntilReady starts cmd in a PTY and times it until "ready" is in its
// output; it then waits, untimed, for cmd to end (its pod or container
// removed), which must succeed.
func ptyUntilReady(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	began := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	require.NoError(b, err)
	defer f.Close()
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(out, []byte("ready")) {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			_ = cmd.Wait()
			b.Fatalf("%s ended before ready: %v; output %q", cmd.Args[0], err, out)
		}
	}
	took := time.Since(began)
	for {
		n, err := f.Read(buf) // until the PTY closes (EIO on Linux)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	require.NoError(b, cmd.Wait(), "%v: output %q", cmd.Args, out)
	return took
}

func kubectlPath(b *testing.B) string {
	b.Helper()
	k, err := stacktest.Kubectl()
	require.NoError(b, err)
	return k
}

// requireStored checks that every put of the run, cairn's and the floors',
// landed in the store.
func requireStored(b *testing.B, bucket string, want int) {
	b.Helper()
	n := 0
	pages := s3.NewListObjectsV2Paginator(stacktest.S3(b).Client(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("bench/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(b.Context())
		require.NoError(b, err)
		for _, obj := range page.Contents {
			require.EqualValues(b, benchFileSize, aws.ToInt64(obj.Size), "object %s", aws.ToString(obj.Key))
			n++
		}
	}
	require.Equal(b, want, n, "every put is in the store")
}

// requireNoPodsLeft waits until the app's namespace holds no pod: cairn's
// sidecars and shells and the floors' pods are all deleted.
func (k *kubeApp) requireNoPodsLeft(b *testing.B) {
	b.Helper()
	var left []string
	require.Eventually(b, func() bool {
		list, err := k.cs.CoreV1().Pods(k.ns).List(b.Context(), metav1.ListOptions{LabelSelector: labels.Everything().String()})
		if err != nil {
			return false
		}
		left = left[:0]
		for _, p := range list.Items {
			left = append(left, p.Name)
		}
		return len(left) == 0
	}, 2*time.Minute, 200*time.Millisecond, "pods left in %s: %v", k.ns, left)
}
