package rest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
)

// awkward are strings whose JSON encoding/json writes in every way it can:
// plain, escaped by name, as \u00XX, HTML-escaped, U+2028/U+2029, invalid
// or truncated UTF-8, and runes of every length.
var awkward = []string{
	"", "plain", `quote " backslash \ slash /`, "\b\f\n\r\t", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "line\u2028para\u2029end", "\xff\xfe", "cut \xe2\x80", "\xc3",
	"é ñ 日本語 🪨 \u00a0 \ufffd", "\xed\xa0\x80 surrogate",
}

// oldList is what the list routes answered before listAnswer: the payload
// writeSuccess encodes with encoding/json.
func oldList[T any](key string, rows []T) any {
	if key == "artifacts" {
		return struct {
			Artifacts []T `json:"artifacts,omitempty"`
		}{rows}
	}
	return struct {
		Workspaces []T `json:"workspaces,omitempty"`
	}{rows}
}

// requireSameAnswer writes rows through listAnswer and through writeSuccess
// and requires the same status, content type and bytes.
func requireSameAnswer[T any](t *testing.T, id string, l listAnswer[T]) {
	t.Helper()
	want := httptest.NewRecorder()
	envelope.WriteSuccess(want, id, oldList(l.key, l.rows))
	got := httptest.NewRecorder()
	status := l.respond(got, id)
	require.Equal(t, want.Code, got.Code)
	require.Equal(t, want.Code, status)
	require.Equal(t, want.Header().Get("Content-Type"), got.Header().Get("Content-Type"))
	require.Equal(t, want.Body.String(), got.Body.String())
}

func artifactsOf(strs []string, at time.Time) []*cairn.Artifact {
	var list []*cairn.Artifact
	for i, s := range strs {
		d := s
		list = append(list, &cairn.Artifact{ID: "01J" + s, WorkspaceID: s, Name: s, Description: &d,
			ObjectKey: "store/" + s, MIMEType: s, Size: int64(i) - 1, State: cairn.ArtifactState(s), SHA256B64: &d,
			CreatedAt: at, UpdatedAt: at.Add(time.Duration(i) * 1001 * time.Nanosecond)})
	}
	return list
}

func workspacesOf(strs []string, at time.Time) []*cairn.Workspace {
	var list []*cairn.Workspace
	for i, s := range strs {
		d, size, ttl := s, int64(i)<<40, int64(i+1)
		ws := &cairn.Workspace{ID: s, Name: s, Description: &d, VolumeName: s,
			VolumeState: cairn.VolumeState(s), VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: &size},
			VolumeIssue:    &cairn.VolumeIssue{Reason: cairn.Reason(s), Detail: s + " detail"},
			ArtifactCounts: cairn.ArtifactCounts{Recorded: int64(i), MissingObject: -int64(i)},
			CreatedAt:      at, UpdatedAt: at}
		if i%2 == 1 { // every other row with each lifecycle member set
			ws.TTLSecs, ws.ExpiresAt, ws.ArchiveIdleAfterSecs, ws.ArchivedSnapshotID = &ttl, &at, &size, &d
			ws.LastActiveAt = at
		}
		list = append(list, ws)
	}
	return list
}

func TestListJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	now := cairn.Now()
	ids := []string{"7b0c9f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", `<&>"\ id`, "x"}
	zones := []time.Time{now, {}, time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("", 5*3600+1800)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}

	t.Run("Artifacts", func(t *testing.T) {
		t.Parallel()
		for _, id := range ids {
			for _, at := range zones {
				requireSameAnswer(t, id, listAnswer[*cairn.Artifact]{key: "artifacts",
					rows: artifactsOf(awkward, at), appendRow: appendArtifact})
			}
		}
		sha := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
		nulls := []*cairn.Artifact{
			{ID: "a", WorkspaceID: "w", Name: "n", State: cairn.ArtifactRecorded, CreatedAt: now, UpdatedAt: now},
			{ID: "b", Description: new(""), SHA256B64: &sha, Size: 1<<63 - 1, State: cairn.ArtifactMissingObject},
			nil,
		}
		requireSameAnswer(t, ids[0], listAnswer[*cairn.Artifact]{key: "artifacts", rows: nulls, appendRow: appendArtifact})
	})
	t.Run("Workspaces", func(t *testing.T) {
		t.Parallel()
		for _, id := range ids {
			for _, at := range zones {
				requireSameAnswer(t, id, listAnswer[*cairn.Workspace]{key: "workspaces",
					rows: workspacesOf(awkward, at), appendRow: appendWorkspace})
			}
		}
		nulls := []*cairn.Workspace{
			{ID: "a", Name: "n", VolumeName: "v", VolumeState: cairn.VolumeNone, CreatedAt: now, UpdatedAt: now},
			{ID: "b", Description: new(""), VolumeMetadata: &cairn.VolumeMetadata{}, VolumeState: cairn.VolumeReady},
			nil,
		}
		requireSameAnswer(t, ids[0], listAnswer[*cairn.Workspace]{key: "workspaces", rows: nulls, appendRow: appendWorkspace})
	})
	t.Run("EmptyIsTheBareEnvelope", func(t *testing.T) {
		t.Parallel()
		requireSameAnswer(t, ids[0], listAnswer[*cairn.Artifact]{key: "artifacts", appendRow: appendArtifact})
		requireSameAnswer(t, ids[0], listAnswer[*cairn.Workspace]{key: "workspaces", rows: []*cairn.Workspace{},
			appendRow: appendWorkspace})
	})
	t.Run("TimeOutOfRangeIsTheSame500", func(t *testing.T) {
		t.Parallel()
		for _, at := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
			l := listAnswer[*cairn.Artifact]{key: "artifacts", rows: artifactsOf([]string{"a"}, at),
				appendRow: appendArtifact, etag: `W/"1-x"`}
			requireSameAnswer(t, ids[0], l)
			rec := httptest.NewRecorder()
			require.Equal(t, http.StatusInternalServerError, l.respond(rec, ids[0]))
			require.Empty(t, rec.Header().Get("ETag"), "a failed answer carries no tag")
		}
	})
}

// FuzzListJSON holds the appenders to encoding/json for any string and
// size; its seeds run with the tests.
func FuzzListJSON(f *testing.F) {
	for i, s := range awkward {
		f.Add(s, s+"x", int64(i), int64(i)*1_000_003)
	}
	f.Fuzz(func(t *testing.T, name, description string, size, nanos int64) {
		at := time.Unix(0, nanos).UTC()
		a := &cairn.Artifact{ID: name, WorkspaceID: description, Name: name, Description: &description,
			ObjectKey: description, MIMEType: name, Size: size, State: cairn.ArtifactState(description),
			SHA256B64: &name, CreatedAt: at, UpdatedAt: at}
		requireSameAnswer(t, "id", listAnswer[*cairn.Artifact]{key: "artifacts", rows: []*cairn.Artifact{a},
			appendRow: appendArtifact})
		ws := &cairn.Workspace{ID: name, Name: description, Description: &name, VolumeName: description,
			VolumeState: cairn.VolumeState(name), VolumeMetadata: &cairn.VolumeMetadata{SizeBytes: &size},
			ArtifactCounts: cairn.ArtifactCounts{Recorded: size, MissingObject: nanos}, CreatedAt: at, UpdatedAt: at}
		requireSameAnswer(t, "id", listAnswer[*cairn.Workspace]{key: "workspaces", rows: []*cairn.Workspace{ws},
			appendRow: appendWorkspace})
	})
}

// BenchmarkListJSON prints the cost of a 1 000-artifact answer written by
// encoding/json (through writeSuccess, as before) and by the appenders.
func BenchmarkListJSON(b *testing.B) {
	now := cairn.Now()
	rows := make([]*cairn.Artifact, 1000)
	for i := range rows {
		sha := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
		rows[i] = &cairn.Artifact{ID: "01JAAAAAAAAAAAAAAAAAAAAAAA", WorkspaceID: "7b0c9f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
			Name: "art-123", ObjectKey: "store/7b0c9f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b/01JAAAAAAAAAAAAAAAAAAAAAAA",
			MIMEType: "text/plain; charset=utf-8", Size: int64(i), State: cairn.ArtifactRecorded, SHA256B64: &sha,
			CreatedAt: now, UpdatedAt: now}
	}
	b.Run("EncodingJSON", func(b *testing.B) {
		for b.Loop() {
			envelope.WriteSuccess(discard{}, "id", oldList("artifacts", rows))
		}
	})
	b.Run("Appenders", func(b *testing.B) {
		l := listAnswer[*cairn.Artifact]{key: "artifacts", rows: rows, appendRow: appendArtifact}
		for b.Loop() {
			l.respond(discard{}, "id")
		}
	})
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
