package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// browsing makes the runtime's browse container answer with answer and
// records the requests it was sent.
func (f *fixture) browsing(answer func(sidecar.BrowseRequest) *sidecar.BrowseReply) *[]sidecar.BrowseRequest {
	var seen []sidecar.BrowseRequest
	f.runtime.BrowseFunc = func(_ context.Context, target service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
		if !f.held {
			return nil, fmt.Errorf("browse ran without the workspace lock")
		}
		seen = append(seen, req)
		return answer(req), nil
	}
	return &seen
}

func refusal(reason, message string) *sidecar.BrowseReply {
	return &sidecar.BrowseReply{Reason: &reason, Error: &message}
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	mtime := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	target := "notes.txt"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		seen := f.browsing(func(req sidecar.BrowseRequest) *sidecar.BrowseReply {
			return &sidecar.BrowseReply{OK: true, Path: req.Path, NextAfter: "b", Entries: []sidecar.Entry{
				{Name: "a", Type: sidecar.TypeDir, Size: 4096, Mode: "0755", MTime: mtime},
				{Name: "b", Type: sidecar.TypeSymlink, Size: 9, Mode: "0777", MTime: mtime, LinkTarget: &target},
			}}
		})
		got, err := svc.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: "/mnt/cairn/ws/out/", After: "0"})
		require.NoError(t, err)
		require.Equal(t, []sidecar.BrowseRequest{{Op: sidecar.OpList, Path: "/mnt/cairn/ws/out", Limit: 200, After: "0"}}, *seen,
			"the path is cleaned and the default limit applied")
		require.Equal(t, "/mnt/cairn/ws/out", got.Path)
		require.Equal(t, "b", got.NextAfter)
		require.Equal(t, []cairn.FileEntry{
			{Name: "a", Type: "dir", Size: 4096, Mode: "0755", MTime: mtime.UTC()},
			{Name: "b", Type: "symlink", Size: 9, Mode: "0777", MTime: mtime.UTC(), LinkTarget: &target},
		}, got.Entries)
		require.Equal(t, []service.LockMode{service.LockShared}, f.locks)
		require.False(t, f.held, "the lock is released")
	})

	t.Run("OKMountRoot", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		seen := f.browsing(func(req sidecar.BrowseRequest) *sidecar.BrowseReply {
			return &sidecar.BrowseReply{OK: true, Path: req.Path}
		})
		got, err := svc.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: cairn.MountPath, Limit: 1000})
		require.NoError(t, err)
		require.Equal(t, cairn.MountPath, (*seen)[0].Path)
		require.Equal(t, 1000, (*seen)[0].Limit)
		require.NotNil(t, got.Entries, "an empty directory lists as [], not null")
	})

	for name, tc := range map[string]struct {
		p      cairn.FileListParams
		reason cairn.Reason
	}{
		"ErrOutside":       {cairn.FileListParams{Path: "/etc"}, cairn.ReasonPathOutsideMount},
		"ErrDotDot":        {cairn.FileListParams{Path: "/mnt/cairn/ws/../../etc"}, cairn.ReasonPathOutsideMount},
		"ErrRelative":      {cairn.FileListParams{Path: "out"}, cairn.ReasonPathOutsideMount},
		"ErrControl":       {cairn.FileListParams{Path: "/mnt/cairn/ws/a\x1b[2J"}, cairn.ReasonInvalidPath},
		"ErrLong":          {cairn.FileListParams{Path: "/mnt/cairn/ws/" + strings.Repeat("a", 4096)}, cairn.ReasonInvalidPath},
		"ErrLimitLow":      {cairn.FileListParams{Path: cairn.MountPath, Limit: -1}, cairn.ReasonInvalidParameters},
		"ErrLimitHigh":     {cairn.FileListParams{Path: cairn.MountPath, Limit: 1001}, cairn.ReasonInvalidParameters},
		"ErrAfterTooLong":  {cairn.FileListParams{Path: cairn.MountPath, After: strings.Repeat("a", 4097)}, cairn.ReasonInvalidParameters},
		"ErrMountRootSide": {cairn.FileListParams{Path: "/mnt/cairn/wsx"}, cairn.ReasonPathOutsideMount},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, f := setup(t)
			ws := f.storedWorkspace(cairn.VolumeReady)
			f.lock()
			seen := f.browsing(func(sidecar.BrowseRequest) *sidecar.BrowseReply { return &sidecar.BrowseReply{OK: true} })
			_, err := svc.ListFiles(t.Context(), ws.ID, tc.p)
			require.Equal(t, tc.reason, cairn.ErrorReason(err), "%v", err)
			require.Empty(t, *seen, "refused before any container is asked")
		})
	}

	t.Run("ErrVolumeNotReady", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.lock()
		seen := f.browsing(func(sidecar.BrowseRequest) *sidecar.BrowseReply { return &sidecar.BrowseReply{OK: true} })
		_, err := svc.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: cairn.MountPath})
		require.Equal(t, cairn.ReasonVolumeNotReady, cairn.ErrorReason(err))
		require.Empty(t, *seen)
	})

	for name, tc := range map[string]struct {
		reason string
		want   cairn.Reason
	}{
		"ErrNotFound":  {sidecar.ReasonPathNotFound, cairn.ReasonPathNotFound},
		"ErrSymlink":   {sidecar.ReasonPathIsSymlink, cairn.ReasonPathIsSymlink},
		"ErrEscape":    {sidecar.ReasonPathOutsideMount, cairn.ReasonPathOutsideMount},
		"ErrOddReason": {"env_invalid", cairn.ReasonSidecarFailed},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, f := setup(t)
			ws := f.storedWorkspace(cairn.VolumeReady)
			f.lock()
			f.browsing(func(sidecar.BrowseRequest) *sidecar.BrowseReply { return refusal(tc.reason, "said the sidecar") })
			_, err := svc.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: "/mnt/cairn/ws/x"})
			require.Equal(t, tc.want, cairn.ErrorReason(err))
			require.Contains(t, cairn.ErrorDetail(err), "said the sidecar")
		})
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		mtime := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
		seen := f.browsing(func(req sidecar.BrowseRequest) *sidecar.BrowseReply {
			return &sidecar.BrowseReply{OK: true, Path: req.Path, Length: 6, Data: []byte("hello\n"),
				File: &sidecar.Entry{Name: "a.txt", Type: sidecar.TypeFile, Size: 600, Mode: "0644", MTime: mtime}}
		})
		got, err := svc.ReadFile(t.Context(), ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/a.txt", Offset: 10})
		require.NoError(t, err)
		require.Equal(t, []sidecar.BrowseRequest{{Op: sidecar.OpRead, Path: "/mnt/cairn/ws/a.txt", Offset: 10, Length: cairn.MaxFileReadBytes}}, *seen)
		require.Equal(t, &cairn.FileContent{Path: "/mnt/cairn/ws/a.txt", Offset: 10, Data: []byte("hello\n"), Size: 600,
			MTime: mtime, ContentType: "text/plain; charset=utf-8"}, got)
	})

	for name, tc := range map[string]struct {
		p      cairn.FileReadParams
		reason cairn.Reason
	}{
		"ErrTooLong":   {cairn.FileReadParams{Path: "/mnt/cairn/ws/a", Length: cairn.MaxFileReadBytes + 1}, cairn.ReasonRangeTooLarge},
		"ErrNegOffset": {cairn.FileReadParams{Path: "/mnt/cairn/ws/a", Offset: -1}, cairn.ReasonInvalidParameters},
		"ErrNegLength": {cairn.FileReadParams{Path: "/mnt/cairn/ws/a", Length: -5}, cairn.ReasonInvalidParameters},
		"ErrMountRoot": {cairn.FileReadParams{Path: cairn.MountPath}, cairn.ReasonPathIsMountRoot},
		"ErrOutside":   {cairn.FileReadParams{Path: "/proc/self/environ"}, cairn.ReasonPathOutsideMount},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, f := setup(t)
			ws := f.storedWorkspace(cairn.VolumeReady)
			f.lock()
			seen := f.browsing(func(sidecar.BrowseRequest) *sidecar.BrowseReply { return &sidecar.BrowseReply{OK: true} })
			_, err := svc.ReadFile(t.Context(), ws.ID, tc.p)
			require.Equal(t, tc.reason, cairn.ErrorReason(err))
			require.Empty(t, *seen)
		})
	}

	t.Run("ErrNoFileInReply", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		f.browsing(func(sidecar.BrowseRequest) *sidecar.BrowseReply { return &sidecar.BrowseReply{OK: true} })
		_, err := svc.ReadFile(t.Context(), ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/a"})
		require.Equal(t, cairn.ReasonSidecarFailed, cairn.ErrorReason(err))
	})
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// packRun drives the fake runtime like a pack sidecar: it asks for each
// need in turn through the spec's dialog, then prints result.
func (f *fixture) packRun(needs []sidecar.Need, result sidecar.Result) (*[]service.SidecarSpec, *[]error) {
	var specs []service.SidecarSpec
	var dialogErrs []error
	f.runtime.RunSidecarFunc = func(ctx context.Context, spec service.SidecarSpec) (*service.SidecarRun, error) {
		specs = append(specs, spec)
		for _, n := range needs {
			g, err := spec.Dialog(ctx, n)
			if err != nil {
				dialogErrs = append(dialogErrs, err)
				return nil, err
			}
			if g.URL == "" {
				return nil, fmt.Errorf("a grant without a URL")
			}
		}
		line, _ := json.Marshal(result)
		return &service.SidecarRun{Output: append([]byte("\n"), line...)}, nil
	}
	return &specs, &dialogErrs
}

