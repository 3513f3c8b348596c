package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The S3 implementations the stack can start. versitygw serves a posix
// directory from one process; SeaweedFS runs a master, a volume server, a
// filer and its S3 gateway in one `weed server` process.
const (
	StoreVersitygw = "versitygw"
	StoreSeaweedFS = "seaweedfs"
)

// StoreKinds lists the kinds in the order tests and docs name them.
var StoreKinds = []string{StoreVersitygw, StoreSeaweedFS}

// storeBinaries are what `make deps` installs for each kind: the binary's
// name, the variable that overrides its path, and how to install it by hand.
var storeBinaries = map[string]struct{ name, env, install string }{
	StoreVersitygw: {"versitygw", "CAIRN_VERSITYGW",
		"`GOBIN=$PWD/bin go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`"},
	StoreSeaweedFS: {"weed", "CAIRN_WEED", "`scripts/deps.sh` (it builds bin/weed from the Go module proxy)"},
}

const (
	s3DataDir    = "s3data" // versitygw's posix root: one directory per bucket
	s3AccessFile = "s3-access-key"
	s3SecretFile = "s3-secret-key"
	s3PortFile   = "s3-port"
	s3StartWait  = 60 * time.Second
)

// StoreBinary is an S3 implementation this machine can run: its kind and
// the path of its binary.
type StoreBinary struct {
	Kind string
	Path string
}

// S3 is a store started by StartS3, serving over plain HTTP.
type S3 struct {
	Endpoint  string // HOST:PORT
	AccessKey string
	SecretKey string
	Region    string // always us-east-1
	Dir       string // the directory holding the data, keys and ports
	Kind      string // StoreVersitygw or StoreSeaweedFS

	bin    string
	log    io.Writer
	master string // SeaweedFS: the master's URL, for readiness

	mu   sync.Mutex // guards proc across Restart
	proc *process
}

// FindStore returns the binary of the store kind: its variable
// ($CAIRN_VERSITYGW, $CAIRN_WEED), then bin/ under the module root, then
// $GOBIN or $(go env GOPATH)/bin, then PATH. Its error says how to install it.
func FindStore(kind string) (StoreBinary, error) {
	spec, ok := storeBinaries[kind]
	if !ok {
		return StoreBinary{}, fmt.Errorf("find store: %q is not a store kind (%s)", kind, strings.Join(StoreKinds, ", "))
	}
	if p := os.Getenv(spec.env); p != "" {
		if !isExecutable(p) {
			return StoreBinary{}, fmt.Errorf("find %s: $%s=%s is not an executable file", spec.name, spec.env, p)
		}
		return StoreBinary{Kind: kind, Path: p}, nil
	}
	dirs := binDirs()
	for _, d := range dirs {
		if p := filepath.Join(d, spec.name); isExecutable(p) {
			return StoreBinary{Kind: kind, Path: p}, nil
		}
	}
	if p, err := exec.LookPath(spec.name); err == nil {
		return StoreBinary{Kind: kind, Path: p}, nil
	}
	return StoreBinary{}, fmt.Errorf("find %s: not in $%s, %s or PATH; install it with `make deps`, or from the module root with %s",
		spec.name, spec.env, strings.Join(dirs, ", "), spec.install)
}

// binDirs are where installed tools are looked for before PATH.
func binDirs() []string {
	var dirs []string
	if root, err := ModuleRoot(); err == nil {
		dirs = append(dirs, filepath.Join(root, "bin"))
	}
	gobin := os.Getenv("GOBIN")
	if gobin == "" {
		gobin = goEnv("GOBIN")
	}
	if gobin != "" {
		return append(dirs, gobin)
	}
	for _, gopath := range filepath.SplitList(goEnv("GOPATH")) {
		dirs = append(dirs, filepath.Join(gopath, "bin"))
	}
	return dirs
}

// StartS3 starts the store on a free loopback port with its data in dir,
// and returns once it answers a signed request. The access and secret keys
// are generated on first use and kept in dir, like the ports, so a restart
// in the same dir serves the same buckets to the same clients. The store's
// output goes to log (nil means discard), and it is killed if the calling
// process dies.
func StartS3(ctx context.Context, store StoreBinary, dir string, log io.Writer) (*S3, error) {
	return StartS3On(ctx, "127.0.0.1", store, dir, log)
}

