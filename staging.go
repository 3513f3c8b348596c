package cairn

import (
	"encoding/base64"
	"encoding/hex"
)

// Validate checks the declared size and digest. The digest must be the
// standard padded base64 of exactly 32 bytes: the store compares it with the
// body, so a wrong form would only fail later, at the PUT, obscurely.
func (r StagingRequest) Validate() error {
	if r.Size < 0 {
		return Errorf(ReasonInvalidParameters, "size must be 0 or more, not %d", r.Size)
	}
	if err := validateContentType(r.ContentType); err != nil {
		return err
	}
	switch {
	case r.Stream && (r.Multipart || r.SHA256B64 != ""):
		return Errorf(ReasonInvalidParameters, "stream takes neither sha256_b64 nor multipart")
	case r.SHA256B64 != "":
		return ValidateSHA256B64(r.SHA256B64)
	case !r.Multipart && !r.Stream:
		return Errorf(ReasonInvalidParameters, "sha256_b64 is required")
	}
	return nil
}

// Validate checks what a register takes before anything is looked up: the
// upload to complete, a staging key, the name and the description.
func (c ArtifactCreate) Validate() error {
	if err := c.Upload.Validate(); err != nil {
		return err
	}
	if err := validatePutDigest(c.Upload, c.SHA256B64); err != nil {
		return err
	}
	if err := RequireParam("staging_object_key", c.StagingKey); err != nil {
		return err
	}
	if err := ValidateName("artifact", c.Name); err != nil {
		return err
	}
	return ValidateDescription(c.Description)
}

// Validate checks what a replace takes: a staging key, and the upload it
// completes when it was a multipart one.
func (s Staged) Validate() error {
	if err := RequireParam("staging_object_key", s.Key); err != nil {
		return err
	}
	if err := s.Upload.Validate(); err != nil {
		return err
	}
	return validatePutDigest(s.Upload, s.SHA256B64)
}

// validatePutDigest checks a single PUT's declared SHA-256; a multipart
// upload declares its own in the upload.
func validatePutDigest(upload *StagedUpload, sum string) error {
	switch {
	case sum == "":
		return nil
	case upload != nil:
		return Errorf(ReasonInvalidParameters, "a multipart upload's sha256_b64 goes with its upload_id")
	}
	return ValidateSHA256B64(sum)
}

// RequireParam refuses an empty required parameter, named as the API
// names it.
func RequireParam(name, value string) error {
	if value == "" {
		return Errorf(ReasonInvalidParameters, "%s is required", name)
	}
	return nil
}

// Validate checks a batch of parts: numbers in range and each once, sizes
// positive, digests of the PUT's form.
func (r PartRequest) Validate() error {
	if r.StagingKey == "" || r.UploadID == "" {
		return Errorf(ReasonInvalidParameters, "staging_object_key and upload_id are required")
	}
	if err := validateUploadID(r.UploadID); err != nil {
		return err
	}
	if len(r.Parts) == 0 || len(r.Parts) > MaxPartBatch {
		return Errorf(ReasonInvalidParameters, "ask for 1 to %d parts at a time, not %d", MaxPartBatch, len(r.Parts))
	}
	seen := make(map[int]bool, len(r.Parts))
	for _, p := range r.Parts {
		if p.Number < 1 || p.Number > MaxParts || seen[p.Number] {
			return Errorf(ReasonInvalidParameters, "part_number %d is out of 1…%d or repeated", p.Number, MaxParts)
		}
		seen[p.Number] = true
		if p.Size < 1 || p.Size > MaxPartSize {
			return Errorf(ReasonInvalidParameters, "part %d is %d bytes; a part holds 1 to %d", p.Number, p.Size, int64(MaxPartSize))
		}
		if err := ValidateSHA256B64(p.SHA256B64); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the upload a register or replace completes.
func (u *StagedUpload) Validate() error {
	if u == nil {
		return nil
	}
	if err := validateUploadID(u.ID); err != nil {
		return err
	}
	if u.Size < 1 {
		return Errorf(ReasonInvalidParameters, "size, the whole object's, is required with upload_id")
	}
	if u.SHA256B64 != "" {
		return ValidateSHA256B64(u.SHA256B64)
	}
	return nil
}

// The S3 limits a multipart upload lives within.
const (
	MaxParts    = 10000
	MinPartSize = 5 << 20
	MaxPartSize = 5 << 30
)

// maxUploadID bounds an upload ID, which the store chose and the client
// echoes; it ends up in a store request, so it is printable ASCII.
const maxUploadID = 1024

func validateUploadID(id string) error {
	if id == "" || len(id) > maxUploadID {
		return Errorf(ReasonInvalidParameters, "upload_id must be 1 to %d bytes", maxUploadID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= 0x20 || id[i] > 0x7e {
			return Errorf(ReasonInvalidParameters, "upload_id must be printable ASCII without spaces")
		}
	}
	return nil
}

// maxContentType bounds the optional content type signed into a PUT.
const maxContentType = 255

// validateContentType refuses a content type that no client could send as
// the signed header: too long, or holding control or non-ASCII bytes.
func validateContentType(ct string) error {
	if len(ct) > maxContentType {
		return Errorf(ReasonInvalidParameters, "content_type is %d bytes; at most %d are allowed", len(ct), maxContentType)
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return Errorf(ReasonInvalidParameters, "content_type must be printable ASCII, as an HTTP header value is")
		}
	}
	return nil
}

// ValidateSHA256B64 checks that s is the standard padded base64 of a raw
// 32-byte SHA-256 digest.
func ValidateSHA256B64(s string) error {
	if len(s) == 64 {
		if _, err := hex.DecodeString(s); err == nil {
			return Errorf(ReasonInvalidChecksum,
				"sha256_b64 must be the base64 of the raw 32-byte SHA-256 digest, not hex")
		}
	}
	// The decoder skips CR and LF even in strict mode; re-encoding refuses
	// them, since the value becomes a signed header of the PUT.
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) != 32 || base64.StdEncoding.EncodeToString(raw) != s {
		return Errorf(ReasonInvalidChecksum,
			"sha256_b64 must be the standard padded base64 of the raw 32-byte SHA-256 digest")
	}
	return nil
}
