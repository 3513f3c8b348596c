package cairn

import "unicode/utf8"

// Limits that bound what a caller can make cairn store or return.
const (
	MaxNameLength        = 128
	MaxDescriptionBytes  = 4096
	MaxListLimit         = 1000
	MaxUnpagedListLength = 10000
)

// ValidateName checks the name rule shared by workspaces and artifacts:
// 1 to 128 ASCII letters, digits, '-' or '_'. kind ("workspace", "artifact")
// only shapes the message.
func ValidateName(kind, name string) error {
	if name == "" {
		return Errorf(ReasonInvalidName, "%s name must not be empty", kind)
	}
	if len(name) > MaxNameLength {
		return Errorf(ReasonInvalidName, "%s name is %d characters long; at most %d are allowed",
			kind, utf8.RuneCountInString(name), MaxNameLength)
	}
	for _, c := range []byte(name) {
		if !isNameByte(c) {
			return Errorf(ReasonInvalidName,
				"%s name %q may only contain ASCII letters, digits, '-' and '_'", kind, name)
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// ValidateDescription checks the description limit. A nil description is
// always valid: it clears the stored one.
func ValidateDescription(d *string) error {
	if d != nil && len(*d) > MaxDescriptionBytes {
		return Errorf(ReasonInvalidParameters, "description is %d bytes; at most %d are allowed",
			len(*d), MaxDescriptionBytes)
	}
	return nil
}

// Page selects a window of a list ordered by creation time, then ID.
// Limit 0 means "all rows", which cairn refuses past MaxUnpagedListLength
// rather than truncate silently.
type Page struct {
	Offset int
	Limit  int
}

// Validate checks the bounds of the page.
func (p Page) Validate() error {
	if p.Offset < 0 {
		return Errorf(ReasonInvalidQuery, "'offset' must be 0 or more")
	}
	if p.Limit < 0 || p.Limit > MaxListLimit {
		return Errorf(ReasonInvalidQuery, "'limit' must be between 1 and %d", MaxListLimit)
	}
	return nil
}

// ErrListTooLarge is returned by an unpaged list that matches too many rows.
func ErrListTooLarge() error {
	return Errorf(ReasonListTooLarge,
		"more than %d rows match; page with 'limit' (at most %d) and 'offset'",
		MaxUnpagedListLength, MaxListLimit)
}
