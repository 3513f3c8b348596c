package cairn

// HeaderIdempotencyKey names the header a creating POST may carry: a
// repeat of the key gets the first answer instead of a second object.
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderIdempotentReplayed marks an answer that is a repeat's: the first
// answer to its key, kept.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// MaxIdempotencyKeyBytes bounds a key.
const MaxIdempotencyKeyBytes = 255

// ValidateIdempotencyKey checks a key: 1 to 255 printable ASCII
// characters, so that it can be stored and logged as it is.
func ValidateIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyBytes {
		return Errorf(ReasonInvalidParameters, "an Idempotency-Key is 1 to %d characters", MaxIdempotencyKeyBytes)
	}
	for i := range len(key) {
		if key[i] < 0x21 || key[i] > 0x7e {
			return Errorf(ReasonInvalidParameters, "an Idempotency-Key is printable ASCII without spaces")
		}
	}
	return nil
}
