package clienttest

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gabriel-vasile/mimetype"

	"github.com/cairn-dev/cairn"
)

// putURLTTL is how long a minted staging PUT is offered for.
const putURLTTL = 6 * time.Minute

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

func copyArt(a *cairn.Artifact) *cairn.Artifact {
	c := *a
	return &c
}

// store writes content under a fresh object key of a: the row takes its
// key, size, digest and sniffed type, as a register does. The caller holds
// mu.
func (s *Server) store(a *cairn.Artifact, content []byte) {
	delete(s.objects, a.ObjectKey)
	s.storeAt(a, s.nextKey(a.WorkspaceID), content)
}

func (s *Server) storeAt(a *cairn.Artifact, key string, content []byte) {
	a.ObjectKey = key
	s.objects[key] = append([]byte(nil), content...)
	sum := digest(content)
	a.Size, a.SHA256B64, a.MIMEType = int64(len(content)), &sum, mimetype.Detect(content).String()
}

// recount refreshes a workspace's artifact counts; a change is a
// workspace.upserted, as the server's triggers make it. The caller holds
// mu.
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

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) (*cairn.Artifact, bool) {
	a, ok := s.arts[r.PathValue("id")]
	if !ok {
		fail(w, cairn.Errorf(cairn.ReasonArtifactNotFound, "artifact '%s' does not exist", r.PathValue("id")))
	}
	return a, ok
}

// newArtifact runs what the routes that make an artifact share, in the
// server's order: the request's own check (checked), then workspace {id}
// and the name's being free in it; then make, which answers. Every refusal
// is answered.
func (s *Server) newArtifact(w http.ResponseWriter, r *http.Request, checked error, name string, make func(*cairn.Workspace)) {
	if refused(w, checked) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.workspace(w, r); ok && s.nameFree(w, x.ID, name, "") {
		make(x)
	}
}

// nameFree refuses a name another artifact of the workspace has; on
// failure it has answered.
func (s *Server) nameFree(w http.ResponseWriter, wsID, name, except string) bool {
	for _, a := range s.arts {
		if a.WorkspaceID == wsID && a.Name == name && a.ID != except {
			fail(w, cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named '%s'", wsID, name))
			return false
		}
	}
	return true
}

// tooLarge refuses an object over the size cap; on failure it has
// answered.
func (s *Server) tooLarge(w http.ResponseWriter, size int64) bool {
	if s.maxObject > 0 && size > s.maxObject {
		fail(w, cairn.Errorf(cairn.ReasonObjectTooLarge, "%d bytes is over the %d byte size cap", size, s.maxObject))
		return true
	}
	return false
}

func (s *Server) mintStaging(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Size        int64  `json:"size"`
		SHA256B64   string `json:"sha256_b64"`
		ContentType string `json:"content_type"`
		Multipart   bool   `json:"multipart"`
	}
	if !decode(w, r, &body) {
		return
	}
	req := cairn.StagingRequest{Size: body.Size, SHA256B64: body.SHA256B64, ContentType: body.ContentType, Multipart: body.Multipart}
	if refused(w, req.Validate()) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	switch {
	case !ok, s.tooLarge(w, body.Size):
		return
	case body.SHA256B64 == "":
		fail(w, cairn.Internal("clienttest has no multipart uploads", nil))
		return
	}
	key := s.nextKey(x.ID)
	s.staging[key] = &slot{wsID: x.ID, size: body.Size, sum: body.SHA256B64}
	sig := signature()
	s.sigs[key] = sig
	reply(w, map[string]any{"staging": map[string]any{
		"staging_object_key": key, "put_url": s.storeBase() + "/store/" + key + "?X-Amz-Signature=" + sig,
		"expires_at": cairn.Timestamp(s.clock()).Add(putURLTTL),
	}})
}