func TestPack(t *testing.T) {
	t.Parallel()
	size := int64(20 << 20)
	sum := digest([]byte("archive"))
	ok := sidecar.Result{OK: true, Size: &size, SHA256B64: sum, MD5: "d41d8cd98f00b204e9800998ecf8427e", Parts: 2, Entries: 3}

	t.Run("OKParts", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		ws.VolumeState = cairn.VolumeReady
		f.row(ws)
		f.lock()
		fl := f.flow()
		needs := []sidecar.Need{
			{Need: sidecar.NeedPart, Number: 1, Size: 16 << 20, SHA256B64: digest([]byte("1"))},
			{Need: sidecar.NeedPart, Number: 2, Size: 4 << 20, SHA256B64: digest([]byte("2"))},
		}
		specs, _ := f.packRun(needs, ok)
		var creates, presigned int
		var completed []service.Part
		f.objects.CreateUploadFunc = func(context.Context, string) (string, error) { creates++; return "up-1", nil }
		f.objects.PresignPartFunc = func(_ context.Context, _, id string, p service.PartSpec) (string, error) {
			presigned++
			require.Equal(t, "up-1", id)
			require.Equal(t, needs[p.Number-1].Size, p.Size, "each part URL is bound to its size")
			require.Equal(t, needs[p.Number-1].SHA256B64, p.SHA256B64, "and to its digest")
			return fmt.Sprintf("http://store/part-%d?sig=secret", p.Number), nil
		}
		f.objects.ListPartsFunc = func(context.Context, string, string) ([]service.Part, error) {
			return []service.Part{{Number: 1, Size: 16 << 20, SHA256B64: needs[0].SHA256B64, ETag: "e1"},
				{Number: 2, Size: 4 << 20, SHA256B64: needs[1].SHA256B64, ETag: "e2"}}, nil
		}
		f.objects.CompleteUploadFunc = func(_ context.Context, _, _ string, parts []service.Part) error {
			completed = parts
			return nil
		}
		a, err := svc.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src", Name: "src", Format: "tar.gz"})
		require.NoError(t, err)
		require.Equal(t, 1, creates)
		require.Equal(t, 2, presigned)
		require.Len(t, completed, 2)
		require.Equal(t, cairn.MIMEGzip, a.MIMEType)
		require.Equal(t, size, a.Size)
		require.Equal(t, sum, *a.SHA256B64)
		require.Len(t, fl.inserted, 1)
		spec := (*specs)[0]
		require.Equal(t, sidecar.CommandPack, spec.Command)
		require.True(t, spec.Transfer)
		require.Equal(t, "tar.gz", spec.Env[sidecar.EnvFormat])
		require.Equal(t, "/mnt/cairn/ws/src", spec.Env[sidecar.EnvSourcePath])
		require.Equal(t, "16777216", spec.Env[sidecar.EnvPartSize])
	})

	t.Run("OKObject", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		ws.VolumeState = cairn.VolumeReady
		f.row(ws)
		f.lock()
		f.flow()
		small := int64(300)
		res := ok
		res.Size, res.Parts = &small, 0
		f.packRun([]sidecar.Need{{Need: sidecar.NeedObject, Size: small, SHA256B64: sum}}, res)
		f.objects.PresignPutFunc = func(_ context.Context, _ string, put service.PutSpec) (string, error) {
			require.Equal(t, small, put.Size, "the one PUT is bound to the archive's size")
			require.Equal(t, sum, put.SHA256B64, "and digest")
			return "http://store/obj?sig=secret", nil
		}
		f.objects.StatFunc = func(_ context.Context, key string) (*service.ObjectInfo, error) {
			return &service.ObjectInfo{Key: key, Size: small, ETag: res.MD5}, nil
		}
		a, err := svc.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath, Name: "all", Format: "zip"})
		require.NoError(t, err)
		require.Equal(t, cairn.MIMEZip, a.MIMEType)
	})

	for name, needs := range map[string][]sidecar.Need{
		"ErrPartOutOfOrder": {{Need: sidecar.NeedPart, Number: 2, Size: 1, SHA256B64: sum}},
		"ErrPartTooBig":     {{Need: sidecar.NeedPart, Number: 1, Size: 17 << 20, SHA256B64: sum}},
		"ErrObjectAfterPart": {{Need: sidecar.NeedPart, Number: 1, Size: 16 << 20, SHA256B64: sum},
			{Need: sidecar.NeedObject, Size: 1, SHA256B64: sum}},
		"ErrBadDigest": {{Need: sidecar.NeedObject, Size: 1, SHA256B64: "nope"}},
		"ErrPastCap": {{Need: sidecar.NeedPart, Number: 1, Size: 16 << 20, SHA256B64: sum},
			{Need: sidecar.NeedPart, Number: 2, Size: 16 << 20, SHA256B64: sum}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, f := setup(t)
			svc := f.serviceWith(service.Config{MaxObjectSize: 20 << 20})
			ws := f.namesFreeWorkspace()
			ws.VolumeState = cairn.VolumeReady
			f.row(ws)
			f.lock()
			fl := f.flow()
			_, errs := f.packRun(needs, ok)
			var aborted []string
			f.objects.CreateUploadFunc = func(context.Context, string) (string, error) { return "up-1", nil }
			f.objects.PresignPartFunc = func(context.Context, string, string, service.PartSpec) (string, error) { return "http://p", nil }
			f.objects.PresignPutFunc = func(context.Context, string, service.PutSpec) (string, error) { return "http://o", nil }
			f.objects.AbortUploadFunc = func(_ context.Context, _, id string) error { aborted = append(aborted, id); return nil }
			_, err := svc.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src", Name: "src", Format: "tar.gz"})
			require.Error(t, err)
			require.Len(t, *errs, 1, "the dialog refused a need")
			require.Empty(t, fl.inserted, "no row")
			if name == "ErrPastCap" {
				require.Equal(t, cairn.ReasonObjectTooLarge, cairn.ErrorReason(err))
			} else {
				require.Equal(t, cairn.ReasonSidecarFailed, cairn.ErrorReason(err))
			}
			if name == "ErrPastCap" || name == "ErrObjectAfterPart" {
				require.Equal(t, []string{"up-1"}, aborted, "the upload begun is aborted")
			}
		})
	}

	t.Run("ErrPartsNotHeld", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		ws.VolumeState = cairn.VolumeReady
		f.row(ws)
		f.lock()
		fl := f.flow()
		one := []sidecar.Need{{Need: sidecar.NeedPart, Number: 1, Size: 16 << 20, SHA256B64: sum}}
		res := ok
		res.Size = &one[0].Size
		f.packRun(one, res)
		var aborted bool
		f.objects.CreateUploadFunc = func(context.Context, string) (string, error) { return "up-1", nil }
		f.objects.PresignPartFunc = func(context.Context, string, string, service.PartSpec) (string, error) { return "http://p", nil }
		f.objects.ListPartsFunc = func(context.Context, string, string) ([]service.Part, error) {
			return []service.Part{{Number: 1, Size: 16 << 20, SHA256B64: digest([]byte("other bytes"))}}, nil
		}
		f.objects.AbortUploadFunc = func(context.Context, string, string) error { aborted = true; return nil }
		_, err := svc.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src", Name: "src", Format: "tar.gz"})
		require.Equal(t, cairn.ReasonSidecarFailed, cairn.ErrorReason(err))
		require.True(t, aborted)
		require.Empty(t, fl.inserted)
	})

	t.Run("ErrFormat", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.namesFreeWorkspace()
		_, err := svc.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: "/mnt/cairn/ws/src", Name: "src", Format: "rar"})
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
	})
}

