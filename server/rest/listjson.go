package rest

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn"
)

// The list routes write their rows with these appenders instead of
// encoding/json: on a page of 1 000 artifacts reflection was most of the
// server's time. Their output is byte for byte what encoding/json writes
// for cairn.Workspace and cairn.Artifact (listjson_test.go holds them to
// it): the same keys in the same order, the same omissions, and strings
// escaped the same way, HTML characters and U+2028/U+2029 included.

// appendArtifact appends a as encoding/json writes a *cairn.Artifact.
func appendArtifact(b []byte, a *cairn.Artifact) ([]byte, error) {
	if a == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"id":`...)
	b = appendString(b, a.ID)
	b = append(b, `,"workspace_id":`...)
	b = appendString(b, a.WorkspaceID)
	b = append(b, `,"name":`...)
	b = appendString(b, a.Name)
	b = append(b, `,"description":`...)
	b = appendNullString(b, a.Description)
	b = append(b, `,"object_key":`...)
	b = appendString(b, a.ObjectKey)
	b = append(b, `,"mime_type":`...)
	b = appendString(b, a.MIMEType)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, a.Size, 10)
	b = append(b, `,"state":`...)
	b = appendString(b, string(a.State))
	b = append(b, `,"sha256_b64":`...)
	b = appendNullString(b, a.SHA256B64)
	return appendTimes(b, a.CreatedAt, a.UpdatedAt)
}

// appendWorkspace appends ws as encoding/json writes a *cairn.Workspace.
func appendWorkspace(b []byte, ws *cairn.Workspace) ([]byte, error) {
	if ws == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"id":`...)
	b = appendString(b, ws.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, ws.Name)
	if ws.Description != nil {
		b = append(b, `,"description":`...)
		b = appendString(b, *ws.Description)
	}
	b = append(b, `,"volume_name":`...)
	b = appendString(b, ws.VolumeName)
	b = append(b, `,"volume_state":`...)
	b = appendString(b, string(ws.VolumeState))
	if m := ws.VolumeMetadata; m != nil {
		b = append(b, `,"volume_metadata":{`...)
		if m.SizeBytes != nil {
			b = append(b, `"size_bytes":`...)
			b = strconv.AppendInt(b, *m.SizeBytes, 10)
		}
		b = append(b, '}')
	}
	if issue := ws.VolumeIssue; issue != nil {
		b = append(b, `,"volume_issue":{"reason":`...)
		b = appendString(b, string(issue.Reason))
		b = append(b, `,"detail":`...)
		b = appendString(b, issue.Detail)
		b = append(b, '}')
	}
	b = append(b, `,"artifact_counts":{"recorded":`...)
	b = strconv.AppendInt(b, ws.ArtifactCounts.Recorded, 10)
	b = append(b, `,"missing_object":`...)
	b = strconv.AppendInt(b, ws.ArtifactCounts.MissingObject, 10)
	b = append(b, '}')
	b, err := appendTimes(b, ws.CreatedAt, ws.UpdatedAt)
	if err != nil {
		return nil, err
	}
	return appendLifecycle(b[:len(b)-1], ws)
}

// appendLifecycle appends the lifecycle members that are set, in the
// struct's order, and closes the object.
func appendLifecycle(b []byte, ws *cairn.Workspace) ([]byte, error) {
	var err error
	if ws.TTLSecs != nil {
		b = append(b, `,"ttl_secs":`...)
		b = strconv.AppendInt(b, *ws.TTLSecs, 10)
	}
	if ws.ExpiresAt != nil {
		if b, err = appendTime(append(b, `,"expires_at":`...), *ws.ExpiresAt); err != nil {
			return nil, err
		}
	}
	if ws.ArchiveIdleAfterSecs != nil {
		b = append(b, `,"archive_idle_after_secs":`...)
		b = strconv.AppendInt(b, *ws.ArchiveIdleAfterSecs, 10)
	}
	if ws.ArchivedSnapshotID != nil {
		b = appendString(append(b, `,"archived_snapshot_id":`...), *ws.ArchivedSnapshotID)
	}
	if !ws.LastActiveAt.IsZero() {
		if b, err = appendTime(append(b, `,"last_active_at":`...), ws.LastActiveAt); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendTime appends t as a JSON string, as encoding/json writes it.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// appendTimes appends the created_at and updated_at members and closes the
// object. A time encoding/json refuses (a year outside 0–9999) is an error
// here too.
func appendTimes(b []byte, created, updated time.Time) ([]byte, error) {
	b = append(b, `,"created_at":"`...)
	b, err := created.AppendText(b)
	if err != nil {
		return nil, err
	}
	b = append(b, `","updated_at":"`...)
	if b, err = updated.AppendText(b); err != nil {
		return nil, err
	}
	return append(b, `"}`...), nil
}

func appendNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

const hexDigits = "0123456789abcdef"

// The ASCII bytes a JSON string carries as they are, as bit sets over
// 0–63 and 64–127: not the controls, '"', '\\', nor the HTML characters
// '<', '>' and '&'.
const (
	safeLow  uint64 = 0xffffffff00000000 &^ (1<<'"' | 1<<'&' | 1<<'<' | 1<<'>')
	safeHigh uint64 = ^uint64(0) &^ (1 << ('\\' - 64))
)

// safeASCII reports whether c < utf8.RuneSelf is one of them.
func safeASCII(c byte) bool {
	set := safeLow
	if c >= 64 {
		set = safeHigh
	}
	return set>>(c&63)&1 != 0
}

// appendString appends s as a JSON string the way encoding/json does by
// default: control characters, '"' and '\' escaped (\b, \f, \n, \r, \t
// by name), '<', '>' and '&' as \u00XX, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 as \u2028 and \u2029.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
