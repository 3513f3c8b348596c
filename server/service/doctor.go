package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"path"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// CheckPresignReach proves that a transfer sidecar reaches the store at
// the address presigned URLs name (artifact.s3.presignEndpoint): it writes
// a small object, downloads it through a presigned GET in a sidecar into a
// scratch volume, checking its digest, and removes both. Reasons: those of
// a transfer (sidecar_failed names what the sidecar met).
func (s *Service) CheckPresignReach(ctx context.Context) error {
	body := make([]byte, 64)
	_, _ = rand.Read(body) // never fails
	sum := sha256.Sum256(body)
	id := strings.ToLower(ulid.Make().String())
	key := s.ProbePrefix() + "/" + id
	if err := s.objects.Put(ctx, key, bytes.NewReader(body), int64(len(body)), sum[:], ""); err != nil {
		return err
	}
	defer s.deleteObject(context.WithoutCancel(ctx), key, "doctor's probe object")
	url, err := s.objects.PresignGet(ctx, key, s.sidecarTimeout+sidecarURLSlack, "")
	if err != nil {
		return err
	}
	ws := &cairn.Workspace{ID: "doctor-" + id, VolumeName: s.appName + "-doctor-" + id}
	if err := s.runtime.CreateVolume(ctx, ws.VolumeName, map[string]string{"cairn.app": s.appName}, 0); err != nil {
		return err
	}
	defer func() {
		if err := s.runtime.RemoveVolume(context.WithoutCancel(ctx), ws.VolumeName); err != nil {
			s.log.Warn("remove the doctor's scratch volume", "volume", ws.VolumeName, "err", err)
		}
	}()
	res, run, err := s.runTransfer(ctx, ws, SidecarSpec{
		Command: sidecar.CommandDownload, Role: "cairn-doctor", Subject: id,
		Env: map[string]string{sidecar.EnvTargetPath: path.Join(cairn.MountPath, "probe"), sidecar.EnvURL: url},
	}, only(url))
	if err != nil {
		return err
	}
	return transferVerdict(sidecar.CommandDownload, res, run, url)
}
