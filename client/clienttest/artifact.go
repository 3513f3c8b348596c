package clienttest

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
)

// slot is a minted staging upload: the store accepts exactly size bytes
// whose SHA-256 is sum.
type slot struct {
	wsID     string
	size     int64
	sum      string
	data     []byte
	uploaded bool
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(h[:])
}

// AddArtifact stores a RECORDED artifact with content and emits it.
func (s *Server) AddArtifact(wsID, name string, content []byte) *cairn.Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyArt(s.addArtifact(wsID, name, nil, content))
}

func (s *Server) addArtifact(wsID, name string, desc *string, content []byte) *cairn.Artifact {
	n, at := s.nextID()
	a := &cairn.Artifact{ID: ulid(n), WorkspaceID: wsID, Name: name, Description: desc, State: cairn.ArtifactRecorded,
		CreatedAt: at, UpdatedAt: at}
	s.arts[a.ID] = a
	s.setContent(a, content)
	s.emitArt(a)
	s.recount(wsID)
	return a
}

// setContent writes content under a fresh object key of a.
func (s *Server) setContent(a *cairn.Artifact, content []byte) {
	n, _ := s.nextID()
	a.ObjectKey = "store/" + a.WorkspaceID + "/" + ulid(n)
	s.objects[a.ObjectKey] = append([]byte(nil), content...)
	sum := digest(content)
	a.Size, a.SHA256B64, a.MIMEType = int64(len(content)), &sum, http.DetectContentType(content[:min(len(content), 512)])
}

// recount refreshes a workspace's artifact counts; a change is a
// workspace.upserted, as the server's triggers make it.
func (s *Server) recount(wsID string) {
	w, ok := s.ws[wsID]
	if !ok {
		return
	}
	var c cairn.ArtifactCounts
	for _, a := range s.arts {
		switch {
		case a.WorkspaceID != wsID:
		case a.State == cairn.ArtifactRecorded:
			c.Recorded++
		default:
			c.MissingObject++
		}
	}
	if c != w.ArtifactCounts {
		w.ArtifactCounts = c
		s.emitWS(w)
	}
}

// Artifact is the stored artifact.
func (s *Server) Artifact(id string) (*cairn.Artifact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[id]
	if !ok {
		return nil, false
	}
	return copyArt(a), true
}

// Object is the content the store holds for an artifact.
func (s *Server) Object(artifactID string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[artifactID]
	if !ok {
		return nil, false
	}
	b, ok := s.objects[a.ObjectKey]
	return append([]byte(nil), b...), ok
}

// CorruptObject replaces the bytes in the store behind the artifact's
// back: its row keeps the recorded size and digest.
func (s *Server) CorruptObject(artifactID string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.arts[artifactID]; ok {
		s.objects[a.ObjectKey] = append([]byte(nil), content...)
	}
}

// MarkMissing deletes the artifact's object and flags it MISSING_OBJECT,
// as the maintainer does, emitting both changes.
func (s *Server) MarkMissing(artifactID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arts[artifactID]
	if !ok {
		return
	}
	delete(s.objects, a.ObjectKey)
	a.State = cairn.ArtifactMissingObject
	_, a.UpdatedAt = s.nextID()
	s.emitArt(a)
	s.recount(a.WorkspaceID)
}

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) (*cairn.Artifact, bool) {
	a, ok := s.arts[r.PathValue("id")]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact '%s' does not exist", r.PathValue("id")))
	}
	return a, ok
}

func (s *Server) artifactNamed(wsID, name string) bool {
	for _, a := range s.arts {
		if a.WorkspaceID == wsID && a.Name == name {
			return true
		}
	}
	return false
}

