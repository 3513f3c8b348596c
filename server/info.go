package server

import (
	"cmp"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/service"
)

// info builds what GET /v1/info answers, but the caller's scopes: fixed
// once the server has opened.
func (s *Server) info(svc *service.Service) *cairn.Info {
	bounds := svc.Bounds()
	bounds.MaxBodyBytes = auth.MaxBodyBytes
	runtime := "docker"
	if s.cfg.Workspace.VolumeType == "kubernetes" {
		runtime = "kubernetes"
	}
	return &cairn.Info{Version: s.version, APIVersion: cairn.APIVersion, Bounds: bounds, Features: cairn.InfoFeatures{
		Runtime:       runtime,
		Shell:         s.shells != nil,
		SSH:           s.cfg.SSHEnabled(),
		MCP:           s.cfg.API.APIs.MCP.Enable,
		Integrity:     cmp.Or(s.cfg.Artifact.S3.Verify, VerifyByStore),
		StreamUploads: s.streamUploads,
		FilesWrite:    true,
		Watch:         true,
	}}
}
