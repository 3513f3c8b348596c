package service

import (
	"context"
	"path"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

var _ cairn.FileWriter = (*Service)(nil)

// WriteFile replaces a file's whole content through the workspace's
// writer sidecar: written beside it, flushed, renamed into place.
func (s *Service) WriteFile(ctx context.Context, workspaceID string, p cairn.FileWriteParams) (*cairn.FileChange, error) {
	if err := cairn.ValidateVolumePath(p.Path); err != nil {
		return nil, err
	}
	if err := cairn.ValidateFileMode(p.Mode); err != nil {
		return nil, err
	}
	if int64(len(p.Data)) > s.maxFileWrite {
		return nil, cairn.Errorf(cairn.ReasonBodyTooLarge,
			"a file write carries at most %d bytes; save a larger file as an artifact and load it", s.maxFileWrite)
	}
	if p.IfMatch != "" && p.CreateOnly {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "a write is either conditional on an ETag or create-only, not both")
	}
	return s.change(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpPut, Path: path.Clean(p.Path),
		Mode: p.Mode, IfMatch: p.IfMatch, CreateOnly: p.CreateOnly, Size: int64(len(p.Data)), Body: p.Data})
}

// RemovePath removes a path of the workspace volume.
func (s *Service) RemovePath(ctx context.Context, workspaceID string, p cairn.FileRemoveParams) (*cairn.FileChange, error) {
	if err := validateChangePath(p.Path); err != nil {
		return nil, err
	}
	return s.change(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpRemove, Path: path.Clean(p.Path), Recursive: p.Recursive})
}

// MakeDir makes a directory of the workspace volume.
func (s *Service) MakeDir(ctx context.Context, workspaceID string, p cairn.MakeDirParams) (*cairn.FileChange, error) {
	if err := cairn.ValidateListPath(p.Path); err != nil {
		return nil, err
	}
	if err := cairn.ValidateFileMode(p.Mode); err != nil {
		return nil, err
	}
	return s.change(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpMkdir, Path: path.Clean(p.Path), Parents: p.Parents, Mode: p.Mode})
}

// MovePath renames a path of the workspace volume.
func (s *Service) MovePath(ctx context.Context, workspaceID string, p cairn.MoveParams) (*cairn.FileChange, error) {
	for _, q := range []string{p.From, p.To} {
		if err := validateChangePath(q); err != nil {
			return nil, err
		}
	}
	from, to := path.Clean(p.From), path.Clean(p.To)
	if strings.HasPrefix(to+"/", from+"/") {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "a path cannot be moved into itself")
	}
	return s.change(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpMove, Path: from, To: to, Overwrite: p.Overwrite})
}

// validateChangePath checks a path to remove or move: the mount root is
// refused as such, not as an invalid path.
func validateChangePath(p string) error {
	if err := cairn.ValidateListPath(p); err != nil {
		return err
	}
	if path.Clean(p) == cairn.MountPath {
		return cairn.Errorf(cairn.ReasonPathIsMountRoot, "the workspace volume's mount root can be neither removed nor moved")
	}
	return nil
}

// change runs one write in the workspace's writer and records it in the
// audit trail. The volume is the truth: a change that was made is
// answered as made even when its record cannot be written, which is logged.
func (s *Service) change(ctx context.Context, workspaceID string, req sidecar.BrowseRequest) (*cairn.FileChange, error) {
	reply, err := s.browse(ctx, workspaceID, req)
	if err != nil {
		return nil, err
	}
	out := &cairn.FileChange{Path: reply.Path}
	if reply.File != nil {
		e := fileEntry(*reply.File)
		out.Entry = &e
	}
	meta := map[string]any{"workspace_id": workspaceID, "op": req.Op, "path": reply.Path}
	switch req.Op {
	case sidecar.OpPut:
		meta["size"] = req.Size
	case sidecar.OpMove:
		meta["from"] = req.Path
	}
	if err := s.audit(ctx, s.store, cairn.AuditFileChanged, meta); err != nil {
		s.log.Error("record a file change in the audit trail", "workspace_id", workspaceID, "op", req.Op, "err", err)
	}
	return out, nil
}
