package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/kube"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
)

// engineRuntime is the container engine as the server holds it: the
// service's runtime port, the reconciler's, the start check and the
// sidecar gauge. server/docker's Runtime is one; kubeRuntime another.
type engineRuntime interface {
	service.Runtime
	reconcile.Containers
	reconcile.VolumeLister
	// CheckImage refuses to start when the sidecars cannot run.
	CheckImage(ctx context.Context) error
	// Running counts the sidecars running now.
	Running() int
	// CloseBrowsers ends the warm browse containers at shutdown.
	CloseBrowsers(ctx context.Context) error
}

// engineShells is the engine's shells and execs, and their start check.
type engineShells interface {
	service.ShellRuntime
	service.ExecRuntime
	CheckImage(ctx context.Context) error
}

// openRuntime connects the engine workspace.volumeType names.
func (s *Server) openRuntime(onSidecar func(command, result string, took time.Duration)) (engineRuntime, error) {
	if s.cfg.Workspace.VolumeType == "kubernetes" {
		kc := s.kubeConfig()
		kc.OnSidecar = onSidecar
		rt, err := kube.New(kc)
		if err != nil {
			return nil, err
		}
		return &kubeRuntime{Runtime: rt}, nil
	}
	var err error
	if s.docker, err = docker.Connect(); err != nil {
		return nil, err
	}
	cfg := s.runtimeConfig()
	cfg.OnSidecar = onSidecar
	return docker.New(s.docker, cfg), nil
}

// openShellRuntime builds the shells and execs on the same engine, their
// containers marked with the shell's instance name.
func (s *Server) openShellRuntime() (engineShells, error) {
	if s.cfg.Workspace.VolumeType != "kubernetes" {
		return docker.NewShells(s.docker, s.dockerShellConfig()), nil
	}
	kc := s.kubeConfig()
	kc.Instance = s.shellInstance // as on Docker: a shell is known by the shell's instance name
	rt, err := kube.New(kc)
	if err != nil {
		return nil, err
	}
	sh, err := rt.Shells(s.kubeShellConfig())
	if err != nil {
		return nil, err
	}
	return kubeShells{sh}, nil
}

func (s *Server) kubeShellConfig() kube.ShellConfig {
	sc := s.cfg.Shell
	env := make([]string, 0, len(sc.Envs))
	for _, e := range sc.Envs {
		env = append(env, e.Name+"="+e.Value)
	}
	return kube.ShellConfig{Image: sc.Image, Entrypoint: sc.Entrypoint, Umask: sc.Umask, User: sc.User, Env: env,
		MemoryMiB: int64(sc.Limits.MemoryMiB), CPUs: sc.Limits.CPUs, TmpfsMiB: int64(sc.Limits.TmpfsMiB),
		StopSecs: sc.Timeouts.StopSecs}
}

// kubeRuntime is the Kubernetes runtime as the server holds an engine.
type kubeRuntime struct {
	*kube.Runtime
	running atomic.Int64
}

// RunSidecar counts the run for the gauge, waiting for a slot included.
func (k *kubeRuntime) RunSidecar(ctx context.Context, spec service.SidecarSpec) (*service.SidecarRun, error) {
	k.running.Add(1)
	defer k.running.Add(-1)
	return k.Runtime.RunSidecar(ctx, spec)
}

func (k *kubeRuntime) Running() int { return int(k.running.Load()) }

// CheckImage checks that the API answers and lets cairn work in its
// namespace, and that its claims have a storage class. The images are
// loaded into the nodes and never pulled; one that is missing fails its
// pod, with the kubelet's reason.
func (k *kubeRuntime) CheckImage(ctx context.Context) error {
	if err := k.Ping(ctx); err != nil {
		return err
	}
	return k.CheckStorage(ctx)
}

// kubeShells is the Kubernetes shells as the server holds them.
type kubeShells struct{ *kube.Shells }

// CheckImage: see kubeRuntime.CheckImage.
func (k kubeShells) CheckImage(context.Context) error { return nil }
