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
	if r.SHA256B64 == "" {
		return Errorf(ReasonInvalidParameters, "sha256_b64 is required")
	}
	if err := validateContentType(r.ContentType); err != nil {
		return err
	}
	return ValidateSHA256B64(r.SHA256B64)
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
