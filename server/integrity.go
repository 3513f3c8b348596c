package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/server/s3"
)

// probeTimeout bounds the object store's integrity probe at start.
const probeTimeout = time.Minute

// checkIntegrity runs the integrity probe against the store and decides
// whether the server may start on it: a store that keeps bytes other than
// the ones an upload URL binds is refused, unless artifact.s3.verify is
// server — then the server hashes every registered object itself, and
// says so.
func (s *Server) checkIntegrity(ctx context.Context, objects *s3.Store, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p, err := objects.ProbeIntegrity(ctx, prefix)
	if err != nil {
		return fmt.Errorf("the object store did not answer the integrity probe: %w", err)
	}
	byServer := s.cfg.Artifact.S3.Verify == VerifyByServer
	s.streamUploads = byServer || p.HashesStreams
	s.log.Info("object store integrity probe", "trusted", p.Trusted(), "part_checksums_listed", p.PartChecksumsListed,
		"hashes_streams", p.HashesStreams,
		"verify", s.cfg.Artifact.S3.Verify)
	failed := ""
	if !p.Trusted() {
		failed = fmt.Sprintf("the object store at %s failed the integrity probe: %s", s.cfg.EndpointURL(),
			strings.Join(p.Failures, "; "))
	}
	switch {
	case byServer && failed != "":
		s.log.Warn(failed + "; artifact.s3.verify is server, so the server reads back and hashes every registered object")
	case byServer:
		s.log.Info("artifact.s3.verify is server: the server reads back and hashes every registered object")
	case failed != "":
		return errors.New(failed + ". Use a store that checks the SHA-256 and length a presigned URL binds, or set " +
			"artifact.s3.verify: server to have the server read back and hash every registered object")
	}
	return nil
}
