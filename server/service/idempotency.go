package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
)

// KeyRetention is how long the first answer to an Idempotency-Key is kept.
const KeyRetention = 24 * time.Hour

// keyPoll bounds the wait between two looks at a key whose first request
// is still running.
const (
	keyPollFirst = 20 * time.Millisecond
	keyPollMax   = 500 * time.Millisecond
)

// KeyClaim names one request carrying an Idempotency-Key: the caller's
// key, what the request was (a digest of its method, path, query and
// body) and how long its first run may take before a repeat takes over.
type KeyClaim struct {
	Actor, Key, Fingerprint string
	Lease                   time.Duration
}

// KeyedAnswer is the first answer to a key, or what is known of it.
type KeyedAnswer struct {
	Fingerprint string
	Done        bool // Status and Body are the first request's answer
	Status      int
	Body        []byte
}

// KeyStore keeps the first answers to Idempotency-Keys.
type KeyStore interface {
	// ClaimKey makes the caller the key's first request (true), or
	// returns what the key holds.
	ClaimKey(ctx context.Context, k KeyClaim) (bool, *KeyedAnswer, error)
	// CompleteKey keeps the first request's answer.
	CompleteKey(ctx context.Context, k KeyClaim, a KeyedAnswer) error
	// ReleaseKey gives up an unanswered claim.
	ReleaseKey(ctx context.Context, k KeyClaim) error
}

// Once runs do for the first request carrying the caller's key, keeps its
// answer and gives it to every repeat, which waits while the first one
// runs; replayed reports a repeat. A repeat of the key for another request
// is idempotency_conflict; a repeat whose deadline passes while the first
// still runs is idempotency_in_progress. An answer that says to try again
// (a 5xx, a 429) is not kept: a repeat runs afresh.
func (s *Service) Once(ctx context.Context, key, fingerprint string, lease time.Duration, do func() KeyedAnswer) (KeyedAnswer, bool, error) {
	if err := cairn.ValidateIdempotencyKey(key); err != nil {
		return KeyedAnswer{}, false, err
	}
	k := KeyClaim{Actor: actorName(ctx), Key: key, Fingerprint: fingerprint, Lease: lease}
	for wait := keyPollFirst; ; wait = min(2*wait, keyPollMax) {
		claimed, prior, err := s.store.ClaimKey(ctx, k)
		switch {
		case err != nil:
			return KeyedAnswer{}, false, err
		case claimed:
			return s.runKeyed(k, do), false, nil
		case prior.Fingerprint == "":
			continue // deleted meanwhile: claim again
		case prior.Fingerprint != fingerprint:
			return KeyedAnswer{}, false, cairn.Errorf(cairn.ReasonIdempotencyConflict,
				"this Idempotency-Key was sent with another request; a key names one request")
		case prior.Done:
			return *prior, true, nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return KeyedAnswer{}, false, &cairn.Error{Reason: cairn.ReasonIdempotencyInProgress, Err: ctx.Err(),
				Detail: "the first request with this Idempotency-Key is still running; repeat it later for its answer"}
		}
	}
}

// runKeyed runs the first request and keeps its answer, or releases the
// key for an answer that says to try again. The record outlives the
// request's context: the work is done whether or not its client waited.
func (s *Service) runKeyed(k KeyClaim, do func() KeyedAnswer) KeyedAnswer {
	a := do()
	a.Fingerprint = k.Fingerprint
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if a.Status >= 500 || a.Status == 429 {
		err = s.store.ReleaseKey(ctx, k)
	} else {
		err = s.store.CompleteKey(ctx, k, a)
	}
	if err != nil {
		// A repeat then waits out the lease and runs afresh.
		s.log.Error("keep an idempotency key's answer", "err", err)
	}
	return a
}