func TestUnpackArtifact(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		_, f := setup(t)
		svc := f.serviceWith(service.Config{Unpack: service.UnpackLimits{MaxEntries: 7}})
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		a := f.newArtifact(ws.ID)
		a.MIMEType = cairn.MIMEGzip
		sum := digest([]byte("x"))
		a.SHA256B64 = &sum
		f.artifactRow(a)
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) {
			return "http://store/get?sig=secret", nil
		}
		written := int64(1234)
		var spec service.SidecarSpec
		f.runtime.RunSidecarFunc = func(_ context.Context, s service.SidecarSpec) (*service.SidecarRun, error) {
			spec = s
			line, _ := json.Marshal(sidecar.Result{OK: true, UnpackedPath: "/mnt/cairn/ws/src", Entries: 3, Size: &written})
			return &service.SidecarRun{Output: line}, nil
		}
		got, err := svc.UnpackArtifact(t.Context(), a.ID, "/mnt/cairn/ws/src")
		require.NoError(t, err)
		require.Equal(t, &cairn.UnpackResult{TargetDir: "/mnt/cairn/ws/src", Entries: 3, Bytes: 1234}, got)
		require.Equal(t, sidecar.CommandUnpack, spec.Command)
		require.Equal(t, map[string]string{
			sidecar.EnvMountRoot: cairn.MountPath, sidecar.EnvTargetPath: "/mnt/cairn/ws/src",
			sidecar.EnvURL: "http://store/get?sig=secret", sidecar.EnvFormat: "tar.gz", sidecar.EnvMaxSize: "42",
			sidecar.EnvArchiveSHA256: sum, sidecar.EnvMaxEntries: "7", sidecar.EnvMaxBytes: "10737418240", sidecar.EnvMaxRatio: "200",
		}, spec.Env)
	})

	t.Run("ErrNotAnArchive", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		a := f.newArtifact(ws.ID)
		f.artifactRow(a)
		_, err := svc.UnpackArtifact(t.Context(), a.ID, "/mnt/cairn/ws/src")
		require.Equal(t, cairn.ReasonArchiveInvalid, cairn.ErrorReason(err))
		require.Contains(t, cairn.ErrorDetail(err), "text/plain")
	})

	t.Run("ErrRefusalKeepsReasonNoURL", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		a := f.newArtifact(ws.ID)
		a.MIMEType = cairn.MIMEZip
		f.artifactRow(a)
		url := "http://store/get?sig=secret"
		f.objects.PresignGetFunc = func(context.Context, string, time.Duration, string) (string, error) { return url, nil }
		f.runtime.RunSidecarFunc = func(context.Context, service.SidecarSpec) (*service.SidecarRun, error) {
			line, _ := json.Marshal(sidecar.Failure(sidecar.ReasonArchiveUnsafePath, "entry '../x' of "+url+" leaves the target"))
			return &service.SidecarRun{ExitCode: 1, Output: line}, nil
		}
		_, err := svc.UnpackArtifact(t.Context(), a.ID, "/mnt/cairn/ws/src")
		require.Equal(t, cairn.ReasonArchiveUnsafePath, cairn.ErrorReason(err))
		require.NotContains(t, cairn.ErrorDetail(err), "secret", "the URL never reaches the caller")
	})

	t.Run("ErrTargetMissing", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		a := f.newArtifact(ws.ID)
		f.artifactRow(a)
		_, err := svc.UnpackArtifact(t.Context(), a.ID, "")
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
	})
}
