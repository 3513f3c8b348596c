package service

import (
	"context"
	"path"

	"github.com/gabriel-vasile/mimetype"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

var _ cairn.FileService = (*Service)(nil)

// ListFiles lists one page of a directory of the workspace volume in the
// workspace's browse container.
func (s *Service) ListFiles(ctx context.Context, workspaceID string, p cairn.FileListParams) (*cairn.FileListing, error) {
	if err := cairn.ValidateListPath(p.Path); err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = cairn.DefaultFileListLimit
	}
	if limit < 1 || limit > cairn.MaxFileListLimit {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "limit must be between 1 and %d", cairn.MaxFileListLimit)
	}
	if len(p.After) > cairn.MaxPathBytes {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "after is %d bytes long; a name is at most %d", len(p.After), cairn.MaxPathBytes)
	}
	reply, err := s.browse(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpList, Path: path.Clean(p.Path), Limit: limit, After: p.After})
	if err != nil {
		return nil, err
	}
	out := &cairn.FileListing{Path: reply.Path, Entries: make([]cairn.FileEntry, len(reply.Entries)), NextAfter: reply.NextAfter}
	for i, e := range reply.Entries {
		out.Entries[i] = fileEntry(e)
	}
	return out, nil
}

// ReadFile reads at most cairn.MaxFileReadBytes of a regular file of the
// workspace volume; its type is sniffed from the bytes read.
func (s *Service) ReadFile(ctx context.Context, workspaceID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	if err := cairn.ValidateVolumePath(p.Path); err != nil {
		return nil, err
	}
	length := p.Length
	if length == 0 {
		length = cairn.MaxFileReadBytes
	}
	switch {
	case p.Offset < 0 || length < 0:
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "offset and length must not be negative")
	case length > cairn.MaxFileReadBytes:
		return nil, cairn.Errorf(cairn.ReasonRangeTooLarge,
			"one read returns at most %d bytes; save the file as an artifact to fetch it whole", cairn.MaxFileReadBytes)
	}
	reply, err := s.browse(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: path.Clean(p.Path), Offset: p.Offset, Length: length})
	if err != nil {
		return nil, err
	}
	if reply.File == nil {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the browse sidecar answered a read without the file it read")
	}
	return &cairn.FileContent{Path: reply.Path, Offset: p.Offset, Data: reply.Data, Size: reply.File.Size,
		MTime: reply.File.MTime, ContentType: sniff(reply.Data), ETag: reply.File.ETag}, nil
}

// browse runs one request under the workspace's shared lock, so that it
// never overlaps a volume setup or teardown, and turns the sidecar's
// refusal into the API's reason.
func (s *Service) browse(ctx context.Context, workspaceID string, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	var reply *sidecar.BrowseReply
	err := s.withTransferLock(ctx, workspaceID, func(ws *cairn.Workspace) error {
		var err error
		target := BrowseTarget{WorkspaceID: ws.ID, VolumeName: ws.VolumeName, Writable: sidecar.Writes(req.Op)}
		reply, err = s.runtime.Browse(ctx, target, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !reply.OK {
		return nil, browseRefusal(reply)
	}
	return reply, nil
}

// browseRefusal maps a browse sidecar's failure to the API's reason: the
// caller's mistakes keep their reason, anything else is the sidecar
// failing.
func browseRefusal(r *sidecar.BrowseReply) error {
	reason, detail := deref(r.Reason), deref(r.Error)
	switch reason {
	case sidecar.ReasonPathNotFound, sidecar.ReasonPathIsDirectory, sidecar.ReasonPathIsSymlink,
		sidecar.ReasonPathNotRegular, sidecar.ReasonPathUnreadable, sidecar.ReasonPathOutsideMount,
		sidecar.ReasonFileChanged, sidecar.ReasonDirNotEmpty, sidecar.ReasonTargetExists, sidecar.ReasonPathIsMountRoot,
		sidecar.ReasonTargetIsDirectory, sidecar.ReasonWriteFailed, sidecar.ReasonVolumeFull, sidecar.ReasonWriteTooLarge:
		return cairn.Errorf(cairn.Reason(reason), "%s", detail)
	}
	return cairn.Errorf(cairn.ReasonSidecarFailed, "the browse sidecar failed (%s): %s", reason, detail)
}

func fileEntry(e sidecar.Entry) cairn.FileEntry {
	return cairn.FileEntry{Name: e.Name, Type: e.Type, Size: e.Size, Mode: e.Mode, MTime: e.MTime.UTC(), LinkTarget: e.LinkTarget, ETag: e.ETag}
}

// sniff names the type of a file's bytes, as for an artifact's head.
func sniff(data []byte) string { return mimetype.Detect(data).String() }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// workDir checks an exec's working directory: a directory of the volume,
// the mount root for "". A symlink is not followed, so the command starts
// where the path says.
func (s *Service) workDir(ctx context.Context, workspaceID, dir string) (string, error) {
	if dir == "" {
		return cairn.MountPath, nil
	}
	if err := cairn.ValidateListPath(dir); err != nil {
		return "", err
	}
	st, err := s.StatFile(ctx, workspaceID, dir)
	if err != nil {
		return "", err
	}
	if st.Type != cairn.FileTypeDir {
		return "", cairn.Errorf(cairn.ReasonInvalidParameters, "the working directory '%s' is not a directory", st.Path)
	}
	dir = st.Path
	return dir, nil
}