// StartS3On is StartS3 serving S3 on host, an address of this machine.
func StartS3On(ctx context.Context, host string, store StoreBinary, dir string, log io.Writer) (*S3, error) {
	if _, ok := storeBinaries[store.Kind]; !ok {
		return nil, fmt.Errorf("start s3: %q is not a store kind", store.Kind)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("s3 dir: %w", err)
	}
	access, err := readOrCreateSecret(filepath.Join(dir, s3AccessFile), 10)
	if err != nil {
		return nil, fmt.Errorf("s3 access key: %w", err)
	}
	secret, err := readOrCreateSecret(filepath.Join(dir, s3SecretFile), 20)
	if err != nil {
		return nil, fmt.Errorf("s3 secret key: %w", err)
	}
	port, err := choosePort(filepath.Join(dir, s3PortFile))
	if err != nil {
		return nil, fmt.Errorf("s3 port: %w", err)
	}
	s := &S3{
		Endpoint:  net.JoinHostPort(host, strconv.Itoa(port)),
		AccessKey: access,
		SecretKey: secret,
		Region:    "us-east-1",
		Dir:       dir,
		Kind:      store.Kind,
		bin:       store.Path,
		log:       log,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// start runs the store and waits for it; s.mu is held.
func (s *S3) start(ctx context.Context) error {
	var cmd *exec.Cmd
	var err error
	if s.Kind == StoreSeaweedFS {
		cmd, err = s.seaweedCommand(ctx)
	} else {
		cmd, err = s.versitygwCommand(ctx)
	}
	if err != nil {
		return err
	}
	cmd.Dir = s.Dir
	proc, err := startProcess(s.Kind, cmd, s.log)
	if err != nil {
		return err
	}
	s.proc = proc
	if err := s.waitReady(ctx); err != nil {
		proc.kill()
		return err
	}
	return nil
}

// versitygwCommand serves the posix directory s3data.
func (s *S3) versitygwCommand(ctx context.Context) (*exec.Cmd, error) {
	data := filepath.Join(s.Dir, s3DataDir)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("s3 dir: %w", err)
	}
	// The store outlives this call: Stop ends it, not ctx.
	cmd := exec.CommandContext(context.WithoutCancel(ctx), s.bin, "--port", s.Endpoint, "--region", s.Region, "--quiet",
		"posix", data)
	// Keys go in the environment, not argv, which every local user can read.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	return cmd, nil
}

// waitReady lists buckets until the store answers.
func (s *S3) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s3StartWait)
	defer cancel()
	client := s.Client(func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListBuckets(attempt, &s3.ListBucketsInput{})
		if err == nil && s.Kind == StoreSeaweedFS {
			err = s.seaweedVolumesUp(attempt)
		}
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-s.proc.done:
			return s.proc.exitError()
		case <-ctx.Done():
			return fmt.Errorf("wait for %s on %s: %w (last error: %v)", s.Kind, s.Endpoint, ctx.Err(), err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Client returns an S3 client for the gateway: path-style addressing, static
// credentials, plain HTTP. optFns adjust it further (retries, timeouts).
func (s *S3) Client(optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		BaseEndpoint: aws.String("http://" + s.Endpoint),
		UsePathStyle: true,
	}, optFns...)
}

// CreateBucket creates bucket name. It is idempotent: a bucket these
// credentials already own is not an error.
func (s *S3) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	if owned := (*types.BucketAlreadyOwnedByYou)(nil); errors.As(err, &owned) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

// Stop shuts the gateway down (SIGTERM) and waits for it, killing it after
// 10 s. It is idempotent; it returns an error only if the gateway had to be
// killed.
func (s *S3) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	return s.halt()
}

// seaweedStopGrace bounds a `weed server` shutdown: once its volume server
// has stopped, its S3 gateway can retry a background write for good, so it
// is killed after this grace — safely, as every write it acknowledged is
// already in its files.
const seaweedStopGrace = 3 * time.Second

// halt stops the running store politely; s.mu is held.
func (s *S3) halt() error {
	if s.Kind != StoreSeaweedFS {
		return s.proc.stop(syscall.SIGTERM, stopGrace)
	}
	if err := s.proc.stop(syscall.SIGTERM, seaweedStopGrace); err != nil && !errors.Is(err, errKilled) {
		return err
	}
	return nil
}

// Kill ends the gateway at once (SIGKILL), as a crash would, and waits for
// it. Restart brings it back.
func (s *S3) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.kill()
	}
}

// Restart stops the gateway if it runs and starts it again on the same port,
// directory and keys, so clients made before keep working. Tests use Stop or
// Kill, then Restart, to simulate a store that goes away and comes back.
func (s *S3) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		if err := s.halt(); err != nil {
			return fmt.Errorf("restart %s: %w", s.Kind, err)
		}
	}
	if err := s.start(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", s.Kind, err)
	}
	return nil
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// goEnv returns `go env name`, or "" if go cannot say.
func goEnv(name string) string {
	out, err := exec.CommandContext(context.Background(), "go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