// takeStaging consumes the uploaded slot of a key minted for the
// workspace; on failure it has answered. A key naming another workspace is
// invalid, a key never uploaded not found.
func (s *Server) takeStaging(w http.ResponseWriter, wsID, key string) (*slot, bool) {
	if !strings.Contains(key, "/"+wsID+"/") {
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

// stagedBody is what a register or a replace sends for its content.
type stagedBody struct {
	Key    string              `json:"staging_object_key"`
	Upload *cairn.StagedUpload `json:"upload"`
}

func (s *Server) registerArtifact(w http.ResponseWriter, r *http.Request) {
	var body struct {
		stagedBody
		Name        string  `json:"name"`
		Description *string `json:"description"`
	}
	if !decode(w, r, &body) {
		return
	}
	c := cairn.ArtifactCreate{StagingKey: body.Key, Upload: body.Upload, Name: body.Name, Description: body.Description}
	s.newArtifact(w, r, c.Validate(), c.Name, func(x *cairn.Workspace) {
		if sl, ok := s.takeStaging(w, x.ID, c.StagingKey); ok {
			a := s.addArtifact(x.ID, c.Name, c.StagingKey, sl.data, func(a *cairn.Artifact) { a.Description = c.Description })
			reply(w, map[string]any{"artifact": a})
		}
	})
}

func (s *Server) replaceContent(w http.ResponseWriter, r *http.Request) {
	var body stagedBody
	if !decode(w, r, &body) {
		return
	}
	if refused(w, (cairn.Staged{Key: body.Key, Upload: body.Upload}).Validate()) {
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
	delete(s.objects, a.ObjectKey)
	s.storeAt(a, body.Key, sl.data)
	s.rewritten(a)
	reply(w, map[string]any{"artifact": a})
}

// rewritten records new content of a: RECORDED again, updated_at moved,
// both changes announced. The caller holds mu.
func (s *Server) rewritten(a *cairn.Artifact) {
	a.State = cairn.ArtifactRecorded
	a.UpdatedAt = s.stamp()
	s.emitArt(a)
	s.recount(a.WorkspaceID)
}

// artifactFilter reads a workspace's artifact list query.
func artifactFilter(wsID string, q map[string][]string) (cairn.ArtifactFilter, error) {
	p, err := pageOf(q)
	if err != nil {
		return cairn.ArtifactFilter{}, err
	}
	f := cairn.ArtifactFilter{WorkspaceID: wsID, Names: q["name"], Page: p}
	for _, v := range q["state"] {
		state, err := cairn.ParseArtifactState(v)
		if err != nil {
			return f, err
		}
		f.States = append(f.States, state)
	}
	if len(f.States) == 0 {
		f.States = []cairn.ArtifactState{cairn.ArtifactRecorded}
	}
	return f, validNames("artifact", f.Names)
}

func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := artifactFilter(r.PathValue("id"), q)
	if refused(w, err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.workspace(w, r)
	if !ok {
		return
	}
	var rows []*cairn.Artifact
	for _, a := range s.arts {
		if a.WorkspaceID == x.ID && slices.Contains(f.States, a.State) && (len(f.Names) == 0 || slices.Contains(f.Names, a.Name)) {
			rows = append(rows, a)
		}
	}
	answerList(w, r, s.listTag(artifactList(x.ID), q), "artifacts", rows, f.Page,
		func(a *cairn.Artifact) (time.Time, string) { return a.CreatedAt, a.ID })
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
		if !recorded(w, a) {
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
		s.removeArtifact(a)
	}
	reply(w, nil)
}

// removeArtifact deletes a's row and object and announces it. The caller
// holds mu.
func (s *Server) removeArtifact(a *cairn.Artifact) {
	delete(s.arts, a.ID)
	delete(s.objects, a.ObjectKey)
	s.bump(artifactList(a.WorkspaceID))
	s.emit(cairn.Event{Type: cairn.EventArtifactDeleted, ID: a.ID})
	s.recount(a.WorkspaceID)
}

// editArtifact runs edit on artifact {id} and answers the changed row; an
// edit that refuses has answered and returns false.
func (s *Server) editArtifact(w http.ResponseWriter, r *http.Request, edit func(*cairn.Artifact) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.artifact(w, r)
	if !ok || !edit(a) {
		return
	}
	a.UpdatedAt = s.stamp()
	s.emitArt(a)
	reply(w, map[string]any{"artifact": a})
}

func (s *Server) renameArtifact(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if refused(w, cairn.ValidateName("artifact", name)) {
		return
	}
	s.editArtifact(w, r, func(a *cairn.Artifact) bool {
		if !s.nameFree(w, a.WorkspaceID, name, a.ID) {
			return false
		}
		a.Name = name
		return true
	})
}

func (s *Server) describeArtifact(w http.ResponseWriter, r *http.Request) {
	if d, ok := description(w, r); ok {
		s.editArtifact(w, r, func(a *cairn.Artifact) bool { a.Description = d; return true })
	}
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
