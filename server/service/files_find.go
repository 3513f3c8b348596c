package service

import (
	"context"
	"path"
	"regexp"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

var _ cairn.FileFinder = (*Service)(nil)

// SearchFiles searches names by glob and lines by expression, within the
// browse sidecar's bounds of entries, bytes and time.
func (s *Service) SearchFiles(ctx context.Context, workspaceID string, p cairn.FileSearchParams) (*cairn.FileSearch, error) {
	if err := validateSearch(p); err != nil {
		return nil, err
	}
	reply, err := s.browse(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpSearch, Path: path.Clean(p.Path),
		Glob: p.Glob, Content: p.Content, Limit: p.Limit})
	if err != nil {
		return nil, err
	}
	out := &cairn.FileSearch{Path: reply.Path, Matches: make([]cairn.FileMatch, len(reply.Matches)),
		Stopped: reply.Stopped, Scanned: reply.Scanned}
	for i, m := range reply.Matches {
		out.Matches[i] = cairn.FileMatch(m)
	}
	return out, nil
}

func validateSearch(p cairn.FileSearchParams) error {
	if err := cairn.ValidateListPath(p.Path); err != nil {
		return err
	}
	switch {
	case p.Glob == "" && p.Content == "":
		return cairn.Errorf(cairn.ReasonInvalidParameters, "a search needs a glob, a content expression, or both")
	case len(p.Glob) > cairn.MaxPatternBytes || len(p.Content) > cairn.MaxPatternBytes:
		return cairn.Errorf(cairn.ReasonInvalidParameters, "a glob or expression is at most %d bytes", cairn.MaxPatternBytes)
	case p.Limit < 0 || p.Limit > cairn.MaxSearchLimit:
		return cairn.Errorf(cairn.ReasonInvalidParameters, "limit must be between 1 and %d", cairn.MaxSearchLimit)
	}
	if _, err := path.Match(p.Glob, ""); err != nil {
		return cairn.Errorf(cairn.ReasonInvalidParameters, "the glob is malformed: %v", err)
	}
	if _, err := regexp.Compile(p.Content); err != nil {
		return cairn.Errorf(cairn.ReasonInvalidParameters, "the content expression is not RE2 syntax: %v", err)
	}
	return nil
}

// FileTree lists a directory recursively, within the browse sidecar's
// bounds.
func (s *Service) FileTree(ctx context.Context, workspaceID string, p cairn.FileTreeParams) (*cairn.FileTree, error) {
	if err := cairn.ValidateListPath(p.Path); err != nil {
		return nil, err
	}
	switch {
	case p.Depth < 0 || p.Depth > cairn.MaxTreeDepth:
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "depth must be between 1 and %d", cairn.MaxTreeDepth)
	case p.Limit < 0 || p.Limit > cairn.MaxTreeLimit:
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "limit must be between 1 and %d", cairn.MaxTreeLimit)
	}
	reply, err := s.browse(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpTree, Path: path.Clean(p.Path),
		Depth: p.Depth, Limit: p.Limit})
	if err != nil {
		return nil, err
	}
	out := &cairn.FileTree{Path: reply.Path, Entries: make([]cairn.FileTreeEntry, len(reply.Tree)),
		Stopped: reply.Stopped, Scanned: reply.Scanned}
	for i, e := range reply.Tree {
		out.Entries[i] = cairn.FileTreeEntry{Path: e.Path, FileEntry: fileEntry(e.Entry)}
	}
	return out, nil
}

// StatFile describes the path itself, never following it.
func (s *Service) StatFile(ctx context.Context, workspaceID, p string) (*cairn.FileTreeEntry, error) {
	if err := cairn.ValidateListPath(p); err != nil {
		return nil, err
	}
	reply, err := s.browse(ctx, workspaceID, sidecar.BrowseRequest{Op: sidecar.OpStat, Path: path.Clean(p)})
	if err != nil {
		return nil, err
	}
	if reply.File == nil {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the browse sidecar answered a stat without the entry")
	}
	e := fileEntry(*reply.File)
	e.Name = path.Base(reply.Path) // the mount root's own name, not "."
	return &cairn.FileTreeEntry{Path: reply.Path, FileEntry: e}, nil
}
