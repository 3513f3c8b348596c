package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/docker/client"
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/clientconf"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server"
)

// devBucket is the bucket the dev stack creates in its own store.
const devBucket = "cairn"

type devOptions struct {
	listen     string
	stateDir   string
	noAuth     bool
	runtime    string // docker or kubernetes
	kubeconfig string
	ha         bool   // a synchronous standby beside the primary
	store      string // the S3 implementation: stack.StoreVersitygw or stack.StoreSeaweedFS
}

func newDevCommand(g *globals) *cobra.Command {
	o := devOptions{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the whole local stack: Postgres, an S3 store, the images and the server",
		Long: `dev starts a private PostgreSQL cluster, an S3 store with its bucket (versitygw,
or SeaweedFS with --store seaweedfs),
builds the sidecar image if it is missing or stale, and runs the server on
--listen with the schema applied. With --ha, Postgres is a primary and a
synchronous streaming standby, and the server is given both: kill the
primary, promote the standby (SELECT pg_promote() on its port) and the
server carries on without a restart. Everything it creates lives in --state-dir,
so two stacks with different state dirs and ports run side by side, and a
restart keeps the data. -c FILE overrides the dev server's config keys.
Ctrl-C stops everything; 'cairn dev purge' then removes the state and the
stack's containers and volumes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			return runDev(cmd.Context(), cmd.OutOrStdout(), log, o, g.configFile)
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:44123", "API listen address")
	cmd.Flags().BoolVar(&o.noAuth, "no-auth", false, "run without authentication (loopback listeners only)")
	cmd.Flags().BoolVar(&o.ha, "ha", false, "run Postgres as a primary and a synchronous standby, the server connected to both")
	cmd.Flags().StringVar(&o.store, "store", stack.StoreVersitygw, "the S3 store to run: "+strings.Join(stack.StoreKinds, " or "))
	cmd.Flags().StringVar(&o.runtime, "runtime", "docker", "where workspaces, sidecars and shells run: docker or kubernetes")
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "",
		"with --runtime kubernetes: the cluster's kubeconfig (default: $CAIRN_K8S_STATE/admin.kubeconfig, the cluster of 'make k8s-up', else $KUBECONFIG)")
	cmd.PersistentFlags().StringVar(&o.stateDir, "state-dir", defaultStateDir(), "directory for everything the stack creates")
	cmd.AddCommand(newDevPurgeCommand(&o))
	return cmd
}

func defaultStateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "cairn", "dev")
}

// devStack is what runDev started, stopped in reverse order.
type devStack struct {
	pg     *stack.Postgres   // the primary
	pair   *stack.Replicated // with --ha: pg and its standby
	s3     *stack.S3
	docker *client.Client
	logs   *os.File
}

func (d *devStack) stop() {
	if d.s3 != nil {
		d.s3.Stop()
	}
	switch {
	case d.pair != nil:
		_ = d.pair.Stop() // on the way out: the processes end either way
	case d.pg != nil:
		d.pg.Stop()
	}
	if d.docker != nil {
		d.docker.Close()
	}
	if d.logs != nil {
		d.logs.Close()
	}
}

func runDev(ctx context.Context, out io.Writer, log *slog.Logger, o devOptions, overrides string) error {
	dir, err := filepath.Abs(o.stateDir)
	if err != nil {
		return err
	}
	st, err := startDevServices(ctx, dir, o)
	defer st.stop()
	if err != nil {
		return err
	}
	instance, err := devInstance(dir)
	if err != nil {
		return err
	}
	cfg, err := devConfig(o.listen, st.s3, "cairn-"+instance, overrides)
	if err != nil {
		return err
	}
	if err := devRuntime(&cfg, o); err != nil {
		return err
	}
	if err := recordDevKube(dir, cfg); err != nil {
		return err
	}
	token := ""
	if !o.noAuth {
		if token, err = devToken(dir); err != nil {
			return err
		}
		cfg.Auth.Tokens = append(cfg.Auth.Tokens, server.TokenConfig{
			Name: "dev-admin", SHA256: tokenHash(token), Scopes: tokenScopes,
		})
	}
	if err := ensureSidecarImage(ctx, st.docker, cfg.Artifact.Sidecar.Image, dir); err != nil {
		return err
	}
	if err := ensureShellImage(ctx, st.docker, cfg.Shell); err != nil {
		return err
	}
	if err := loadClusterImages(ctx, cfg, cfg.Artifact.Sidecar.Image, cfg.Shell.Image); err != nil {
		return err
	}
	home, _ := os.UserHomeDir() // "" authorizes a key made in the state dir
	identity, err := devSSH(&cfg, dir, home)
	if err != nil {
		return err
	}
	// The stack's shells carry its instance, so that purge finds them.
	cfg.Shell.InstanceName = cmp.Or(cfg.Shell.InstanceName, instance)
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = st.pg.Host, st.pg.Port
	cfg.Persistence.SQL.App.User, cfg.Persistence.SQL.App.DB = st.pg.User, st.pg.Database
	if st.pair != nil {
		cfg.Persistence.SQL.App.Hosts = st.pair.Hosts()
	}
	secrets := server.Secrets{SQLPassword: st.pg.Password, S3AccessKey: st.s3.AccessKey, S3SecretKey: st.s3.SecretKey}
	srv, err := server.Open(ctx, cfg, secrets, server.Options{Migrate: true, Maintainer: true, Version: version,
		Instance: instance, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	url := "http://" + srv.APIAddr()
	clientCfg, ctxName, err := writeClientConfig(url, dir, token)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cairn dev stack is up (state in %s)\n", dir)
	fmt.Fprintf(out, "  postgres   127.0.0.1:%d database %s\n", st.pg.Port, st.pg.Database)
	if st.pair != nil {
		fmt.Fprintf(out, "  standby    127.0.0.1:%d, synchronous (promote: SELECT pg_promote())\n", st.pair.Standby.Port)
	}
	fmt.Fprintf(out, "  s3 store   http://%s bucket %s (%s)\n", st.s3.Endpoint, devBucket, st.s3.Kind)
	fmt.Fprintf(out, "  server     %s\n", url)
	if k := cfg.Kubernetes; cfg.Workspace.VolumeType == "kubernetes" {
		fmt.Fprintf(out, "  runtime    kubernetes, namespace %s (%s)\n", k.Namespace, cmp.Or(k.Kubeconfig, "$KUBECONFIG"))
	}
	fmt.Fprintf(out, "  metrics    http://%s%s\n", srv.MetricsAddr(), cfg.Metrics.MetricsEndpoint)
	if token != "" {
		fmt.Fprintf(out, "  token      %s (every scope; in %s)\n", token, devTokenPath(dir))
	}
	fmt.Fprintf(out, "  context    %s, now current in %s\n", ctxName, clientCfg)
	if addr := srv.SSHAddr(); addr != "" {
		fmt.Fprintf(out, "  workbench  %s\n", sshCommand(addr, identity))
	}
	fmt.Fprintln(out, "Press Ctrl-C to stop.")
	return srv.Serve(ctx)
}

// startDevServices starts Postgres (with --ha, a primary and its standby),
// the store (on devStoreHost) and its bucket, and connects to Docker.
// Whatever started is in the returned stack even on error.
func startDevServices(ctx context.Context, dir string, o devOptions) (*devStack, error) {
	st := &devStack{}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, err
	}
	logs, err := os.OpenFile(filepath.Join(dir, "services.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return st, err
	}
	st.logs = logs
	if err := startDevPostgres(ctx, st, dir, o.ha); err != nil {
		return st, err
	}
	bin, err := stack.FindStore(o.store)
	if err != nil {
		return st, err
	}
	if st.s3, err = stack.StartS3On(ctx, devStoreHost(o), bin, filepath.Join(dir, devStoreDir(o.store)), logs); err != nil {
		return st, err
	}
	if err := st.s3.CreateBucket(ctx, devBucket); err != nil {
		return st, err
	}
	st.docker, err = stack.DockerClient(ctx)
	return st, err
}

// The stack's Postgres directories; the standby's exists only after a run
// with --ha.
const (
	devPostgresDir = "postgres"
	devStandbyDir  = "postgres-standby"
)

// startDevPostgres starts the stack's Postgres, a primary and its standby
// with ha, into st.
func startDevPostgres(ctx context.Context, st *devStack, dir string, ha bool) error {
	primary := filepath.Join(dir, devPostgresDir)
	if !ha {
		pg, err := stack.StartPostgres(ctx, primary, st.logs)
		st.pg = pg
		return err
	}
	pair, err := stack.StartReplicated(ctx, primary, filepath.Join(dir, devStandbyDir), st.logs)
	if err != nil {
		return err
	}
	st.pair, st.pg = pair, pair.Primary
	return nil
}

// devStoreDir is where a store kind keeps its data under the state dir:
// one directory per kind, so switching --store keeps each one's objects.
func devStoreDir(kind string) string {
	if kind == stack.StoreVersitygw {
		return "s3" // where it always was
	}
	return "s3-" + kind
}

// devMaxObjectSize is the local stack's artifact cap: the 5 TiB of S3.
const devMaxObjectSize = 5 << 40

// devConfig is the server configuration of the dev stack: loopback only,
// the app name given (unique per state dir, so that no two stacks share
// volume names or locks), transfer sidecars on the host network so that
// they reach the store on 127.0.0.1, and the overrides of the -c file on
// top.
func devConfig(listen string, s3 *stack.S3, app, overrides string) (server.Config, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return server.Config{}, fmt.Errorf("--listen %q: %w", listen, err)
	}
	cfg := server.DefaultConfig()
	cfg.AppName = app
	cfg.API.Service.ListenOn = host
	if cfg.API.Service.AppPort, err = strconv.Atoi(port); err != nil {
		return server.Config{}, fmt.Errorf("--listen %q: bad port", listen)
	}
	cfg.Metrics.Service.ListenOn = "127.0.0.1"
	cfg.Metrics.Service.AppPort = 0
	cfg.Artifact.S3.Endpoint = s3.Endpoint
	cfg.Artifact.S3.UseTLS = false
	cfg.Artifact.S3.Region = s3.Region
	cfg.Artifact.Store.Bucket = devBucket
	cfg.Artifact.Sidecar.NetworkMode = "host"
	cfg.API.APIs.MCP.Enable = true
	// A web-based MCP client on this machine (an inspector's page) may
	// connect; the token is still needed.
	cfg.API.APIs.MCP.AllowedOrigins = []string{"http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"}
	cfg.Shell.Enable = true
	// An evaluation stack shows a vanished object within a minute, with no
	// action (the maintainer flags it on the next pass).
	cfg.Maintenance.SweepIntSec = 60
	// Artifacts of any size: the local store takes what the disk holds.
	cfg.Artifact.Store.MaxObjectSize = devMaxObjectSize
	if overrides != "" {
		data, err := os.ReadFile(overrides)
		if err != nil {
			return server.Config{}, err
		}
		var warnings []string
		if cfg, warnings, err = server.ParseConfigOnto(cfg, data); err != nil {
			return server.Config{}, fmt.Errorf("%s: %w", overrides, err)
		}
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, "warning:", w)
		}
	}
	return cfg, cfg.Validate()
}

// ensureSidecarImage builds the sidecar image unless an up-to-date one
// exists. The binary comes from beside this executable (make build puts it
// there) or, inside a source checkout, from a fresh go build.
func ensureSidecarImage(ctx context.Context, cli *client.Client, tag, dir string) error {
	bin, err := sidecarBinary(ctx, dir)
	if err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	return stack.EnsureImage(ctx, cli, tag, stack.SidecarImage(binary))
}

func sidecarBinary(ctx context.Context, dir string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "cairn-sidecar"); fileExists(p) {
			return p, nil
		}
	}
	root, err := stack.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("no cairn-sidecar binary beside this executable and no source checkout to build it from; run 'make build'")
	}
	p := filepath.Join(dir, "cairn-sidecar")
	return p, stack.BuildSidecarBinary(ctx, root, p)
}

// devToken returns the stack's admin token, made once and kept in the
// state dir so that a restart keeps it.
func devToken(dir string) (string, error) {
	path := devTokenPath(dir)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	token, err := newToken(rand.Reader)
	if err != nil {
		return "", err
	}
	return token, os.WriteFile(path, []byte(token+"\n"), 0o600)
}

// devTokenPath is the file in the state dir that holds the stack's admin
// token; the stack's context reads it from there.
func devTokenPath(dir string) string { return filepath.Join(dir, "dev-token") }

// writeClientConfig records the stack in the client config file, where the
// CLI and TUI look: a context named after the state dir (/tmp/stack-b is
// stack-b), with the server and the state dir's token file, made current,
// so that a plain 'cairn ws list' or 'cairn-tui' reaches this stack. The
// rest of the file is kept. The top-level server and token an older
// 'cairn dev' wrote go, but only when they are this stack's own. It
// returns the file and the context's name.
func writeClientConfig(url, dir, token string) (string, string, error) {
	path := clientConfigPath()
	ctx := clientconf.Context{Name: clientconf.NameFor(filepath.Base(dir)), Server: url}
	if token != "" {
		ctx.TokenFile = devTokenPath(dir)
	}
	if err := clientconf.SaveContext(path, ctx, true); err != nil {
		return "", "", err
	}
	if _, err := clientconf.DropLegacy(path, url, token); err != nil {
		return "", "", err
	}
	return path, ctx.Name, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// devInstance is the stack's instance label, kept in its state dir: it
// marks every container the stack creates, so purge removes its own and
// nothing of another stack on the same engine. A new one is derived from
// the state dir's path, which no other stack can share.
func devInstance(dir string) (string, error) {
	path := filepath.Join(dir, "instance")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	sum := sha256.Sum256([]byte(dir))
	instance := "dev-" + hex.EncodeToString(sum[:5])
	return instance, os.WriteFile(path, []byte(instance+"\n"), 0o644)
}
