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

// versitygwModule is what `make deps` installs; FindVersitygw's error names it.
const versitygwModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

const (
	s3DataDir    = "s3data" // the posix backend's root: one directory per bucket
	s3AccessFile = "s3-access-key"
	s3SecretFile = "s3-secret-key"
	s3PortFile   = "s3-port"
	s3StartWait  = 30 * time.Second
)

// S3 is a versitygw gateway started by StartS3, serving a posix directory
// over plain HTTP on loopback.
type S3 struct {
	Endpoint  string // 127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string // always us-east-1
	Dir       string // the directory holding the data, keys and port

	bin string
	log io.Writer

	mu   sync.Mutex // guards proc across Restart
	proc *process
}

// FindVersitygw returns the path of the versitygw binary: $CAIRN_VERSITYGW,
// then bin/versitygw under the module root, then $GOBIN or $(go env
// GOPATH)/bin, then PATH. Its error says how to install it.
func FindVersitygw() (string, error) {
	if p := os.Getenv("CAIRN_VERSITYGW"); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("find versitygw: $CAIRN_VERSITYGW=%s is not an executable file", p)
		}
		return p, nil
	}
	var dirs []string
	if root, err := ModuleRoot(); err == nil {
		dirs = append(dirs, filepath.Join(root, "bin"))
	}
	gobin := os.Getenv("GOBIN")
	if gobin == "" {
		gobin = goEnv("GOBIN")
	}
	if gobin != "" {
		dirs = append(dirs, gobin)
	} else {
		for _, gopath := range filepath.SplitList(goEnv("GOPATH")) {
			dirs = append(dirs, filepath.Join(gopath, "bin"))
		}
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "versitygw"); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("find versitygw: not in $CAIRN_VERSITYGW, %s or PATH; install it with `make deps`, or from the module root with `GOBIN=$PWD/bin go install %s`",
		strings.Join(dirs, ", "), versitygwModule)
}

// StartS3 starts versitygw (the binary at bin) with a posix backend in dir,
// on a free loopback port, and returns once it answers a signed request. The
// access and secret keys are generated on first use and kept in dir, like the
// port, so a restart in the same dir serves the same buckets to the same
// clients. The gateway's output goes to log (nil means discard), and it is
// killed if the calling process dies.
func StartS3(ctx context.Context, bin, dir string, log io.Writer) (*S3, error) {
	return StartS3On(ctx, "127.0.0.1", bin, dir, log)
}

// StartS3On is StartS3 listening on host, an address of this machine.
func StartS3On(ctx context.Context, host, bin, dir string, log io.Writer) (*S3, error) {
	if err := os.MkdirAll(filepath.Join(dir, s3DataDir), 0o755); err != nil {
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
		bin:       bin,
		log:       log,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// start runs the gateway and waits for it; s.mu is held.
func (s *S3) start(ctx context.Context) error {
	// The store outlives this call: Stop ends it, not ctx.
	cmd := exec.CommandContext(context.WithoutCancel(ctx), s.bin, "--port", s.Endpoint, "--region", s.Region, "--quiet",
		"posix", filepath.Join(s.Dir, s3DataDir))
	// Keys go in the environment, not argv, which every local user can read.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	cmd.Dir = s.Dir
	proc, err := startProcess("versitygw", cmd, s.log)
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

// waitReady lists buckets until the gateway answers.
func (s *S3) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s3StartWait)
	defer cancel()
	client := s.Client(func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListBuckets(attempt, &s3.ListBucketsInput{})
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-s.proc.done:
			return s.proc.exitError()
		case <-ctx.Done():
			return fmt.Errorf("wait for versitygw on %s: %w (last error: %v)", s.Endpoint, ctx.Err(), err)
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
	return s.proc.stop(syscall.SIGTERM, stopGrace)
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
		if err := s.proc.stop(syscall.SIGTERM, stopGrace); err != nil {
			return fmt.Errorf("restart versitygw: %w", err)
		}
	}
	if err := s.start(ctx); err != nil {
		return fmt.Errorf("restart versitygw: %w", err)
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
