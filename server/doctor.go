package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/s3"
	"github.com/cairn-dev/cairn/server/service"
)

// Check is one line of `cairn doctor`: what was checked, whether it
// passed, what was found and, when it failed, the fix.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// doctorStep bounds each of Doctor's checks; the presign check runs a
// sidecar and gets the sidecar's timeout instead.
const doctorStep = 30 * time.Second

// Doctor checks, without serving, what a server started from cfg needs:
// the database, the bucket, the store's integrity, the container runtime
// with its sidecar image, and a sidecar's reach of the address presigned
// URLs name. A check that needs a failed one is reported as not run.
func Doctor(ctx context.Context, cfg Config, secrets Secrets, log *slog.Logger) []Check {
	s := &Server{cfg: cfg, log: cmp.Or(log, slog.New(slog.DiscardHandler)), registry: newRegistry(cfg.Metrics)}
	defer s.Close()
	var checks []Check
	add := func(name string, err error, detail, fix string) bool {
		c := Check{Name: name, OK: err == nil, Detail: detail}
		if err != nil {
			c.Detail, c.Fix = oneLine(err), fix
		}
		checks = append(checks, c)
		return err == nil
	}
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, doctorStep) }

	sqlCtx, cancel := step()
	var err error
	s.db, err = postgres.Open(sqlCtx, DatabaseURL(cfg.Persistence.SQL.App, secrets.SQLPassword))
	cancel()
	sql := cfg.Persistence.SQL.App
	dbOK := add("database", err, fmt.Sprintf("database %s as %s", sql.DB, sql.User),
		"check persistence.sql.app (hosts, database, user) and the password; `cairn migrate` applies the schema")

	objects, err := s.openStore(secrets)
	if err == nil {
		storeCtx, cancel := step()
		err = objects.Ping(storeCtx)
		cancel()
	}
	storeOK := add("object store", err, fmt.Sprintf("bucket %s at %s", cfg.Artifact.Store.Bucket, cfg.EndpointURL()),
		"check artifact.s3.endpoint, the access and secret keys, and that artifact.store.bucket exists")

	runtime, err := s.openRuntime(func(string, string, time.Duration) {})
	if err == nil {
		rtCtx, cancel := step()
		if err = runtime.Ping(rtCtx); err == nil {
			err = runtime.CheckImage(rtCtx)
		}
		cancel()
	}
	rtOK := add("runtime", err, fmt.Sprintf("%s, sidecar image %s", cfg.Workspace.VolumeType, cfg.Artifact.Sidecar.Image),
		"start the container engine (or check kubernetes.*) and build or pull the sidecar image (`make images`)")

	if !storeOK || !dbOK || !rtOK {
		checks = append(checks, notRun("integrity"), notRun("presign endpoint"))
		return checks
	}
	svc := service.New(s.db, runtime, objects, s.serviceConfig())
	add("integrity", s.probeForDoctor(ctx, objects, svc.ProbePrefix()), "the store refuses bytes other than those a URL binds",
		"use a store that checks the SHA-256 and length a presigned URL binds, or set artifact.s3.verify: server")
	reach := svc.CheckPresignReach(ctx)
	if reach != nil {
		reach = fmt.Errorf("a sidecar could not download through %s: %w", cfg.PresignEndpointURL(), reach)
	}
	add("presign endpoint", reach, "a sidecar downloaded through "+cfg.PresignEndpointURL(),
		"set artifact.s3.presignEndpoint to an address of the store that sidecars reach (and artifact.sidecar.networkMode)")
	return checks
}

// probeForDoctor is the start's integrity check as an error: nil when the
// server would start on the store.
func (s *Server) probeForDoctor(ctx context.Context, objects *s3.Store, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p, err := objects.ProbeIntegrity(ctx, prefix)
	switch {
	case err != nil:
		return err
	case !p.Trusted() && s.cfg.Artifact.S3.Verify != VerifyByServer:
		return fmt.Errorf("the store %s", strings.Join(p.Failures, "; "))
	}
	return nil
}

func notRun(name string) Check {
	return Check{Name: name, Detail: "not run: it needs the checks above", Fix: "fix the checks above first"}
}

// oneLine is an error on one line, as a doctor line shows it.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