func (s *Server) mintStaging(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Size      int64  `json:"size"`
		SHA256B64 string `json:"sha256_b64"`
	}
	if !decode(w, r, &body) {
		return
	}
	if raw, err := base64.StdEncoding.DecodeString(body.SHA256B64); err != nil || len(raw) != sha256.Size {
		fail(w, cairn.Errorf(cairn.ReasonInvalidChecksum, "sha256_b64 must be the base64 of the raw 32-byte SHA-256 digest"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	n, at := s.nextID()
	key := "staging/" + x.ID + "/" + ulid(n)
	s.staging[key] = &slot{wsID: x.ID, size: body.Size, sum: body.SHA256B64}
	sig := signature()
	s.sigs[key] = sig
	reply(w, map[string]any{"staging": map[string]any{
		"staging_object_key": key, "put_url": s.storeBase() + "/store/" + key + "?X-Amz-Signature=" + sig,
		"expires_at": at.Add(360 * time.Second),
	}})
}

// takeStaging checks a staging key for the workspace and consumes its
// uploaded slot; on failure it has answered.
func (s *Server) takeStaging(w http.ResponseWriter, wsID, key string) (*slot, bool) {
	if !strings.HasPrefix(key, "staging/"+wsID+"/") {
		fail(w, cairn.Errorf(cairn.ReasonStagingKeyInvalid, "staging object key '%s' was not issued for workspace %s", key, wsID))
		return nil, false
	}
	sl, ok := s.staging[key]
	if !ok || !sl.uploaded {
		fail(w, cairn.Errorf(cairn.ReasonStagingNotFound, "staging object '%s' not found; upload it first", key))
		return nil, false
	}
	delete(s.staging, key)
	delete(s.sigs, key)
	return sl, true
}

func (s *Server) registerArtifact(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key         string  `json:"staging_object_key"`
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	if err := cairn.ValidateName("artifact", body.Name); err != nil {
		fail(w, err.(*cairn.Error))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if s.artifactNamed(x.ID, body.Name) {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named '%s'", x.ID, body.Name))
		return
	}
	sl, ok := s.takeStaging(w, x.ID, body.Key)
	if !ok {
		return
	}
	reply(w, map[string]any{"artifact": s.addArtifact(x.ID, body.Name, body.Description, sl.data)})
}

func (s *Server) replaceContent(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key string `json:"staging_object_key"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	sl, ok := s.takeStaging(w, a.WorkspaceID, body.Key)
	if !ok {
		return
	}
	s.rewrite(a, sl.data)
	reply(w, map[string]any{"artifact": a})
}

// rewrite gives an artifact new content: RECORDED again, updated_at
// moved, both changes emitted.
func (s *Server) rewrite(a *cairn.Artifact, content []byte) {
	delete(s.objects, a.ObjectKey)
	s.setContent(a, content)
	a.State = cairn.ArtifactRecorded
	_, a.UpdatedAt = s.nextID()
	s.emitArt(a)
	s.recount(a.WorkspaceID)
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states := q["state"]
	if len(states) == 0 {
		states = []string{string(cairn.ArtifactRecorded)}
	}
	s.mu.Lock()
	x, ok := s.workspace(w, r)
	if !ok {
		s.mu.Unlock()
		return
	}
	var rows []*cairn.Artifact
	for _, a := range s.arts {
		if a.WorkspaceID == x.ID && slices.Contains(states, string(a.State)) && (len(q["name"]) == 0 || slices.Contains(q["name"], a.Name)) {
			rows = append(rows, copyArt(a))
		}
	}
	s.mu.Unlock()
	slices.SortFunc(rows, func(a, b *cairn.Artifact) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	rows, err := page(rows, q)
	if err != nil {
		fail(w, err)
		return
	}
	out := map[string]any{}
	if len(rows) > 0 {
		out["artifacts"] = rows
	}
	reply(w, out)
}

func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	out := map[string]any{"artifact": a}
	if p, asked := r.URL.Query()["presign"]; asked && (p[0] == "" || p[0] == "true") {
		if a.State != cairn.ArtifactRecorded {
			fail(w, cairn.Errorf(cairn.ReasonObjectMissing, "artifact %s is 'MISSING_OBJECT'; only a 'RECORDED' artifact has a servable object", a.ID))
			return
		}
		sig := signature()
		s.sigs[a.ObjectKey] = sig
		out["get_url"] = s.storeBase() + "/store/" + a.ObjectKey + "?X-Amz-Signature=" + sig + "&response-content-disposition=attachment"
	}
	reply(w, out)
}

func (s *Server) deleteArtifact(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.arts[r.PathValue("id")]; ok {
		delete(s.arts, a.ID)
		s.emit(cairn.Event{Type: cairn.EventArtifactDeleted, ID: a.ID})
		s.recount(a.WorkspaceID)
	}
	reply(w, nil)
}

func (s *Server) renameArtifact(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if err := cairn.ValidateName("artifact", name); err != nil {
		fail(w, err.(*cairn.Error))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	if name != a.Name && s.artifactNamed(a.WorkspaceID, name) {
		fail(w, cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named '%s'", a.WorkspaceID, name))
		return
	}
	a.Name = name
	_, a.UpdatedAt = s.nextID()
	s.emitArt(a)
	reply(w, map[string]any{"artifact": a})
}

func (s *Server) describeArtifact(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok {
		return
	}
	a.Description = body.Description
	_, a.UpdatedAt = s.nextID()
	s.emitArt(a)
	reply(w, map[string]any{"artifact": a})
}

// storeError answers as S3 does: an XML error document.
func storeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code></Error>", code)
}

// signed checks the URL's signature for key.
func (s *Server) signed(r *http.Request, key string) bool {
	sig, ok := s.sigs[key]
	return ok && r.URL.Query().Get("X-Amz-Signature") == sig
}

// storePut is the presigned PUT: exactly the minted length and checksum
// header, and a body whose SHA-256 is that checksum (else BadDigest, as
// a store answers a file that changed after hashing).
func (s *Server) storePut(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	s.mu.Lock()
	sl, ok := s.staging[key]
	signed := s.signed(r, key)
	s.mu.Unlock()
	switch {
	case !ok || !signed:
		storeError(w, http.StatusForbidden, "SignatureDoesNotMatch")
		return
	case r.ContentLength != sl.size || r.Header.Get("x-amz-checksum-sha256") != sl.sum:
		storeError(w, http.StatusForbidden, "SignatureDoesNotMatch")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, sl.size+1))
	if err != nil {
		return // the client went away: nothing is stored
	}
	if int64(len(body)) != sl.size || digest(body) != sl.sum {
		storeError(w, http.StatusBadRequest, "BadDigest")
		return
	}
	s.mu.Lock()
	sl.data, sl.uploaded = body, true
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// storeGet is the presigned GET, with a single "bytes=A-B" range.
func (s *Server) storeGet(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	s.mu.Lock()
	body, ok := s.objects[key]
	signed := s.signed(r, key)
	s.mu.Unlock()
	switch {
	case !signed:
		storeError(w, http.StatusForbidden, "SignatureDoesNotMatch")
		return
	case !ok:
		storeError(w, http.StatusNotFound, "NoSuchKey")
		return
	}
	if from, to, ok := parseRange(r.Header.Get("Range"), int64(len(body))); ok {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(body)))
		w.Header().Set("Content-Length", strconv.FormatInt(to-from+1, 10))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write(body[from : to+1]) // the client may have gone
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body) // the client may have gone
}

func parseRange(h string, size int64) (int64, int64, bool) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok || size == 0 {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(spec, "-")
	from, err1 := strconv.ParseInt(a, 10, 64)
	to, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || from > to || from >= size {
		return 0, 0, false
	}
	return from, min(to, size-1), true
}
